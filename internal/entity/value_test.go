package entity

import (
	"math"
	"strings"
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

// TestCompareValues: values of one type are ordered (strings by UTF-16 code unit, binary
// bytewise, numbers numerically); values of different types, or a NaN, are not.
func TestCompareValues(t *testing.T) {
	cases := []struct {
		a, b Value
		c    int
		ok   bool
	}{
		{StringValue("a"), StringValue("b"), -1, true},
		{StringValue("\uFFFD"), StringValue("😀"), 1, true}, // U+FFFD > the surrogate D83D
		{GuidValue("00000000-0000-0000-0000-000000000001"), GuidValue("00000000-0000-0000-0000-000000000001"), 0, true},
		{BinaryValue([]byte{1}), BinaryValue([]byte{0, 9}), 1, true},
		{DoubleValue(2), DoubleValue(1.5), 1, true},
		{DoubleValue(math.NaN()), DoubleValue(1), 0, false},
		{DoubleValue(1), DoubleValue(math.NaN()), 0, false},
		{Int64Value(-3), Int64Value(4), -1, true},
		{Int32Value(7), Int32Value(7), 0, true},
		{Int32Value(1), Int64Value(1), 0, false},
		{StringValue("1"), Int32Value(1), 0, false},
	}
	for _, c := range cases {
		if got, ok := Compare(c.a, c.b); got != c.c || ok != c.ok {
			t.Errorf("Compare(%+v, %+v) = %d, %v; want %d, %v", c.a, c.b, got, ok, c.c, c.ok)
		}
	}
}

// TestCanonicalGuidHexEdges: every hex digit in either case is accepted, 'f' and 'F'
// included, and lower-cased; the letters after them are not.
func TestCanonicalGuidHexEdges(t *testing.T) {
	if got, ok := canonicalGuid("0123456f-89aF-bcde-ABCD-EF0000000009"); !ok || got != "0123456f-89af-bcde-abcd-ef0000000009" {
		t.Fatalf("canonicalGuid: %q, %v", got, ok)
	}
	for _, bad := range []string{"0123456g-89af-bcde-abcd-ef0000000000", "0123456G-89af-bcde-abcd-ef0000000000"} {
		if _, ok := canonicalGuid(bad); ok {
			t.Errorf("canonicalGuid(%q) accepted a non-hex digit", bad)
		}
	}
}

// TestMergeProperties: a merge overwrites existing properties in place, keeping their
// order, and appends the new ones in the patch's order.
func TestMergeProperties(t *testing.T) {
	e := &Entity{Props: []Property{{Name: "A", Value: Int32Value(1)}, {Name: "B", Value: Int32Value(2)}}}
	e.Merge([]Property{{Name: "C", Value: Int32Value(3)}, {Name: "A", Value: StringValue("a")}, {Name: "D", Value: Int32Value(4)}})
	want := []Property{{Name: "A", Value: StringValue("a")}, {Name: "B", Value: Int32Value(2)},
		{Name: "C", Value: Int32Value(3)}, {Name: "D", Value: Int32Value(4)}}
	if len(e.Props) != len(want) {
		t.Fatalf("merged %+v, want %+v", e.Props, want)
	}
	for i := range want {
		if e.Props[i].Name != want[i].Name || !Equal(e.Props[i].Value, want[i].Value) {
			t.Fatalf("merged %+v, want %+v", e.Props, want)
		}
	}
}

// TestPathSafeEdges: letters and digits at the ends of their ranges stay literal in an
// entity path; the bytes just outside them are escaped.
func TestPathSafeEdges(t *testing.T) {
	for _, c := range []byte("azAZ09") {
		if !pathSafe(c) {
			t.Errorf("%q is escaped", c)
		}
	}
	for _, c := range []byte("`{@[/\x7f") {
		if c != '@' && pathSafe(c) {
			t.Errorf("%q stays literal", c)
		}
	}
	if got := EntityPath("t", "azAZ09", "z"); !strings.Contains(got, "azAZ09") {
		t.Errorf("EntityPath: %s", got)
	}
}

// TestIdentifierLetterEdges: property names may start with a, z, A, Z or '_' and hold
// digits after the first character.
func TestIdentifierLetterEdges(t *testing.T) {
	for _, name := range []string{"a", "z", "A", "Z", "_", "z9", "Z0"} {
		if !isIdentifier(name) {
			t.Errorf("%q refused", name)
		}
	}
	for _, name := range []string{"`", "{", "@", "[", "9", "a-b"} {
		if isIdentifier(name) {
			t.Errorf("%q accepted", name)
		}
	}
}
