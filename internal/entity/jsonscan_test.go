package entity

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// scanStringRef is scanString one byte at a time, as it was before the eight-byte fast path.
func scanStringRef(s string) (raw string, esc, ok bool, end int) {
	if s == "" || s[0] != '"' {
		return "", false, false, 0
	}
	for i := 1; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			return s[1:i], esc, true, i + 1
		case c == '\\':
			esc = true
			if i+1 >= len(s) {
				return "", false, false, 0
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s) {
					return "", false, false, 0
				}
				if _, ok := hex4(s[i+2 : i+6]); !ok {
					return "", false, false, 0
				}
				i += 6
			default:
				return "", false, false, 0
			}
		case c < 0x20:
			return "", false, false, 0
		default:
			i++
		}
	}
	return "", false, false, 0
}

// TestScanStringMatchesReference compares scanString with the byte-wise reference on random
// strings in which quotes, escapes, control characters and non-ASCII bytes fall at every
// offset of the eight-byte blocks.
func TestScanStringMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "b", "0", " ", "~", "\x7f", "é", "\xff", "\x80", "\"", "\\", `\"`, `\\`, `\n`, `\u00e9`, `\u12`, `\x`, "\x1f", "\x00", "\t", "\xa2", "\xdc"}
	for range 50000 {
		var sb strings.Builder
		sb.WriteByte('"')
		for range rng.IntN(40) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if rng.IntN(4) > 0 {
			sb.WriteByte('"')
		}
		s := sb.String()
		raw, esc, ok, end := scanStringRef(s)
		sc := scanner{s: s}
		gotRaw, gotEsc, gotOK := sc.scanString()
		if gotOK != ok || gotRaw != raw || gotEsc != esc || (ok && sc.i != end) {
			t.Fatalf("scanString(%q) = %q, %v, %v at %d; want %q, %v, %v at %d", s, gotRaw, gotEsc, gotOK, sc.i, raw, esc, ok, end)
		}
	}
}

func TestSpecialBytes(t *testing.T) {
	for b := range 256 {
		for pos := range 8 {
			block := []byte("abcdefgh")
			block[pos] = byte(b)
			x := load8(string(block), 0)
			m := specialBytes(x)
			special := b < 0x20 || b == '"' || b == '\\'
			switch {
			case special && m == 0:
				t.Fatalf("byte %#x at %d not flagged", b, pos)
			case !special && m != 0:
				t.Fatalf("byte %#x at %d flagged: %#x", b, pos, m)
			case special && (m&-m) != 0x80<<(8*pos):
				t.Fatalf("byte %#x at %d: lowest flag %#x", b, pos, m&-m)
			}
		}
	}
}
