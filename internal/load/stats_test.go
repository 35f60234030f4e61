package load

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketBoundsContainValue(t *testing.T) {
	for _, v := range []uint64{0, 1, 63, 127, 128, 129, 255, 256, 1000, 1 << 20, 1<<40 + 12345, 1 << 63, ^uint64(0)} {
		i := bucketOf(v)
		if i < 0 || i >= histBuckets {
			t.Fatalf("bucketOf(%d) = %d, out of range", v, i)
		}
		lo, hi := bucketBounds(i)
		if v < lo || v > hi {
			t.Errorf("value %d in bucket %d with bounds [%d, %d]", v, i, lo, hi)
		}
		if lo >= histExact && float64(hi-lo+1) > float64(lo)/histSub {
			t.Errorf("bucket %d [%d, %d] wider than 1/%d of its lower bound", i, lo, hi, histSub)
		}
	}
}

func TestQuantileMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name string
		gen  func(i int) time.Duration
		n    int
	}{
		{"constant", func(int) time.Duration { return 3 * time.Millisecond }, 1000},
		{"small exact values", func(i int) time.Duration { return time.Duration(i % 100) }, 1000},
		{"uniform", func(int) time.Duration { return time.Duration(rng.Int64N(int64(50 * time.Millisecond))) }, 10000},
		{"exponential", func(int) time.Duration { return time.Duration(rng.ExpFloat64() * float64(time.Millisecond)) }, 10000},
		{"bimodal with outliers", func(i int) time.Duration {
			if i%100 == 0 {
				return time.Second + time.Duration(i)
			}
			return 200*time.Microsecond + time.Duration(i)
		}, 5000},
		{"single", func(int) time.Duration { return 42 * time.Microsecond }, 1},
		{"two", func(i int) time.Duration { return time.Duration(i+1) * time.Millisecond }, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h Histogram
			vals := make([]time.Duration, tc.n)
			for i := range vals {
				vals[i] = tc.gen(i)
				h.Record(vals[i])
			}
			slices.Sort(vals)
			for _, q := range []float64{0.001, 0.5, 0.9, 0.99, 0.999, 1} {
				got, want := h.Quantile(q), exactQuantile(vals, q)
				if got < want || float64(got) > float64(want)*(1+1.0/histSub)+1 {
					t.Errorf("Quantile(%v) = %v, exact %v: outside [exact, exact*(1+1/%d)]", q, got, want, histSub)
				}
			}
			if h.Count() != uint64(tc.n) || h.Min() != vals[0] || h.Max() != vals[len(vals)-1] {
				t.Errorf("count/min/max = %d/%v/%v, want %d/%v/%v", h.Count(), h.Min(), h.Max(), tc.n, vals[0], vals[len(vals)-1])
			}
		})
	}
}

func TestExactQuantileNearestRank(t *testing.T) {
	vals := []time.Duration{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	tests := []struct {
		q    float64
		want time.Duration
	}{{0, 10}, {0.1, 10}, {0.11, 20}, {0.5, 50}, {0.51, 60}, {0.99, 100}, {1, 100}, {2, 100}}
	for _, tc := range tests {
		if got := exactQuantile(vals, tc.q); got != tc.want {
			t.Errorf("exactQuantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := exactQuantile(nil, 0.5); got != 0 {
		t.Errorf("exactQuantile(nil) = %v, want 0", got)
	}
}

func TestHistogramMergeEqualsCombined(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var a, b, all Histogram
	for i := range 3000 {
		d := time.Duration(rng.Int64N(int64(time.Second)))
		all.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	var empty Histogram
	a.Merge(&b)
	a.Merge(&empty)
	if a != all {
		t.Fatalf("merged histogram differs from the combined one")
	}
	if empty.Merge(&all); empty.Min() != all.Min() || empty.Quantile(0.5) != all.Quantile(0.5) {
		t.Fatalf("merge into empty lost min or quantiles")
	}
}

func TestHistogramEmptyAndNegative(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Mean() != 0 || h.Max() != 0 {
		t.Fatal("empty histogram should report zeros")
	}
	h.Record(-time.Second)
	if h.Quantile(1) != 0 || h.Count() != 1 {
		t.Fatalf("negative duration: quantile %v count %d, want 0 and 1", h.Quantile(1), h.Count())
	}
}
