package entity

import (
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// A small JSON scanner for entity bodies. encoding/json cannot report duplicate members and
// would route numbers through float64; this one keeps every member in order with its raw
// text, so Int64 stays exact and duplicates are visible. It works on a string (the body,
// converted once) so that names and escape-free string values are substrings, not copies.

// jsonKind is the kind of a member's value.
type jsonKind uint8

const (
	kindString jsonKind = iota + 1
	kindNumber
	kindTrue
	kindFalse
	kindNull
	kindNested // an object or array: never a valid property value
)

// maxNesting bounds the depth of nested values so that hostile input cannot exhaust the stack.
const maxNesting = 64

// member is one name/value pair of the top-level object.
type member struct {
	name string
	raw  string // string contents between the quotes (still escaped), or the number text
	kind jsonKind
	esc  bool // raw contains backslash escapes
	// integral is true for numbers without a fraction or exponent.
	integral bool
	// ann is the type from the matching "name@odata.type" member, 0 if none.
	ann Type
	// role is what DecodeJSON makes of the member.
	role memberRole
}

// memberRole classifies a top-level member.
type memberRole uint8

const (
	roleProperty memberRole = iota // a custom property (the zero value)
	rolePartitionKey
	roleRowKey
	roleIgnored // Timestamp and OData annotations
)

// str returns the unescaped value of a string member.
func (m *member) str() string {
	if !m.esc {
		return m.raw
	}
	return unescape(m.raw)
}

type scanner struct {
	s string
	i int
}

func (sc *scanner) skipSpace() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// scanObject scans the whole body, which must be exactly one JSON object, appending its
// members to dst.
func scanObject(s string, dst []member) ([]member, bool) {
	sc := scanner{s: s}
	sc.skipSpace()
	if !sc.consume('{') {
		return dst, false
	}
	sc.skipSpace()
	if sc.consume('}') {
		sc.skipSpace()
		return dst, sc.i == len(sc.s)
	}
	for {
		sc.skipSpace()
		raw, esc, ok := sc.scanString()
		if !ok {
			return dst, false
		}
		n := len(dst)
		dst = append(dst, member{name: raw}) // scanned in place: a member is large
		m := &dst[n]
		if esc {
			m.name = unescape(raw)
		}
		sc.skipSpace()
		if !sc.consume(':') {
			return dst[:n], false
		}
		sc.skipSpace()
		if !sc.scanValue(m, 0) {
			return dst[:n], false
		}
		sc.skipSpace()
		if sc.consume(',') {
			continue
		}
		if !sc.consume('}') {
			return dst, false
		}
		sc.skipSpace()
		return dst, sc.i == len(sc.s)
	}
}

func (sc *scanner) consume(c byte) bool {
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// scanValue scans one value into m (kind and raw text).
func (sc *scanner) scanValue(m *member, depth int) bool {
	if sc.i >= len(sc.s) {
		return false
	}
	switch c := sc.s[sc.i]; {
	case c == '"':
		raw, esc, ok := sc.scanString()
		m.kind, m.raw, m.esc = kindString, raw, esc
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		raw, integral, ok := sc.scanNumber()
		m.kind, m.raw, m.integral = kindNumber, raw, integral
		return ok
	case c == 't':
		m.kind = kindTrue
		return sc.literal("true")
	case c == 'f':
		m.kind = kindFalse
		return sc.literal("false")
	case c == 'n':
		m.kind = kindNull
		return sc.literal("null")
	case c == '{' || c == '[':
		m.kind = kindNested
		return sc.skipNested(depth + 1)
	}
	return false
}

func (sc *scanner) literal(word string) bool {
	if len(sc.s)-sc.i >= len(word) && sc.s[sc.i:sc.i+len(word)] == word {
		sc.i += len(word)
		return true
	}
	return false
}

// skipNested validates and skips an object or array.
func (sc *scanner) skipNested(depth int) bool {
	if depth > maxNesting {
		return false
	}
	var scratch member
	if sc.consume('[') {
		sc.skipSpace()
		if sc.consume(']') {
			return true
		}
		for {
			sc.skipSpace()
			if !sc.scanValue(&scratch, depth) {
				return false
			}
			sc.skipSpace()
			if sc.consume(',') {
				continue
			}
			return sc.consume(']')
		}
	}
	if !sc.consume('{') {
		return false
	}
	sc.skipSpace()
	if sc.consume('}') {
		return true
	}
	for {
		sc.skipSpace()
		if _, _, ok := sc.scanString(); !ok {
			return false
		}
		sc.skipSpace()
		if !sc.consume(':') {
			return false
		}
		sc.skipSpace()
		if !sc.scanValue(&scratch, depth) {
			return false
		}
		sc.skipSpace()
		if sc.consume(',') {
			continue
		}
		return sc.consume('}')
	}
}

// scanString scans a string starting at its opening quote and returns the text between the
// quotes. The body was checked to be valid UTF-8 beforehand; only JSON rules are checked here.
func (sc *scanner) scanString() (raw string, esc, ok bool) {
	if !sc.consume('"') {
		return "", false, false
	}
	start := sc.i
	s := sc.s
	for i := start; i < len(s); {
		if i+8 <= len(s) { // the common case first: eight plain bytes at a time
			m := specialBytes(load8(s, i))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8 // the first special byte
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		switch {
		case c == '"':
			sc.i = i + 1
			return s[start:i], esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(s) {
				return "", false, false
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s) {
					return "", false, false
				}
				if _, ok := hex4(s[i+2 : i+6]); !ok {
					return "", false, false
				}
				i += 6
			default:
				return "", false, false
			}
		case c < 0x20:
			return "", false, false
		default:
			i++
		}
	}
	return "", false, false
}

// load8 returns s[i:i+8] as a little-endian word (the compiler merges the byte loads).
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// specialBytes flags the bytes of x that end a run of plain string content: '"', '\\' and
// control characters (< 0x20). It is zero when there are none; otherwise its lowest set bit
// is the high bit of the first such byte (higher bits may be false positives, caused by the
// borrow out of a flagged byte, so only the lowest is used).
func specialBytes(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	// A byte b < n sets its high bit in b - n (when no borrow comes in from below, which
	// holds up to the first flagged byte); &^x drops bytes >= 0x80. The quote and
	// backslash tests are the same "< 1" test on x with those bytes zeroed.
	return ((x - ones*0x20) | (quote - ones) | (backslash - ones)) &^ x & highs
}

// scanNumber scans a number per the JSON grammar:
// -? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)?
func (sc *scanner) scanNumber() (raw string, integral, ok bool) {
	s, start := sc.s, sc.i
	i := start
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return "", false, false
	}
	integral = true
	if i < len(s) && s[i] == '.' {
		integral = false
		j := skipDigits(s, i+1)
		if j == i+1 {
			return "", false, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		integral = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			return "", false, false
		}
		i = j
	}
	sc.i = i
	return s[start:i], integral, true
}

func skipDigits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func hex4(s string) (rune, bool) {
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// unescape decodes the escapes of a string that scanString accepted. A lone UTF-16
// surrogate (representable in .NET strings but not in UTF-8) becomes U+FFFD, as
// encoding/json does.
func unescape(raw string) string {
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, _ := hex4(raw[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2, _ = hex4(raw[i+2 : i+6])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			b = utf8.AppendRune(b, r)
			continue
		default: // '"', '\\', '/'
			b = append(b, raw[i+1])
		}
		i += 2
	}
	return string(b)
}
