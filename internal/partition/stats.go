package partition

import (
	"math/bits"
	"time"
)

// latBuckets are powers of two of microseconds: bucket i holds latencies below 2^i µs.
const latBuckets = 26

func latBucket(d time.Duration) int {
	us := uint64(max(d.Microseconds(), 0))
	return min(bits.Len64(us), latBuckets-1)
}

// tableStats are a table's totals since it was first seen.
type tableStats struct {
	kinds              [numKinds]uint64
	bytesIn, bytesOut  uint64
	lat                [latBuckets]uint64
	errors5xx          uint64
	queries            uint64
	partitionsReturned uint64
	// touched counts requests by the range partitions they touched: 0, 1, 2, 3, 4 or more.
	touched [5]uint64
}

// percentile estimates the p-th latency percentile from the buckets (the bucket's upper
// bound, so within a factor of two).
func percentile(h *[latBuckets]uint64, p float64) time.Duration {
	var n uint64
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return 0
	}
	want := uint64(p*float64(n) + 0.5)
	var seen uint64
	for i, c := range h {
		seen += c
		if seen >= max(want, 1) {
			return time.Duration(uint64(1)<<uint(i)) * time.Microsecond
		}
	}
	return 0
}
