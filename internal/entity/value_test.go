package entity

import (
	"testing"
	"time"
)

// TestTypeString: every type has its EDM name, and values outside the known types, just past
// the last one included, say Edm.Invalid instead of indexing past the names.
func TestTypeString(t *testing.T) {
	for typ := Binary; typ <= String; typ++ {
		if got, ok := ParseType(typ.String()); !ok || got != typ {
			t.Errorf("type %d: %q parses as %d, %v", typ, typ.String(), got, ok)
		}
	}
	for _, typ := range []Type{0, String + 1, 255} {
		if got := typ.String(); got != "Edm.Invalid" {
			t.Errorf("type %d: %q", typ, got)
		}
	}
}

// TestTimeOf: ticks convert to instants 100 ns apart on both sides of 1970, whole seconds
// included, and back.
func TestTimeOf(t *testing.T) {
	epoch := time.Unix(0, 0).UTC()
	for _, ticks := range []int64{0, 1, -1, TicksPerSecond, -TicksPerSecond, TicksPerSecond + 1, -TicksPerSecond - 1, MinTicks, MaxTicks} {
		got := TimeOf(ticks)
		if want := epoch.Add(time.Duration(ticks) * 100); ticks > MinTicks && ticks < MaxTicks && !got.Equal(want) {
			t.Errorf("TimeOf(%d) = %v, want %v", ticks, got, want)
		}
		if back := Ticks(got); back != ticks {
			t.Errorf("Ticks(TimeOf(%d)) = %d", ticks, back)
		}
	}
}
