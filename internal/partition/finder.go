package partition

import (
	"math"
	"math/rand/v2"

	"github.com/tablo/tablo/internal/keys"
)

// The split finder follows CockroachDB's load-based splitting: while a range is engaged (its
// server is over capacity), keep a reservoir sample of the partition keys it serves; each
// sample then counts the requests that fall left of it, right of it, or (a query's span)
// across it. The split key is the sample that divides the load best, if it divides it well
// enough. An append-only or prepend-only load never qualifies: every request after a sample
// lands on the same side of it, which is the point the guides make about such keys.
const (
	finderSamples = 20
	// finderMinCount is how many requests a sample must have seen before it is considered.
	finderMinCount = 32
	// finderMaxImbalance rejects splits whose sides differ by more than this share.
	finderMaxImbalance = 0.25
	// finderMaxContained rejects split keys that too many queries span.
	finderMaxContained = 0.5
)

type splitSample struct {
	key                    string
	left, right, contained int
}

type finder struct {
	samples [finderSamples]splitSample
	n       int
	start   int64 // tick the finder started
}

// record notes a request over partition keys [lo, hi] (lo == hi for one partition; hi == ""
// with open set for "to the end").
func (f *finder) record(rnd *rand.Rand, lo, hi string, open bool) {
	i := f.n
	f.n++
	if i >= finderSamples {
		i = rnd.IntN(f.n)
	}
	if i < finderSamples {
		f.samples[i] = splitSample{key: lo}
		return
	}
	for j := range f.samples {
		s := &f.samples[j]
		switch {
		case keys.CompareOrdinal(s.key, lo) <= 0:
			s.right++ // the whole request is at or after the split key
		case !open && keys.CompareOrdinal(s.key, hi) > 0:
			s.left++
		default:
			s.contained++
		}
	}
}

// key returns the best split key, or "" and false if none divides the load well enough.
func (f *finder) key() (string, bool) {
	best, bestScore := -1, math.Inf(1)
	for i, s := range f.samples[:min(f.n, finderSamples)] {
		n := s.left + s.right + s.contained
		if n < finderMinCount || s.left+s.right == 0 {
			continue
		}
		balance := math.Abs(float64(s.left-s.right)) / float64(s.left+s.right)
		contained := float64(s.contained) / float64(n)
		if balance >= finderMaxImbalance || contained >= finderMaxContained {
			continue
		}
		if sc := balance + contained; sc < bestScore {
			best, bestScore = i, sc
		}
	}
	if best < 0 {
		return "", false
	}
	return f.samples[best].key, true
}
