package stress

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// RetryPolicy is how the stress test retries a failed operation, as the partitioning guide
// lists them: no retry, a fixed back-off, or an exponential back-off with ±20% randomness.
type RetryPolicy struct {
	Kind string // "none", "fixed" or "exponential"
	// Max is how many times an operation is retried.
	Max int
	// Backoff is z, the default back-off; Min and Cap are zmin and zmax of the formula.
	Backoff, Min, Cap time.Duration
}

// Delay is the wait before retry number x (1 for the first retry). Exponential follows the
// guide:
//
//	y = Rand(0.8z, 1.2z) · (2^x − 1)
//	y = Min(zmin + y, zmax)
//
// Fixed waits Backoff every time.
func (p RetryPolicy) Delay(rnd *rand.Rand, x int) time.Duration {
	switch p.Kind {
	case "fixed":
		return p.Backoff
	case "exponential":
		z := float64(p.Backoff)
		y := (0.8*z + rnd.Float64()*0.4*z) * float64(uint64(1)<<min(x, 40)-1)
		return time.Duration(min(float64(p.Min)+y, float64(p.Cap)))
	}
	return 0
}

// ParseRetry reads "none", "fixed" or "exponential".
func ParseRetry(kind string, maxRetries int, backoff, lo, hi time.Duration) (RetryPolicy, error) {
	p := RetryPolicy{Kind: strings.ToLower(kind), Max: maxRetries, Backoff: backoff, Min: lo, Cap: hi}
	switch p.Kind {
	case "none":
		p.Max = 0
	case "fixed", "exponential":
		if maxRetries < 0 || backoff <= 0 || lo < 0 || hi < lo {
			return p, fmt.Errorf("retry: want --retry-max >= 0, --backoff > 0 and 0 <= --backoff-min <= --backoff-max")
		}
	default:
		return p, fmt.Errorf("retry %q: want none, fixed or exponential", kind)
	}
	return p, nil
}
