package queue

import (
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// Queue names: 3 to 63 characters of a–z, 0–9 and single inner hyphens; every edge of
// each rule, and the character just outside each range.
func TestQueueNameEdges(t *testing.T) {
	for _, name := range []string{"abc", strings.Repeat("a", 63), "azz", "a09", "0a9", "9-z", "a-b-c"} {
		if err := ValidateName(name); err != nil {
			t.Errorf("%q refused: %v", name, err)
		}
	}
	for _, name := range []string{"ab", strings.Repeat("a", 64), ""} {
		wantCode(t, ValidateName(name), azerr.OutOfRangeInput)
	}
	for _, name := range []string{"-abc", "abc-", "a--b", "ab`", "ab{", "ab/", "ab:", "aBc", "ab_", "ab.", "abé"} {
		if err := ValidateName(name); !azerr.Is(err, azerr.InvalidResourceName) {
			t.Errorf("%q: %v, want InvalidResourceName", name, err)
		}
	}
}

// Metadata names are C# identifiers (a letter or underscore, then letters, digits and
// underscores), unique without regard to case; names and values together hold at most 8 KiB.
func TestMetadataEdges(t *testing.T) {
	for _, name := range []string{"_", "a", "z", "A", "Z", "a0", "a9", "_9", "Za_zA9"} {
		if err := ValidateMetadata([]Meta{{name, "v"}}); err != nil {
			t.Errorf("name %q refused: %v", name, err)
		}
	}
	for _, name := range []string{"", "0a", "9", "a-b", "a`", "a{", "a@", "a[", "a/", "a:", "aé"} {
		wantCode(t, ValidateMetadata([]Meta{{name, "v"}}), azerr.InvalidMetadata)
	}
	wantCode(t, ValidateMetadata([]Meta{{"a", "1"}, {"b", "2"}, {"A", "3"}}), azerr.InvalidMetadata)
	// Exactly 8 KiB of names and values, over two pairs; one byte more is too large.
	half := MaxMetadataBytes / 2
	exact := []Meta{{"n1", strings.Repeat("v", half-2)}, {"n2", strings.Repeat("v", half-2)}}
	if err := ValidateMetadata(exact); err != nil {
		t.Fatalf("8 KiB of metadata refused: %v", err)
	}
	exact[1].Value += "v"
	wantCode(t, ValidateMetadata(exact), azerr.MetadataTooLarge)
	exact[1] = Meta{"n2" + strings.Repeat("n", half-2), ""}
	if err := ValidateMetadata(exact[:2]); err != nil {
		t.Fatalf("8 KiB of metadata, one name long: %v", err)
	}
	exact[1].Name += "n"
	wantCode(t, ValidateMetadata(exact), azerr.MetadataTooLarge)
}
