package entity

import "testing"

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
