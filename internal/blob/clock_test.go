package blob

import (
	"fmt"
	"math"
	"testing"
)

// TestETagFormat: etagOf prints what "0x%015X" prints, for small, current and 16-digit ticks.
func TestETagFormat(t *testing.T) {
	for _, tick := range []int64{0, 1, 0xABC, 17956670828215094, 1 << 59, 1<<60 - 1, 1 << 60, math.MaxInt64, -1} {
		if got, want := etagOf(tick), fmt.Sprintf("\"0x%015X\"", uint64(tick)); got != want {
			t.Errorf("etagOf(%d) = %s, want %s", tick, got, want)
		}
	}
}
