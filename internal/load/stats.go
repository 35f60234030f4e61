package load

import (
	"math"
	"math/bits"
	"time"
)

// Histogram layout: values below 2*histSub are counted exactly; above that, each power-of-two
// range [2^k, 2^(k+1)) is split into histSub equal buckets, so a bucket is at most 1/histSub of
// its lower bound wide. Values are nanoseconds.
const (
	histSubBits = 6
	histSub     = 1 << histSubBits // 64 buckets per octave
	histExact   = 2 * histSub      // values below this have their own bucket
	histBuckets = histExact + (64-histSubBits-1)*histSub
)

// Histogram records latencies in fixed memory. The zero value is ready to use; it is not safe for
// concurrent use (each worker keeps its own and the runner merges them).
type Histogram struct {
	counts   [histBuckets]uint64
	n        uint64
	sum      float64 // nanoseconds; float so long runs cannot overflow
	min, max uint64
}

// bucketOf returns the bucket index of v.
func bucketOf(v uint64) int {
	if v < histExact {
		return int(v)
	}
	e := bits.Len64(v) - histSubBits - 1 // >= 1
	m := v >> uint(e)                    // in [histSub, 2*histSub)
	return histExact + (e-1)*histSub + int(m-histSub)
}

// bucketBounds returns the inclusive lower and upper value of bucket i.
func bucketBounds(i int) (lo, hi uint64) {
	if i < histExact {
		return uint64(i), uint64(i)
	}
	e := (i-histExact)/histSub + 1
	m := uint64((i-histExact)%histSub + histSub)
	lo = m << uint(e)
	return lo, lo + (1 << uint(e)) - 1
}

// Record adds one observation; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[bucketOf(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
}

// Merge adds all observations of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of observations.
func (h *Histogram) Count() uint64 { return h.n }

// Mean is the exact arithmetic mean (0 when empty).
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(math.Round(h.sum / float64(h.n)))
}

// Min and Max are exact (0 when empty).
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Max is the largest observation (0 when empty).
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Quantile returns the nearest-rank q-quantile (0 < q <= 1): the smallest recorded value v such
// that at least ceil(q*n) observations are <= v. The answer is the upper bound of v's bucket
// clamped to the exact max, so it never understates and is within 1/64 of the true value.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := rankFor(q, h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			_, hi := bucketBounds(i)
			return time.Duration(min(max(hi, h.min), h.max))
		}
	}
	return time.Duration(h.max)
}

// rankFor is ceil(q*n) clamped to [1, n].
func rankFor(q float64, n uint64) uint64 {
	r := math.Ceil(q * float64(n))
	switch {
	case math.IsNaN(r) || r < 1:
		return 1
	case r > float64(n):
		return n
	}
	return uint64(r)
}

// exactQuantile is the nearest-rank quantile of an ascending slice; the tests use it as the oracle.
func exactQuantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[rankFor(q, uint64(len(sorted)))-1]
}
