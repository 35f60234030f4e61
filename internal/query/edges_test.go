package query

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
)

// TestTokenEdges pins DecodeToken at its bounds: a count of up to five digits (leading
// zeros included) and a token of exactly maxTokenLen bytes are accepted; a signed count is not.
func TestTokenEdges(t *testing.T) {
	if got, err := DecodeToken("1!00004!MTM-"); err != nil || got != "13" {
		t.Errorf("five-digit count: %q, %v; want \"13\"", got, err)
	}
	for _, tok := range []string{"1!000004!MTM-", "1!+4!MTM-"} {
		if got, err := DecodeToken(tok); !azerr.Is(err, azerr.InvalidInput) {
			t.Errorf("DecodeToken(%q) = %q, %v; want InvalidInput", tok, got, err)
		}
	}
	// "1!08184!" + 8184 base64 characters is exactly maxTokenLen bytes.
	key := strings.Repeat("k", 8184/4*3)
	b64 := strings.TrimPrefix(EncodeToken(key), "1!8184!")
	tok := "1!08184!" + b64
	if len(tok) != maxTokenLen {
		t.Fatalf("token is %d bytes, want %d", len(tok), maxTokenLen)
	}
	if got, err := DecodeToken(tok); err != nil || got != key {
		t.Errorf("token of exactly %d bytes: %v", maxTokenLen, err)
	}
}

// TestOptionErrorPos: option errors carry no filter position.
func TestOptionErrorPos(t *testing.T) {
	_, err := DecodeToken("x")
	var qe *Error
	if !errors.As(err, &qe) || qe.Pos != -1 {
		t.Fatalf("DecodeToken error %v: want *Error with Pos -1", err)
	}
}

// TestEchoCut: an error message repeats at most maxEcho bytes of the input, never splits a
// UTF-8 sequence, and survives input that is not UTF-8 at all.
func TestEchoCut(t *testing.T) {
	exact := strings.Repeat("x", maxEcho)
	_, err := ParseTop(exact)
	if msg := azerr.From(err).Message(); !strings.Contains(msg, "'"+exact+"'") {
		t.Errorf("input of exactly %d bytes shortened: %q", maxEcho, msg)
	}
	// Byte maxEcho is the second byte of an 'é': the cut must step back to its first byte.
	split := "a" + strings.Repeat("é", maxEcho)
	_, err = ParseTop(split)
	msg := azerr.From(err).Message()
	if !utf8.ValidString(msg) || !strings.Contains(msg, "'"+split[:maxEcho-1]+"...'") {
		t.Errorf("cut inside a UTF-8 sequence: %q", msg)
	}
	_, err = ParseTop(strings.Repeat("\x80", maxEcho+1))
	if msg := azerr.From(err).Message(); !strings.Contains(msg, "'...'") {
		t.Errorf("continuation bytes only: %q", msg)
	}
}

// TestOpStringOutOfRange: an operator outside the known set prints as "op?", not a panic.
func TestOpStringOutOfRange(t *testing.T) {
	for _, o := range []Op{0, Op(len(opNames)), Op(len(opNames) + 1)} {
		if s := o.String(); s != "op?" {
			t.Errorf("Op(%d).String() = %q, want op?", o, s)
		}
	}
}

// TestKindStringOutOfRange: a plan kind outside the known set prints as "kind?", not a panic.
func TestKindStringOutOfRange(t *testing.T) {
	for _, k := range []Kind{0, Kind(len(kindNames)), Kind(len(kindNames) + 1)} {
		if s := k.String(); s != "kind?" {
			t.Errorf("Kind(%d).String() = %q, want kind?", k, s)
		}
	}
}

// TestCompareFoldASCII: exactly 'A' to 'Z' fold; the bytes either side ('@', '[') do not.
func TestCompareFoldASCII(t *testing.T) {
	if c := compareFoldASCII("AZ", "az"); c != 0 {
		t.Errorf("AZ vs az = %d, want 0", c)
	}
	for _, p := range [][2]string{{"@", "`"}, {"[", "{"}} {
		if c := compareFoldASCII(p[0], p[1]); c == 0 {
			t.Errorf("%q vs %q folded to equal", p[0], p[1])
		}
	}
}

// TestEvalDoubleAtInt64Limits: a Double exactly at ±2^63 compares exactly with Int64 literals
// at their limits: 2^63 is above the largest, -2^63 equals the smallest.
func TestEvalDoubleAtInt64Limits(t *testing.T) {
	e := &entity.Entity{PartitionKey: "pk", RowKey: "rk", Props: []entity.Property{
		{Name: "Top", Value: entity.DoubleValue(0x1p63)},
		{Name: "Bottom", Value: entity.DoubleValue(-0x1p63)},
	}}
	cases := []struct {
		filter string
		want   bool
	}{
		{"Top gt 9223372036854775807L", true}, {"Top eq 9223372036854775807L", false},
		{"Bottom eq -9223372036854775808L", true}, {"Bottom lt -9223372036854775808L", false},
		{"Bottom lt -9223372036854775807L", true},
	}
	for _, c := range cases {
		if got := evalString(t, c.filter, e); got != c.want {
			t.Errorf("%s = %v, want %v", c.filter, got, c.want)
		}
	}
}

// TestGuidLiteralHexEdges: every hex digit is accepted in a GUID literal, 'f' and 'F'
// included, and the value is lower-cased; 'g' is refused.
func TestGuidLiteralHexEdges(t *testing.T) {
	f, err := Parse("G eq guid'0123456f-89aF-bcde-ABCD-EF0000000000'")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.String(), "G eq guid'0123456f-89af-bcde-abcd-ef0000000000'"; got != want {
		t.Fatalf("parsed as %q, want %q", got, want)
	}
	for _, bad := range []string{"G eq guid'0123456g-89af-bcde-abcd-ef0000000000'", "G eq guid'0123456G-89af-bcde-abcd-ef0000000000'"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted a non-hex digit", bad)
		}
	}
}

// TestPlanStringEscapesDEL: the plan's debug text percent-escapes DEL (0x7F) like the
// control characters, keeping '~' (0x7E) as is.
func TestPlanStringEscapesDEL(t *testing.T) {
	f, err := Parse("PartitionKey eq 'a~\x7f'")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := PlanQuery(f).String(), "partition pk='a~%7F'"; got != want {
		t.Fatalf("plan %q, want %q", got, want)
	}
}
