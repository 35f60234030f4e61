package partition

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestFinder(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	t.Run("uniform keys split near the middle", func(t *testing.T) {
		var f finder
		for range 5000 {
			k := fmt.Sprintf("k%03d", rnd.IntN(1000))
			f.record(rnd, k, k, false)
		}
		key, ok := f.key()
		if !ok || key < "k250" || key > "k750" {
			t.Fatalf("split key %q %v, want one near k500", key, ok)
		}
	})
	t.Run("append-only keys never split", func(t *testing.T) {
		var f finder
		for i := range 5000 {
			k := fmt.Sprintf("k%06d", i)
			f.record(rnd, k, k, false)
		}
		if key, ok := f.key(); ok {
			t.Fatalf("append-only load split at %q", key)
		}
	})
	t.Run("one partition never splits", func(t *testing.T) {
		var f finder
		for range 5000 {
			f.record(rnd, "hot", "hot", false)
		}
		if key, ok := f.key(); ok {
			t.Fatalf("single-key load split at %q", key)
		}
	})
	t.Run("table scans span every key", func(t *testing.T) {
		var f finder
		for i := range 5000 {
			if i%2 == 0 {
				k := fmt.Sprintf("k%03d", rnd.IntN(1000))
				f.record(rnd, k, k, false)
			} else {
				f.record(rnd, "", "", true)
			}
		}
		if key, ok := f.key(); ok {
			t.Fatalf("split at %q although half the load spans it", key)
		}
	})
}

// The reservoir keeps every request with the same chance: after 40 requests, each of them is
// one of the 20 samples with probability 1/2, the first 20 as much as the 21st or the 40th.
func TestFinderSamplesUniformly(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	const trials, requests = 2000, 40
	var kept [requests]int
	for range trials {
		var f finder
		for i := range requests {
			k := fmt.Sprintf("k%02d", i)
			f.record(rnd, k, k, false)
		}
		for _, s := range f.samples {
			var i int
			if _, err := fmt.Sscanf(s.key, "k%02d", &i); err != nil {
				t.Fatalf("sample %q", s.key)
			}
			kept[i]++
		}
	}
	for i, n := range kept {
		if share := float64(n) / trials; share < 0.4 || share > 0.6 {
			t.Errorf("request %d kept in %.0f%% of the samples, want about 50%%", i+1, 100*share)
		}
	}
}

// Once the samples are full, each request counts left of a sample (it ends before it), right
// of it (it starts at or after it) or across it.
func TestFinderCountsSides(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	f := finder{n: 1 << 50} // a request replaces a sample with negligible probability
	for i, k := range []string{"b", "d", "f"} {
		f.samples[i] = splitSample{key: k}
	}
	f.record(rnd, "c", "e", false) // b: right, d: across, f: left
	f.record(rnd, "a", "a", false) // left of all three
	f.record(rnd, "d", "", true)   // b, d: right; f: across
	f.record(rnd, "f", "f", false) // right of all three
	want := []splitSample{{"b", 1, 3, 0}, {"d", 1, 2, 1}, {"f", 2, 1, 1}}
	for i, w := range want {
		if f.samples[i] != w {
			t.Errorf("sample %d: %+v, want %+v", i, f.samples[i], w)
		}
	}
}

// A query whose span ends exactly at a sample's key reads a partition on each side of it: it
// counts across the sample, not left of it.
func TestFinderQueryEndingAtSample(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	f := finder{n: 1 << 50}
	f.samples[0] = splitSample{key: "d"}
	f.record(rnd, "c", "d", false) // across
	f.record(rnd, "a", "c", false) // left
	f.record(rnd, "d", "d", false) // right
	if want := (splitSample{"d", 1, 1, 1}); f.samples[0] != want {
		t.Fatalf("sample %+v, want %+v", f.samples[0], want)
	}
}

// key picks the sample with the lowest imbalance plus share of spanning requests among those
// seen by at least finderMinCount requests, whose imbalance is under finderMaxImbalance and
// whose spanning share is under finderMaxContained.
func TestFinderKeyEdges(t *testing.T) {
	for _, c := range []struct {
		name    string
		samples []splitSample
		want    string // "" for no split
	}{
		{"exactly the minimum count", []splitSample{{"a", 12, 12, 8}}, "a"},
		{"one request short of it", []splitSample{{"a", 12, 12, 7}}, ""},
		{"balanced, nothing across", []splitSample{{"a", 16, 16, 0}}, "a"},
		{"only spanning requests", []splitSample{{"a", 0, 0, 40}}, ""},
		{"imbalance just under the limit", []splitSample{{"a", 41, 25, 0}}, "a"},
		{"imbalance at the limit", []splitSample{{"a", 20, 12, 0}}, ""},
		{"spanning share at the limit", []splitSample{{"a", 16, 16, 32}}, ""},
		{"spanning share just under it", []splitSample{{"a", 17, 17, 33}}, "a"},
		{"all on one side", []splitSample{{"a", 0, 40, 0}}, ""},
		{"less spanning beats better balance", []splitSample{{"a", 50, 50, 40}, {"b", 60, 40, 0}}, "b"},
		{"better balance wins", []splitSample{{"a", 60, 40, 0}, {"b", 50, 50, 0}, {"c", 40, 60, 0}}, "b"},
	} {
		var f finder
		f.n = len(c.samples)
		copy(f.samples[:], c.samples)
		key, ok := f.key()
		if key != c.want || ok != (c.want != "") {
			t.Errorf("%s: key %q %v, want %q", c.name, key, ok, c.want)
		}
	}
}
