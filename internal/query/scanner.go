package query

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tablo/tablo/internal/entity"
)

// scanner splits a filter into tokens. It decodes literals as it goes, so a token either
// carries a valid typed value or the scan fails with a positioned error.
type scanner struct {
	src string
	pos int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// identStart: a C# identifier starts with a letter (including letter numbers) or '_'.
func identStart(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || (r|0x20 >= 'a' && r|0x20 <= 'z')
	}
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r)
}

// identPart: later characters may also be digits, connectors, combining and format marks.
func identPart(r rune) bool {
	if r < utf8.RuneSelf {
		return identStart(r) || isDigit(byte(r))
	}
	return identStart(r) || unicode.In(r, unicode.Nd, unicode.Pc, unicode.Mn, unicode.Mc, unicode.Cf)
}

// identEnd returns the end offset of the identifier characters starting at i.
func (s *scanner) identEnd(i int) int {
	for i < len(s.src) {
		r, n := utf8.DecodeRuneInString(s.src[i:])
		if !identPart(r) || r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	return i
}

// next returns the next token.
func (s *scanner) next() (token, *Error) {
	for s.pos < len(s.src) && isSpace(s.src[s.pos]) {
		s.pos++
	}
	start := s.pos
	if start >= len(s.src) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := s.src[start]
	switch {
	case c == '(':
		s.pos++
		return token{kind: tLParen, pos: start, text: "("}, nil
	case c == ')':
		s.pos++
		return token{kind: tRParen, pos: start, text: ")"}, nil
	case c == ',':
		s.pos++
		return token{kind: tComma, pos: start, text: ","}, nil
	case c == '\'':
		return s.stringLit()
	case c == '-' || isDigit(c):
		return s.number()
	}
	r, n := utf8.DecodeRuneInString(s.src[start:])
	if r == utf8.RuneError && n == 1 || !identStart(r) {
		return token{}, errAt(s.src, start, "Syntax error: unexpected character %q", r)
	}
	end := s.identEnd(start + n)
	word := s.src[start:end]
	s.pos = end
	if end < len(s.src) && s.src[end] == '\'' {
		if t, ok := typedPrefix(word); ok {
			return s.typedLit(start, t)
		}
		if _, kw := keyword(word); !kw {
			return token{}, errAt(s.src, start, "Syntax error: unknown literal type '%s'", word)
		}
	}
	switch word {
	case "true":
		return token{kind: tLiteral, pos: start, text: word, val: entity.BoolValue(true)}, nil
	case "false":
		return token{kind: tLiteral, pos: start, text: word, val: entity.BoolValue(false)}, nil
	case "INF":
		return token{kind: tLiteral, pos: start, text: word, val: entity.DoubleValue(math.Inf(1))}, nil
	case "NaN":
		return token{kind: tLiteral, pos: start, text: word, val: entity.DoubleValue(math.NaN())}, nil
	}
	if k, ok := keyword(word); ok {
		return token{kind: k, pos: start, text: word}, nil
	}
	return token{kind: tIdent, pos: start, text: word}, nil
}

// typedPrefix recognises the prefix of a quoted typed literal (datetime'…', guid'…',
// X'…', binary'…'), in any case.
func typedPrefix(word string) (entity.Type, bool) {
	switch {
	case strings.EqualFold(word, "datetime"):
		return entity.DateTime, true
	case strings.EqualFold(word, "guid"):
		return entity.Guid, true
	case strings.EqualFold(word, "binary"), strings.EqualFold(word, "X"):
		return entity.Binary, true
	}
	return 0, false
}

// stringLit scans a quoted string; a doubled quote stands for one quote:
//
//	stringLit = "'" { anyCharExceptQuote | "''" } "'" .
//
// The value aliases the source unless it contains escaped quotes.
func (s *scanner) stringLit() (token, *Error) {
	start := s.pos
	var buf []byte
	seg := start + 1
	for i := start + 1; i < len(s.src); i++ {
		if s.src[i] != '\'' {
			continue
		}
		if i+1 < len(s.src) && s.src[i+1] == '\'' {
			buf = append(buf, s.src[seg:i+1]...)
			i++
			seg = i + 1
			continue
		}
		var v string
		if buf == nil {
			v = s.src[seg:i]
		} else {
			v = string(append(buf, s.src[seg:i]...))
		}
		s.pos = i + 1
		return token{kind: tLiteral, pos: start, text: s.src[start:s.pos], val: entity.StringValue(v)}, nil
	}
	return token{}, errAt(s.src, start, "There is an unterminated string literal")
}

// typedLit scans the quoted part of datetime'…', guid'…' or X'…'/binary'…'. start is the
// offset of the prefix; s.pos is at the opening quote.
func (s *scanner) typedLit(start int, t entity.Type) (token, *Error) {
	open := s.pos
	closing := strings.IndexByte(s.src[open+1:], '\'')
	if closing < 0 {
		return token{}, errAt(s.src, open, "There is an unterminated string literal")
	}
	body := s.src[open+1 : open+1+closing]
	s.pos = open + 2 + closing
	text := s.src[start:s.pos]
	var (
		v  entity.Value
		ok bool
	)
	switch t {
	case entity.DateTime:
		var ticks int64
		ticks, ok = parseDateTime(body)
		v = entity.DateTimeValue(ticks)
	case entity.Guid:
		var g string
		g, ok = parseGuid(body)
		v = entity.GuidValue(g)
	case entity.Binary:
		var b []byte
		b, ok = parseHex(body)
		v = entity.BinaryValue(b)
	}
	if !ok {
		return token{}, errAt(s.src, start, "Unrecognized '%s' literal '%s'", t, text)
	}
	return token{kind: tLiteral, pos: start, text: text, val: v}, nil
}

// number scans int32Lit, int64Lit, doubleLit and -INF:
//
//	[ "-" ] digits [ "." digits ] [ ( "e" | "E" ) [ "+" | "-" ] digits ] [ "L" | "l" | "d" | "D" ]
//
// An "L" suffix requires an integer; a "d" suffix makes a Double of any form (OData v3).
func (s *scanner) number() (token, *Error) {
	start := s.pos
	i := start
	if s.src[i] == '-' {
		i++
		if strings.HasPrefix(s.src[i:], "INF") && s.identEnd(i) == i+3 {
			s.pos = i + 3
			return token{kind: tLiteral, pos: start, text: s.src[start:s.pos], val: entity.DoubleValue(math.Inf(-1))}, nil
		}
		if i >= len(s.src) || !isDigit(s.src[i]) {
			return token{}, errAt(s.src, start, "Syntax error: '-' must start a numeric literal (arithmetic is not supported)")
		}
	}
	digits := func() bool {
		j := i
		for i < len(s.src) && isDigit(s.src[i]) {
			i++
		}
		return i > j
	}
	digits()
	double := false
	if i < len(s.src) && s.src[i] == '.' {
		i++
		if !digits() {
			return token{}, errAt(s.src, start, "Syntax error: digit expected after '.'")
		}
		double = true
	}
	if i < len(s.src) && (s.src[i] == 'e' || s.src[i] == 'E') {
		i++
		if i < len(s.src) && (s.src[i] == '+' || s.src[i] == '-') {
			i++
		}
		if !digits() {
			return token{}, errAt(s.src, start, "Syntax error: digit expected in exponent")
		}
		double = true
	}
	numEnd := i
	t := entity.Int32
	if i < len(s.src) {
		switch s.src[i] {
		case 'L', 'l':
			if !double {
				t = entity.Int64
				i++
			}
		case 'd', 'D':
			t = entity.Double
			i++
		}
	}
	if t == entity.Int32 && double {
		t = entity.Double
	}
	if end := s.identEnd(i); end != i {
		return token{}, errAt(s.src, start, "Syntax error: invalid numeric literal '%s'", s.src[start:end])
	}
	s.pos = i
	text := s.src[start:i]
	num := s.src[start:numEnd]
	tok := token{kind: tLiteral, pos: start, text: text}
	switch t {
	case entity.Int32:
		n, err := strconv.ParseInt(num, 10, 32)
		if err != nil {
			return token{}, errAt(s.src, start, "Unrecognized 'Edm.Int32' literal '%s'", text)
		}
		tok.val = entity.Int32Value(int32(n))
	case entity.Int64:
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return token{}, errAt(s.src, start, "Unrecognized 'Edm.Int64' literal '%s'", text)
		}
		tok.val = entity.Int64Value(n)
	default:
		f, err := strconv.ParseFloat(num, 64)
		if err != nil && (math.IsInf(f, 0) || !errors.Is(err, strconv.ErrRange)) {
			return token{}, errAt(s.src, start, "Unrecognized 'Edm.Double' literal '%s'", text)
		}
		tok.val = entity.DoubleValue(f)
	}
	return tok, nil
}
