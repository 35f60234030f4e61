package query

import (
	"math"
	"testing"

	"github.com/tablo/tablo/internal/entity"
)

func TestScannerTokens(t *testing.T) {
	in := "not(A eq 1)and B,'x' -INF  NaN null ge le Größe"
	want := []struct {
		kind tokKind
		pos  int
		text string
	}{
		{tNot, 0, "not"}, {tLParen, 3, "("}, {tIdent, 4, "A"}, {tEq, 6, "eq"}, {tLiteral, 9, "1"},
		{tRParen, 10, ")"}, {tAnd, 11, "and"}, {tIdent, 15, "B"}, {tComma, 16, ","},
		{tLiteral, 17, "'x'"}, {tLiteral, 21, "-INF"}, {tLiteral, 27, "NaN"}, {tNull, 31, "null"},
		{tGe, 36, "ge"}, {tLe, 39, "le"}, {tIdent, 42, "Größe"}, {tEOF, 49, ""},
	}
	s := scanner{src: in}
	for i, w := range want {
		tok, err := s.next()
		if err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if tok.kind != w.kind || tok.pos != w.pos || tok.text != w.text {
			t.Fatalf("token %d = {%d %d %q}, want %+v", i, tok.kind, tok.pos, tok.text, w)
		}
	}
}

func TestScannerLiterals(t *testing.T) {
	ticks := func(s string) int64 { return entity.Ticks(mustTime(s)) }
	cases := []struct {
		in   string
		want entity.Value
	}{
		{"'O''Brien'", entity.StringValue("O'Brien")},
		{"''''", entity.StringValue("'")},
		{"''", entity.StringValue("")},
		{"true", entity.BoolValue(true)},
		{"false", entity.BoolValue(false)},
		{"42", entity.Int32Value(42)},
		{"-7", entity.Int32Value(-7)},
		{"-0", entity.Int32Value(0)},
		{"42L", entity.Int64Value(42)},
		{"-9223372036854775808L", entity.Int64Value(math.MinInt64)},
		{"1.5", entity.DoubleValue(1.5)},
		{"1e+20", entity.DoubleValue(1e20)},
		{"1e-7", entity.DoubleValue(1e-7)},
		{"3d", entity.DoubleValue(3)},
		{"5e-324", entity.DoubleValue(5e-324)},
		{"1e-400", entity.DoubleValue(0)}, // underflow rounds to zero, as .NET does
		{"INF", entity.DoubleValue(math.Inf(1))},
		{"-INF", entity.DoubleValue(math.Inf(-1))},
		{"datetime'2020-01-01T00:00:00.1234567Z'", entity.DateTimeValue(ticks("2020-01-01T00:00:00.1234567Z"))},
		{"datetime'2020-01-01T00:00:00.1Z'", entity.DateTimeValue(ticks("2020-01-01T00:00:00.1Z"))},
		{"datetime'2020-01-01T00:00:00.25'", entity.DateTimeValue(ticks("2020-01-01T00:00:00.25Z"))}, // fraction ends the literal
		{"datetime'1601-01-01T00:00:00Z'", entity.DateTimeValue(entity.MinTicks)},
		{"datetime'9999-12-31T23:59:59.9999999Z'", entity.DateTimeValue(entity.MaxTicks)},
		{"datetime'2020-06-01T12:00:00-05:30'", entity.DateTimeValue(ticks("2020-06-01T17:30:00Z"))},
		{"datetime'1969-12-31T23:59:59.9999999Z'", entity.DateTimeValue(-1)},
		{"guid'C9DA6455-213D-42C9-9A79-3E9149A57833'", entity.GuidValue("c9da6455-213d-42c9-9a79-3e9149a57833")},
		{"X'0aFF'", entity.BinaryValue([]byte{0x0a, 0xff})},
		{"binary''", entity.BinaryValue([]byte{})},
	}
	for _, c := range cases {
		s := scanner{src: c.in}
		tok, err := s.next()
		if err != nil {
			t.Errorf("scan %q: %v", c.in, err)
			continue
		}
		if tok.kind != tLiteral || !entity.Equal(tok.val, c.want) || s.pos != len(c.in) {
			t.Errorf("scan %q = %+v (end %d), want %+v", c.in, tok.val, s.pos, c.want)
		}
	}
	s := scanner{src: "NaN"}
	if tok, _ := s.next(); tok.val.Type != entity.Double || !math.IsNaN(tok.val.F) {
		t.Errorf("NaN scanned as %+v", tok.val)
	}
}
