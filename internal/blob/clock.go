package blob

import (
	"fmt"
	"sync/atomic"
	"time"
)

// clock hands out strictly increasing 100 ns ticks (Unix time), so that every write changes
// the ETag even within one clock tick or when the wall clock steps back.
type clock struct {
	now  func() time.Time
	last atomic.Int64
}

func (c *clock) tick() int64 {
	t := c.now().UnixNano() / 100
	for {
		l := c.last.Load()
		n := max(t, l+1)
		if c.last.CompareAndSwap(l, n) {
			return n
		}
	}
}

// etagOf renders a tick as Azure's ETag: quoted 0x and 15 upper-case hex digits.
func etagOf(tick int64) string { return fmt.Sprintf("\"0x%015X\"", uint64(tick)) }

// timeOf turns ticks back into a time.
func timeOf(tick int64) time.Time { return time.Unix(0, tick*100).UTC() }
