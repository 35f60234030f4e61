package blob

import (
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// Container names (blob.md §3): 3 to 63 lower-case letters, digits and single inner hyphens,
// or one of the three $ names; a name of the wrong length is OutOfRangeInput unless a
// character is already wrong.
func TestContainerNameRules(t *testing.T) {
	for _, c := range []struct {
		name string
		want azerr.Code
	}{
		{"$root", ""}, {"$logs", ""}, {"$web", ""},
		{"$roots", azerr.InvalidResourceName}, {"$ab", azerr.InvalidResourceName},
		{"abc", ""}, {"a0z", ""}, {"09a", ""}, {"a-b", ""}, {"a-b-c", ""},
		{strings.Repeat("a", 63), ""},
		{"", azerr.OutOfRangeInput}, {"ab", azerr.OutOfRangeInput},
		{strings.Repeat("a", 64), azerr.OutOfRangeInput},
		{"a-", azerr.OutOfRangeInput},
		{"aB", azerr.InvalidResourceName}, {"a_", azerr.InvalidResourceName},
		{"A" + strings.Repeat("a", 63), azerr.InvalidResourceName},
		{"-ab", azerr.InvalidResourceName}, {"ab-", azerr.InvalidResourceName},
		{"a--b", azerr.InvalidResourceName}, {"aBc", azerr.InvalidResourceName},
		// the characters just outside each allowed range
		{"ab`", azerr.InvalidResourceName}, {"ab{", azerr.InvalidResourceName},
		{"ab/", azerr.InvalidResourceName}, {"ab:", azerr.InvalidResourceName},
		{"ab,", azerr.InvalidResourceName}, {"ab.", azerr.InvalidResourceName},
		{"abé", azerr.InvalidResourceName},
	} {
		err := ValidContainerName(c.name)
		if c.want == "" && err != nil || c.want != "" && !azerr.Is(err, c.want) {
			t.Errorf("%q: %v, want %q", c.name, err, c.want)
		}
	}
}

// Blob names: 1 to 1,024 characters (not bytes), fewer than 254 slashes, valid UTF-8 and no
// NUL.
func TestBlobNameRules(t *testing.T) {
	for _, c := range []struct {
		label, name string
		want        azerr.Code
	}{
		{"one character", "a", ""},
		{"1024 two-byte characters", strings.Repeat("é", 1024), ""},
		{"1025 characters", strings.Repeat("a", 1025), azerr.OutOfRangeInput},
		{"empty", "", azerr.OutOfRangeInput},
		{"253 slashes", strings.Repeat("a/", 253) + "a", ""},
		{"254 slashes", strings.Repeat("a/", 254) + "a", azerr.OutOfRangeInput},
		{"invalid UTF-8", "a\xffb", azerr.InvalidResourceName},
		{"NUL", "a\x00b", azerr.InvalidResourceName},
		{"NUL first", "\x00", azerr.InvalidResourceName},
	} {
		err := ValidBlobName(c.name)
		if c.want == "" && err != nil || c.want != "" && !azerr.Is(err, c.want) {
			t.Errorf("%s: %v, want %q", c.label, err, c.want)
		}
	}
}

// Metadata names are C# identifiers, unique ignoring case; names and values together hold
// at most 8 KiB.
func TestMetadataRules(t *testing.T) {
	for _, c := range []struct {
		label string
		m     Meta
		want  azerr.Code
	}{
		{"none", nil, ""},
		{"letters, digits, underscore", Meta{{"aZ_09", "v"}, {"_", ""}, {"Az", "x"}, {"z9", ""}}, ""},
		{"empty name", Meta{{"", "v"}}, azerr.InvalidMetadata},
		{"digit first", Meta{{"0a", "v"}}, azerr.InvalidMetadata},
		{"9 first", Meta{{"9", "v"}}, azerr.InvalidMetadata},
		{"hyphen", Meta{{"a-b", "v"}}, azerr.InvalidMetadata},
		{"@", Meta{{"a@", "v"}}, azerr.InvalidMetadata},
		{"[", Meta{{"a[", "v"}}, azerr.InvalidMetadata},
		{"`", Meta{{"a`", "v"}}, azerr.InvalidMetadata},
		{"{", Meta{{"a{", "v"}}, azerr.InvalidMetadata},
		{"/", Meta{{"a/", "v"}}, azerr.InvalidMetadata},
		{":", Meta{{"a:", "v"}}, azerr.InvalidMetadata},
		{"non-ASCII letter", Meta{{"é", "v"}}, azerr.InvalidMetadata},
		{"same name, other case", Meta{{"Name", "1"}, {"nAME", "2"}}, azerr.InvalidMetadata},
		{"8 KiB exactly", Meta{{"a", strings.Repeat("v", 4<<10-1)}, {"b", strings.Repeat("v", 4<<10-1)}}, ""},
		{"8 KiB and one byte", Meta{{"a", strings.Repeat("v", 4<<10-1)}, {"bb", strings.Repeat("v", 4<<10-1)}}, azerr.MetadataTooLarge},
		{"names count", Meta{{strings.Repeat("n", 8<<10), ""}, {"b", ""}}, azerr.MetadataTooLarge},
	} {
		err := ValidateMeta(c.m)
		if c.want == "" && err != nil || c.want != "" && !azerr.Is(err, c.want) {
			t.Errorf("%s: %v, want %q", c.label, err, c.want)
		}
	}
}
