package partition

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// The Space-Saving guarantees: every key heavier than total/k is tracked, and each tracked
// count overestimates its key's true weight by at most err (and never underestimates it).
func TestSketchErrorBound(t *testing.T) {
	const k = 64
	s := newSketch(k)
	rnd := rand.New(rand.NewPCG(1, 2))
	truth := map[string]uint64{}
	// A Zipf-like stream over 100,000 keys: a few heavy hitters, a long tail.
	z := rand.NewZipf(rnd, 1.2, 1, 100_000)
	for range 200_000 {
		key := "pk" + strconv.FormatUint(z.Uint64(), 10)
		truth[key]++
		s.add(key, 1)
	}
	if len(s.heap) != k || len(s.byKey) != k {
		t.Fatalf("sketch holds %d entries (%d keys), want %d", len(s.heap), len(s.byKey), k)
	}
	for key, n := range truth {
		e := s.get(key)
		if n > s.total/k && e == nil {
			t.Errorf("key %s with weight %d > total/k = %d is not tracked", key, n, s.total/k)
		}
		if e != nil && (e.count < n || e.count-e.err > n) {
			t.Errorf("key %s: count %d err %d, true weight %d", key, e.count, e.err, n)
		}
	}
	for i := range s.heap {
		if s.heap[i].pos != i {
			t.Fatalf("heap position %d recorded as %d", i, s.heap[i].pos)
		}
		if l := 2*i + 1; l < len(s.heap) && s.heap[l].count < s.heap[i].count {
			t.Fatalf("heap order broken at %d", i)
		}
	}
}

// A key first seen while the sketch has room is exact.
func TestSketchExactWhileRoom(t *testing.T) {
	s := newSketch(4)
	for i := range 10 {
		s.add("a", 1)
		if i%2 == 0 {
			s.add("b", 2)
		}
	}
	if e := s.get("a"); e.count != 10 || e.err != 0 {
		t.Fatalf("a: %+v", e)
	}
	if e := s.get("b"); e.count != 10 || e.err != 0 {
		t.Fatalf("b: %+v", e)
	}
}

// With weights, the heap keeps the smallest count at its root after every update (a new key
// lighter than its parent moves up, a key that grows moves down), so a full sketch always
// gives up a key of the smallest count.
func TestSketchWeightedHeap(t *testing.T) {
	s := newSketch(16)
	rnd := rand.New(rand.NewPCG(9, 10))
	for i := range 2000 {
		key := "k" + strconv.Itoa(rnd.IntN(50))
		var smallest uint64
		if len(s.heap) == s.k && s.get(key) == nil {
			smallest = s.heap[0].count
			for _, e := range s.heap {
				smallest = min(smallest, e.count)
			}
		}
		w := uint64(1 + rnd.IntN(100))
		e := s.add(key, w)
		if smallest > 0 && (e.err != smallest || e.count != smallest+w) {
			t.Fatalf("add %d: %s took a slot of count %d (err %d), want the smallest, %d", i, key, e.count-w, e.err, smallest)
		}
		for j, e := range s.heap {
			if e.pos != j {
				t.Fatalf("add %d: heap position %d recorded as %d", i, j, e.pos)
			}
			if j > 0 && s.heap[(j-1)/2].count > e.count {
				t.Fatalf("add %d: heap order broken at %d", i, j)
			}
		}
	}
}
