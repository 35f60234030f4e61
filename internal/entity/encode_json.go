package entity

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// EncodeOptions describes one entity object in a response.
type EncodeOptions struct {
	Level MetadataLevel
	// Metadata is the complete odata.metadata URL, written first at minimal and full
	// metadata; empty omits it (elements of a collection).
	Metadata string
	// BaseURL (e.g. "http://127.0.0.1:10002/devstoreaccount1", no trailing slash), Account
	// and Table feed odata.type, odata.id and odata.editLink at full metadata.
	BaseURL string
	Account string
	Table   string
	// Select, when non-nil, limits the output to the listed properties (the caller maps "*"
	// to nil and removes duplicates). System properties appear only if listed; listed custom
	// properties the entity lacks are written as null. odata.etag is written regardless.
	Select []string
}

// AppendJSON appends the JSON object for e to dst in the exact member order and annotation
// rules of the real service (spec data-model.md §3): odata.* members, PartitionKey, RowKey,
// Timestamp, then custom properties in stored order. Int64, DateTime, Guid, Binary and
// non-finite Double values carry an @odata.type annotation before the value except at
// nometadata; Timestamp is annotated only at fullmetadata.
//
// AppendJSONRaw writes the same bytes from the stored form; both share beginObject and
// objectWriter, and differ only in how they find the custom properties.
func AppendJSON(dst []byte, e *Entity, o EncodeOptions) []byte {
	w := beginObject(dst, e.PartitionKey, e.RowKey, e.Timestamp, o)
	if o.Select == nil {
		for i := range e.Props {
			w.property(e.Props[i].Name, e.Props[i].Value, o.Level)
		}
		return append(w.b, '}')
	}
	for _, name := range o.Select {
		if !IsSystemProperty(name) {
			v, ok := e.Get(name)
			w.selected(name, v, ok, o.Level)
		}
	}
	return append(w.b, '}')
}

// beginObject opens the entity object and writes everything up to the custom properties:
// the odata.* members the level asks for and the system properties o.Select keeps.
func beginObject(dst []byte, pk, rk string, ts int64, o EncodeOptions) objectWriter {
	w := objectWriter{b: append(dst, '{')}
	withPK, withRK, withTS := o.Select == nil, o.Select == nil, o.Select == nil
	for _, name := range o.Select {
		switch name {
		case "PartitionKey":
			withPK = true
		case "RowKey":
			withRK = true
		case "Timestamp":
			withTS = true
		}
	}
	// The Timestamp appears twice (ETag and property): format it once.
	var tsBuf [40]byte
	var tsText []byte
	if o.Level != NoMetadata || withTS {
		tsText = AppendDateTime(tsBuf[:0], ts)
	}
	if o.Level != NoMetadata {
		if o.Metadata != "" {
			w.key("odata.metadata")
			w.b = AppendJSONString(w.b, o.Metadata)
		}
		if o.Level == FullMetadata {
			w.key("odata.type")
			w.b = append(w.b, '"')
			w.b = appendStringContent(w.b, o.Account)
			w.b = append(w.b, '.')
			w.b = appendStringContent(w.b, o.Table)
			w.b = append(w.b, '"')
			w.key("odata.id")
			w.b = append(w.b, '"')
			w.b = appendStringContent(w.b, strings.TrimSuffix(o.BaseURL, "/"))
			w.b = append(w.b, '/')
			w.b = appendEntityPathContent(w.b, o.Table, pk, rk)
			w.b = append(w.b, '"')
		}
		w.key("odata.etag")
		w.b = append(w.b, `"W/\"datetime'`...)
		w.b = appendEscapedColons(w.b, tsText)
		w.b = append(w.b, `'\""`...)
		if o.Level == FullMetadata {
			w.key("odata.editLink")
			w.b = append(w.b, '"')
			w.b = appendEntityPathContent(w.b, o.Table, pk, rk)
			w.b = append(w.b, '"')
		}
	}

	if withPK {
		w.key("PartitionKey")
		w.b = AppendJSONString(w.b, pk)
	}
	if withRK {
		w.key("RowKey")
		w.b = AppendJSONString(w.b, rk)
	}
	if withTS {
		if o.Level == FullMetadata {
			w.annotation("Timestamp", DateTime)
		}
		w.key("Timestamp")
		w.b = append(w.b, '"')
		w.b = append(w.b, tsText...)
		w.b = append(w.b, '"')
	}
	return w
}

// appendEntityPathContent writes the entity path inside a JSON string. The key literals
// need no JSON escaping (every byte outside the URL path characters is percent-encoded); the
// table name is escaped in case a caller passes an unvalidated one.
func appendEntityPathContent(dst []byte, table, pk, rk string) []byte {
	dst = appendStringContent(dst, table)
	return AppendEntityPath(dst, "", pk, rk)
}

// objectWriter writes the members of one JSON object, inserting commas.
type objectWriter struct {
	b []byte
	n int
}

// key writes the member name and the colon.
func (w *objectWriter) key(name string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = AppendJSONString(w.b, name)
	w.b = append(w.b, ':')
}

func (w *objectWriter) annotation(name string, t Type) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = append(w.b, '"')
	w.b = appendStringContent(w.b, name)
	w.b = append(w.b, `@odata.type":"`...)
	w.b = append(w.b, t.String()...)
	w.b = append(w.b, '"')
}

// property writes one custom property with its annotation when the level and type need one.
func (w *objectWriter) property(name string, v Value, level MetadataLevel) {
	if level != NoMetadata && needsAnnotation(v) {
		w.annotation(name, v.Type)
	}
	w.key(name)
	w.b = appendValue(w.b, v)
}

// selected writes one property named in $select: its value, or null when the entity lacks it.
func (w *objectWriter) selected(name string, v Value, ok bool, level MetadataLevel) {
	if ok {
		w.property(name, v, level)
		return
	}
	w.key(name)
	w.b = append(w.b, "null"...)
}

// needsAnnotation reports values a JSON reader cannot type by themselves.
func needsAnnotation(v Value) bool {
	switch v.Type {
	case Int64, DateTime, Guid, Binary:
		return true
	case Double:
		return math.IsNaN(v.F) || math.IsInf(v.F, 0)
	}
	return false
}

func appendValue(dst []byte, v Value) []byte {
	switch v.Type {
	case String, Guid:
		return AppendJSONString(dst, v.S)
	case Boolean:
		if v.Bool() {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Int32:
		return strconv.AppendInt(dst, v.I, 10)
	case Int64:
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, v.I, 10)
		return append(dst, '"')
	case Double:
		return appendDouble(dst, v.F)
	case DateTime:
		dst = append(dst, '"')
		dst = AppendDateTime(dst, v.I)
		return append(dst, '"')
	case Binary:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.B)
		return append(dst, '"')
	}
	return append(dst, "null"...) // an invalid Value; never produced by the decoders
}

// appendDouble writes the shortest round-trip form, always with a '.' or an exponent so that
// clients read a Double, not an Int32 (3 → 3.0). Like encoding/json it uses plain notation
// for 1e-6 <= |f| < 1e21. Non-finite values become the strings Azure uses.
func appendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-07 → e-7, as encoding/json does. The 'e' form is at least 5 bytes ("1e-07"), so
		// dst[n-4] is always within it.
		if n := len(dst); dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
		return dst
	}
	for _, c := range dst[start:] {
		if c == '.' {
			return dst
		}
	}
	return append(dst, '.', '0')
}

// AppendJSONString appends s as a JSON string literal (no HTML escaping: '&' stays '&').
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendStringContent(dst, s)
	return append(dst, '"')
}

// appendStringContent escapes s for the inside of a JSON string: quote, backslash and
// control characters (short forms where JSON has them), U+2028/U+2029 (which break
// JavaScript), and invalid UTF-8 as \ufffd — the same choices as encoding/json minus its
// HTML escaping. Other non-ASCII text stays raw UTF-8.
func appendStringContent(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		// Skip plain ASCII eight bytes at a time: this loop is most of a page's CPU.
		i = skipPlainASCII(s, i)
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// skipPlainASCII returns the end of the run of 8-byte words of s, from i, that are all
// ASCII a JSON string holds as is: no control character, quote, backslash or byte >= 0x80.
func skipPlainASCII(s string, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		t := s[i : i+8] // one bounds check; the compiler loads the word at once
		w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		// (x - ones) & ^x & highs is nonzero iff some byte of x is zero, and (w - n*ones) &
		// ^w & highs iff some byte is < n; both are exact when no byte is >= 0x80, and such
		// a byte fails the check through w & highs anyway.
		q := w ^ '"'*ones
		bs := w ^ '\\'*ones
		bad := w | (w-0x20*ones)&^w | (q-ones)&^q | (bs-ones)&^bs
		if bad&highs != 0 {
			return i
		}
	}
	return i
}
