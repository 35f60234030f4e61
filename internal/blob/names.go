package blob

import (
	"strings"
	"unicode/utf8"

	"github.com/tablo/tablo/internal/azerr"
)

// ValidContainerName checks Azure's container naming rules (blob.md §3): 3-63 characters,
// lower-case letters, digits and single hyphens between them; $root, $logs and $web.
func ValidContainerName(name string) error {
	switch name {
	case "$root", "$logs", "$web":
		return nil
	}
	if len(name) < 3 || len(name) > 63 {
		for i := 0; i < len(name); i++ {
			if !nameChar(name[i]) {
				return azerr.New(azerr.InvalidResourceName)
			}
		}
		return azerr.Newf(azerr.OutOfRangeInput, "The specified resource name length is not within the permissible limits.")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !nameChar(c) {
			return azerr.New(azerr.InvalidResourceName)
		}
		if c == '-' && (i == 0 || i == len(name)-1 || name[i-1] == '-') {
			return azerr.New(azerr.InvalidResourceName)
		}
	}
	return nil
}

func nameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
}

// maxBlobName and maxSegments are Azure's limits on a blob name.
const (
	maxBlobName = 1024
	maxSegments = 254
)

// ValidBlobName checks a decoded blob name: 1-1,024 characters, at most 254 path
// segments, valid UTF-8 and no NUL (which ends a name in the key layout).
func ValidBlobName(name string) error {
	n := utf8.RuneCountInString(name)
	if n == 0 || n > maxBlobName || strings.Count(name, "/") >= maxSegments {
		return azerr.Newf(azerr.OutOfRangeInput, "The specified resource name length is not within the permissible limits.")
	}
	if !utf8.ValidString(name) || strings.IndexByte(name, 0) >= 0 {
		return azerr.New(azerr.InvalidResourceName)
	}
	return nil
}

// Meta is user metadata: names as sent (case preserved), compared case-insensitively.
type Meta [][2]string

// maxMetaBytes bounds the names and values of one resource's metadata.
const maxMetaBytes = 8 << 10

// ValidateMeta checks names (C# identifiers, unique ignoring case) and the total size.
func ValidateMeta(m Meta) error {
	size := 0
	seen := map[string]bool{}
	for _, kv := range m {
		if !identifier(kv[0]) || seen[strings.ToLower(kv[0])] {
			return azerr.New(azerr.InvalidMetadata)
		}
		seen[strings.ToLower(kv[0])] = true
		size += len(kv[0]) + len(kv[1])
	}
	if size > maxMetaBytes {
		return azerr.New(azerr.MetadataTooLarge)
	}
	return nil
}

func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
