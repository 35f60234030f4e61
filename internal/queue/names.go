package queue

import (
	"strings"

	"github.com/tablo/tablo/internal/azerr"
)

// Azure's Queue service limits.
const (
	MaxMessageBytes      = 64 << 10 // message text as sent, in bytes of UTF-8
	MaxVisibilityTimeout = 7 * 24 * 3600
	DefaultTTL           = 7 * 24 * 3600
	MaxNumOfMessages     = 32
	MaxMetadataBytes     = 8 << 10
	MaxListResults       = 5000
	DefaultVisibilityGet = 30
	neverExpires         = int64(1<<63 - 1)
	minQueueName         = 3
	maxQueueName         = 63
	deleteBatch          = 1000
)

// ValidateName applies the queue-name rules: 3–63 characters of lower-case letters, digits
// and single hyphens, starting and ending with a letter or digit.
func ValidateName(name string) error {
	if len(name) < minQueueName || len(name) > maxQueueName {
		return azerr.Newf(azerr.OutOfRangeInput, "The specified resource name length is not within the permissible limits.")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(name)-1 && name[i-1] != '-':
		default:
			return azerr.New(azerr.InvalidResourceName)
		}
	}
	return nil
}

// Meta is one metadata pair; the name keeps the case of the last write.
type Meta struct{ Name, Value string }

// ValidateMetadata checks names (C# identifiers) and the total size.
func ValidateMetadata(md []Meta) error {
	size := 0
	for i, m := range md {
		if !validIdentifier(m.Name) {
			return azerr.New(azerr.InvalidMetadata)
		}
		for j := 0; j < i; j++ {
			if strings.EqualFold(md[j].Name, m.Name) {
				return azerr.New(azerr.InvalidMetadata)
			}
		}
		size += len(m.Name) + len(m.Value)
	}
	if size > MaxMetadataBytes {
		return azerr.New(azerr.MetadataTooLarge)
	}
	return nil
}

func validIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// sameMetadata reports whether a and b hold the same names (case-insensitively) with the
// same values.
func sameMetadata(a, b []Meta) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if strings.EqualFold(x.Name, y.Name) {
				found = x.Value == y.Value
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
