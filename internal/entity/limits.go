package entity

import (
	"unicode"
	"unicode/utf8"

	"github.com/tablo/tablo/internal/azerr"
)

// Azure's hard per-entity limits (spec limits.md rows 7-14). String lengths are counted in
// UTF-16 code units, as the service (a .NET system) counts them.
const (
	MaxKeyLength          = 1024      // PartitionKey / RowKey
	MaxStringLength       = 32 * 1024 // Edm.String value
	MaxBinaryLength       = 64 * 1024 // Edm.Binary value, bytes
	MaxPropertyNameLength = 255
	MaxCustomProperties   = 252 // 255 including PartitionKey, RowKey and Timestamp
	MaxEntitySize         = 1 << 20
)

// UTF16Len returns the length of s in UTF-16 code units (characters outside the BMP count
// twice). For valid UTF-8 this is the number of rune starts plus the number of 4-byte leads.
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c&0xC0 != 0x80 {
			n++
		}
		if c >= 0xF0 {
			n++
		}
	}
	return n
}

// IsSystemProperty reports whether name is one of PartitionKey, RowKey and Timestamp, which
// are never custom properties.
func IsSystemProperty(name string) bool {
	return name == "PartitionKey" || name == "RowKey" || name == "Timestamp"
}

// ValidateKey checks a PartitionKey or RowKey value; which is "PartitionKey" or "RowKey" and
// names the key in the error message.
func ValidateKey(which, value string) error {
	if !utf8.ValidString(value) {
		return azerr.New(azerr.InvalidInput)
	}
	units := 0
	for _, r := range value {
		if forbiddenKeyRune(r) {
			return azerr.Newf(azerr.OutOfRangeInput, "The '%s' parameter of value '%s' is out of range.", which, value)
		}
		units++
		if r >= 0x10000 {
			units++
		}
	}
	if units > MaxKeyLength {
		return azerr.New(azerr.PropertyValueTooLarge)
	}
	return nil
}

func forbiddenKeyRune(r rune) bool {
	switch {
	case r == '/', r == '\\', r == '#', r == '?':
		return true
	case r <= 0x1F, r >= 0x7F && r <= 0x9F:
		return true
	}
	return false
}

// ValidatePropertyName checks a custom property name: a C# identifier of at most 255
// characters that is not a system property name.
func ValidatePropertyName(name string) error {
	if len(name) > MaxPropertyNameLength && UTF16Len(name) > MaxPropertyNameLength {
		return azerr.New(azerr.PropertyNameTooLong)
	}
	if !isIdentifier(name) || IsSystemProperty(name) {
		return azerr.New(azerr.PropertyNameInvalid)
	}
	return nil
}

// isIdentifier implements the C# identifier rule: a letter (L*, Nl) or '_' first, then
// letters, digits (Nd), connectors (Pc), combining marks (Mn, Mc) and formatting (Cf).
func isIdentifier(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		if r < utf8.RuneSelf {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
				continue
			case r >= '0' && r <= '9' && i > 0:
				continue
			}
			return false
		}
		if r == utf8.RuneError {
			return false // invalid UTF-8 (a real U+FFFD is not a letter either)
		}
		if unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) {
			continue
		}
		if i == 0 {
			return false
		}
		if !unicode.In(r, unicode.Nd, unicode.Pc, unicode.Mn, unicode.Mc, unicode.Cf) {
			return false
		}
	}
	return true
}

// ValidateValue checks the size limits of one property value.
func ValidateValue(v Value) error {
	switch v.Type {
	case String:
		if len(v.S) > MaxStringLength && UTF16Len(v.S) > MaxStringLength {
			return azerr.New(azerr.PropertyValueTooLarge)
		}
	case Binary:
		if len(v.B) > MaxBinaryLength {
			return azerr.New(azerr.PropertyValueTooLarge)
		}
	}
	return nil
}

// Size is Microsoft's published estimate of an entity's stored size in bytes, the quantity
// the 1 MiB EntityTooLarge limit applies to (spec data-model.md §6).
func Size(e *Entity) int {
	n := 4 + 2*(UTF16Len(e.PartitionKey)+UTF16Len(e.RowKey))
	for i := range e.Props {
		p := &e.Props[i]
		n += 8 + 2*UTF16Len(p.Name) + valueSize(p.Value)
	}
	return n
}

func valueSize(v Value) int {
	switch v.Type {
	case String:
		return 4 + 2*UTF16Len(v.S)
	case Binary:
		return 4 + len(v.B)
	case Guid:
		return 16
	case Boolean:
		return 1
	case Int32:
		return 4
	default: // DateTime, Double, Int64
		return 8
	}
}

// CheckLimits enforces the whole-entity limits: at most 252 custom properties
// (TooManyProperties) and Size at most 1 MiB (EntityTooLarge). The service calls it again
// after a merge, whose result no single request body shows.
func CheckLimits(e *Entity) error {
	if len(e.Props) > MaxCustomProperties {
		return azerr.New(azerr.TooManyProperties)
	}
	if Size(e) > MaxEntitySize {
		return azerr.New(azerr.EntityTooLarge)
	}
	return nil
}
