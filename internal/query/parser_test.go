package query

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// parseCases are filters and their canonical print, or the error position and a fragment of
// the message. They also seed the fuzz test.
var parseCases = []struct {
	in   string
	want string // canonical form; "" when an error is expected
	pos  int    // error position
	msg  string // error fragment
}{
	// Comparisons and operators.
	{in: "PartitionKey eq 'p1'", want: "PartitionKey eq 'p1'"},
	{in: "  A  ne\t'x'  ", want: "A ne 'x'"},
	{in: "A gt 1 and B ge 2 and C lt 3 and D le 4", want: "A gt 1 and B ge 2 and C lt 3 and D le 4"},
	{in: "5 lt X", want: "X gt 5"},
	{in: "5 le X", want: "X ge 5"},
	{in: "'a' eq X", want: "X eq 'a'"},
	{in: "'a' ne X", want: "X ne 'a'"},
	{in: "1 gt X", want: "X lt 1"},
	{in: "1 ge X", want: "X le 1"},

	// Precedence: not > comparison > and > or; and/or left-associative and flattened.
	{in: "A eq 1 or B eq 2 and C eq 3", want: "A eq 1 or (B eq 2 and C eq 3)"},
	{in: "(A eq 1 or B eq 2) and C eq 3", want: "(A eq 1 or B eq 2) and C eq 3"},
	{in: "A eq 1 and (B eq 2 and C eq 3)", want: "A eq 1 and B eq 2 and C eq 3"},
	{in: "(A eq 1 or B eq 2) or (C eq 3)", want: "A eq 1 or B eq 2 or C eq 3"},
	{in: "not A eq 1", want: "not (A eq 1)"},
	{in: "not(A eq 1)", want: "not (A eq 1)"},
	{in: "not (A eq 1) and B", want: "not (A eq 1) and B"},
	{in: "not (A eq 1 and B eq 2)", want: "not (A eq 1 and B eq 2)"},
	{in: "not not Flag", want: "not not Flag"},
	{in: "(((A eq 1)))", want: "A eq 1"},
	{in: "(A eq 1)and(B eq 2)", want: "A eq 1 and B eq 2"},

	// Bare terms.
	{in: "IsActive", want: "IsActive"},
	{in: "not IsActive", want: "not IsActive"},
	{in: "true", want: "true"},
	{in: "false or IsActive", want: "false or IsActive"},
	{in: "True", want: "True"}, // a property named True; keywords are lower case

	// Literals.
	{in: "S eq 'O''Brien'", want: "S eq 'O''Brien'"},
	{in: "S eq ''", want: "S eq ''"},
	{in: "S eq ''''", want: "S eq ''''"},
	{in: "S eq 'say \"hi\"'", want: "S eq 'say \"hi\"'"},
	{in: "S eq 'a and b or c)'", want: "S eq 'a and b or c)'"},
	{in: "S eq 'ü😀'", want: "S eq 'ü😀'"},
	{in: "B eq true and C ne false", want: "B eq true and C ne false"},
	{in: "I eq 42", want: "I eq 42"},
	{in: "I eq -7", want: "I eq -7"},
	{in: "I eq 2147483647", want: "I eq 2147483647"},
	{in: "I eq -2147483648", want: "I eq -2147483648"},
	{in: "I eq 007", want: "I eq 7"},
	{in: "L eq 42L", want: "L eq 42L"},
	{in: "L eq 42l", want: "L eq 42L"},
	{in: "L eq 9007199254740993L", want: "L eq 9007199254740993L"},
	{in: "L eq -9223372036854775808L", want: "L eq -9223372036854775808L"},
	{in: "D eq 1.5", want: "D eq 1.5"},
	{in: "D eq 3.0", want: "D eq 3.0"},
	{in: "D eq 1e+20", want: "D eq 1e+20"},
	{in: "D eq 1e-05", want: "D eq 1e-05"},
	{in: "D eq 1E+20", want: "D eq 1e+20"},
	{in: "D eq 1e21", want: "D eq 1e+21"},
	{in: "D eq 1.5d", want: "D eq 1.5"},
	{in: "D eq 2D", want: "D eq 2.0"},
	{in: "D eq -0.0", want: "D eq -0.0"},
	{in: "D eq 1.7976931348623157E+308", want: "D eq 1.7976931348623157e+308"},
	{in: "D eq INF", want: "D eq INF"},
	{in: "D eq -INF", want: "D eq -INF"},
	{in: "D ne NaN", want: "D ne NaN"},
	{in: "T eq datetime'2020-01-01T00:00:00.0000000Z'", want: "T eq datetime'2020-01-01T00:00:00.0000000Z'"},
	{in: "T eq datetime'2020-01-01T00:00:00.000Z'", want: "T eq datetime'2020-01-01T00:00:00.0000000Z'"},
	{in: "T eq datetime'2020-01-01T00:00:00.123456Z'", want: "T eq datetime'2020-01-01T00:00:00.1234560Z'"},
	{in: "T eq datetime'2020-01-01T00:00:00Z'", want: "T eq datetime'2020-01-01T00:00:00.0000000Z'"},
	{in: "T eq datetime'2020-01-01T00:00:00'", want: "T eq datetime'2020-01-01T00:00:00.0000000Z'"},
	{in: "T eq datetime'2020-01-01T00:00'", want: "T eq datetime'2020-01-01T00:00:00.0000000Z'"},
	{in: "T eq datetime'2020-01-01T02:30:00+02:30'", want: "T eq datetime'2020-01-01T00:00:00.0000000Z'"},
	{in: "T eq datetime'2019-12-31T23:00:00.5-01:00'", want: "T eq datetime'2020-01-01T00:00:00.5000000Z'"},
	{in: "T eq datetime'2020-01-01T14:00:00+14:00'", want: "T eq datetime'2020-01-01T00:00:00.0000000Z'"}, // largest offset hour
	{in: "T eq datetime'2019-12-31T23:01:00-00:59'", want: "T eq datetime'2020-01-01T00:00:00.0000000Z'"}, // largest offset minute
	{in: "T ge datetime'0001-01-01T00:00:00Z'", want: "T ge datetime'0001-01-01T00:00:00.0000000Z'"},
	{in: "T eq DateTime'2024-02-29T12:00:00Z'", want: "T eq datetime'2024-02-29T12:00:00.0000000Z'"},
	{in: "G eq guid'C9DA6455-213D-42C9-9A79-3E9149A57833'", want: "G eq guid'c9da6455-213d-42c9-9a79-3e9149a57833'"},
	{in: "Bin eq X'0aFF'", want: "Bin eq X'0aff'"},
	{in: "Bin eq binary'0AFF'", want: "Bin eq X'0aff'"},
	{in: "Bin eq X''", want: "Bin eq X''"},

	// Property names: C# identifiers, Unicode letters included.
	{in: "_x1 eq 1", want: "_x1 eq 1"},
	{in: "Größe eq 1", want: "Größe eq 1"},
	{in: "zeta eq 1 and Zeta eq 2", want: "zeta eq 1 and Zeta eq 2"},                   // the last letter starts a name
	{in: "Cafe\u0301 eq 1 and n\u0661 eq 2", want: "Cafe\u0301 eq 1 and n\u0661 eq 2"}, // a combining mark, an Arabic-Indic digit

	// The SDK samples (wire-samples/*/27-query-filter-literals.txt).
	{
		in:   "PartitionKey eq 'pk ''quoted''' or ( StringVal ne 'it''s' and DateTimeVal ge datetime'2024-01-01T00:00:00.000000Z' and GuidVal eq guid'c9da6455-213d-42c9-9a79-3e9149a57833' and Int64Val eq 9007199254740993L )",
		want: "PartitionKey eq 'pk ''quoted''' or (StringVal ne 'it''s' and DateTimeVal ge datetime'2024-01-01T00:00:00.0000000Z' and GuidVal eq guid'c9da6455-213d-42c9-9a79-3e9149a57833' and Int64Val eq 9007199254740993L)",
	},
	{in: "TableName ge 'golist' and TableName lt 'golisu'", want: "TableName ge 'golist' and TableName lt 'golisu'"},

	// Errors.
	{in: "A eq", pos: 4, msg: "property name or literal expected"},
	{in: "A", want: "A"},
	{in: "A eq 1 B", pos: 7, msg: "'and', 'or' or end of filter expected"},
	{in: "(A eq 1", pos: 7, msg: "')' expected"},
	{in: "A eq 1)", pos: 6, msg: "end of filter"},
	{in: "A eq 'abc", pos: 5, msg: "There is an unterminated string literal"},
	{in: "A eq 'it''", pos: 5, msg: "unterminated string literal"},
	{in: "A eq datetime'2020", pos: 13, msg: "unterminated string literal"},
	{in: "X eq 5454161346626", pos: 5, msg: "Unrecognized 'Edm.Int32' literal '5454161346626' at position 5 in 'X eq 5454161346626'."},
	{in: "X eq 2147483648", pos: 5, msg: "Unrecognized 'Edm.Int32' literal '2147483648'"},
	{in: "X eq -2147483649", pos: 5, msg: "Edm.Int32"},
	{in: "X eq 9223372036854775808L", pos: 5, msg: "Unrecognized 'Edm.Int64' literal '9223372036854775808L'"},
	{in: "X eq 1e999", pos: 5, msg: "Unrecognized 'Edm.Double' literal"},
	{in: "X eq 1.", pos: 5, msg: "digit expected after '.'"},
	{in: "X eq 1e", pos: 5, msg: "digit expected in exponent"},
	{in: "X eq 1.5L", pos: 5, msg: "invalid numeric literal '1.5L'"},
	{in: "X eq 1.5m", pos: 5, msg: "invalid numeric literal"},
	{in: "X eq 12abc", pos: 5, msg: "invalid numeric literal"},
	{in: "X eq .5", pos: 5, msg: "unexpected character '.'"},
	{in: "X eq null", pos: 5, msg: "'null' literal is not supported"},
	{in: "null eq X", pos: 0, msg: "'null' literal is not supported"},
	{in: "startswith(Name, 'a')", pos: 0, msg: "function 'startswith' is not supported"},
	{in: "X eq 1 and length(Name) eq 3", pos: 11, msg: "function 'length' is not supported"},
	{in: "X add 1 eq 3", pos: 2, msg: "arithmetic operator 'add' is not supported"},
	{in: "X eq 1 mul 3", pos: 7, msg: "arithmetic operator 'mul' is not supported"},
	{in: "X eq -Y", pos: 5, msg: "'-' must start a numeric literal"},
	{in: "A eq B", pos: 0, msg: "Comparing property 'A' with property 'B' is not supported"},
	{in: "1 eq 1", pos: 0, msg: "Comparing two literals is not supported"},
	{in: "'x'", pos: 3, msg: "comparison operator expected"},
	{in: "42", pos: 2, msg: "comparison operator expected"},
	{in: "A EQ 1", pos: 2, msg: "'EQ' found, keywords are lower case"},
	{in: "A eq 1 AND B eq 2", pos: 7, msg: "'AND' found, keywords are lower case"},
	{in: "A eq 1 and", pos: 10, msg: "property name or literal expected"},
	{in: "and A", pos: 0, msg: "property name or literal expected, found 'and'"},
	{in: "not", pos: 3, msg: "expected"},
	{in: "()", pos: 1, msg: "found ')'"},
	{in: "A eq 1,", pos: 6, msg: "found ','"},
	{in: "A eq @", pos: 5, msg: "unexpected character '@'"},
	{in: "A eq -", pos: 5, msg: "'-' must start a numeric literal"}, // '-' ends the filter
	{in: "A eq 'x' eq 'y'", pos: 9, msg: "expected"},
	{in: "T eq datetime'2021-02-29T00:00:00Z'", pos: 5, msg: "Unrecognized 'Edm.DateTime' literal"},
	{in: "T eq datetime'2020-01-01T00:00:00.12345678Z'", pos: 5, msg: "Edm.DateTime"},
	{in: "T eq datetime'2020-01-01T24:00:00Z'", pos: 5, msg: "Edm.DateTime"},
	{in: "T eq datetime'2020-01-01 00:00:00Z'", pos: 5, msg: "Edm.DateTime"},
	{in: "T eq datetime'2020-01-01T00:00:00.Z'", pos: 5, msg: "Edm.DateTime"},
	{in: "T eq datetime'0000-01-01T00:00:00Z'", pos: 5, msg: "Edm.DateTime"},
	{in: "T eq datetime'0001-01-01T00:00:00+01:00'", pos: 5, msg: "Edm.DateTime"},
	{in: "T eq datetime'2020-01-01T00:00:00+15:00'", pos: 5, msg: "Edm.DateTime"},
	{in: "T eq datetime'2020-01-01T00:00:00+01:60'", pos: 5, msg: "Edm.DateTime"},
	{in: "T eq datetime''", pos: 5, msg: "Edm.DateTime"},
	{in: "G eq guid'c9da6455-213d-42c9-9a79-3e9149a5783'", pos: 5, msg: "Unrecognized 'Edm.Guid' literal"},
	{in: "G eq guid'c9da6455x213d-42c9-9a79-3e9149a57833'", pos: 5, msg: "Edm.Guid"},
	{in: "B eq X'01255'", pos: 5, msg: "Unrecognized 'Edm.Binary' literal 'X'01255''"},
	{in: "B eq X'0g'", pos: 5, msg: "Edm.Binary"},
	{in: "B eq foo'00'", pos: 5, msg: "unknown literal type 'foo'"},
	{in: "B eq'x'", want: "B eq 'x'"}, // a keyword may touch the quote
	{in: "A eq 'x' and \x01", pos: 13, msg: "unexpected character"},
	{in: "A eq 'x' and \xff", pos: 13, msg: "unexpected character"},
}

func TestParse(t *testing.T) {
	for _, c := range parseCases {
		f, err := Parse(c.in)
		if c.want != "" {
			if err != nil {
				t.Errorf("Parse(%q): %v", c.in, err)
				continue
			}
			if got := f.String(); got != c.want {
				t.Errorf("Parse(%q).String() = %q, want %q", c.in, got, c.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("Parse(%q) = %q, want error at %d", c.in, f.String(), c.pos)
			continue
		}
		var qe *Error
		if !errors.As(err, &qe) || !azerr.Is(err, azerr.InvalidInput) || azerr.From(err).Status() != 400 {
			t.Errorf("Parse(%q): error %v is not a query.Error wrapping InvalidInput", c.in, err)
			continue
		}
		if qe.Pos != c.pos || !strings.Contains(qe.Message(), c.msg) {
			t.Errorf("Parse(%q): error at %d %q, want at %d containing %q", c.in, qe.Pos, qe.Message(), c.pos, c.msg)
		}
		if want := "position " + itoa(c.pos) + " in '"; !strings.Contains(qe.Message(), want) {
			t.Errorf("Parse(%q): message %q does not name the position (%q)", c.in, qe.Message(), want)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestParseEmpty(t *testing.T) {
	for _, in := range []string{"", " ", "\t \t"} {
		f, err := Parse(in)
		if f != nil || err != nil {
			t.Errorf("Parse(%q) = %v, %v; want nil, nil", in, f, err)
		}
		if !f.Eval(&TableRow{}) || f.String() != "" {
			t.Errorf("nil filter must match everything and print empty")
		}
	}
}

// TestPositions checks node positions in the AST.
func TestPositions(t *testing.T) {
	f, err := Parse("not (A eq 1) or 5 lt B")
	if err != nil {
		t.Fatal(err)
	}
	or := f.Root.(*Logical)
	not := or.Terms[0].(*Not)
	a := not.X.(*Compare)
	b := or.Terms[1].(*Compare)
	got := []int{or.Pos(), not.Pos(), a.PropPos, a.ValuePos, b.Pos(), b.PropPos, b.ValuePos}
	want := []int{0, 0, 5, 10, 16, 21, 16}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("positions %v, want %v", got, want)
		}
	}
	if b.Op != Gt {
		t.Errorf("mirrored op %v, want gt", b.Op)
	}
}

func TestLimits(t *testing.T) {
	deepParen := strings.Repeat("(", 101) + "A eq 1" + strings.Repeat(")", 101)
	deepNot := strings.Repeat("not ", 101) + "A"
	manyOr := "A eq 1" + strings.Repeat(" or A eq 1", 1000)
	cases := []struct {
		in  string
		lim Limits
		msg string
	}{
		{deepParen, Limits{}, "nested deeper than 100"},
		{strings.Repeat("(", 1_000_000), Limits{MaxLength: 2_000_000}, "nested deeper than 100"},
		{deepNot, Limits{}, "nested deeper than 100"},
		{manyOr, Limits{}, "more than 1000 nodes"},
		{strings.Repeat(" ", 40_000) + "A", Limits{}, "longer than 32768 bytes"},
		{"A eq 1" + strings.Repeat(" or A eq 1", 15), Limits{MaxComparisons: 15}, "more than 15 comparisons"},
		{"A and B and C", Limits{MaxComparisons: 2}, "more than 2 comparisons"},
	}
	for _, c := range cases {
		_, err := ParseWithLimits(c.in, c.lim)
		if err == nil || !azerr.Is(err, azerr.InvalidInput) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseWithLimits(%.30q…): %v, want InvalidInput %q", c.in, err, c.msg)
		}
	}
	// Within the limits: 100 levels, 1000 nodes, 16 comparisons by default.
	ok := []string{
		strings.Repeat("(", 100) + "A eq 1" + strings.Repeat(")", 100),
		strings.Repeat("not ", 100) + "A",
		"A eq 1" + strings.Repeat(" or A eq 1", 998), // 999 comparisons + 1 or node
		"A eq 1" + strings.Repeat(" or A eq 1", 15),
	}
	for _, in := range ok {
		if _, err := Parse(in); err != nil {
			t.Errorf("Parse(%.30q…): %v", in, err)
		}
	}
	// Exactly at each limit; depth is nesting, so siblings do not add up.
	var siblings []string
	for range DefaultMaxDepth + 1 {
		siblings = append(siblings, "(A eq 1)", "not B")
	}
	atLimit := []struct {
		in  string
		lim Limits
	}{
		{strings.Repeat(" ", DefaultMaxLength-1) + "A", Limits{}},
		{"A eq 1" + strings.Repeat(" or A eq 1", 14), Limits{MaxComparisons: 15}},
		{strings.Join(siblings, " and "), Limits{}},
	}
	for _, c := range atLimit {
		if _, err := ParseWithLimits(c.in, c.lim); err != nil {
			t.Errorf("ParseWithLimits(%.30q…, %+v): %v", c.in, c.lim, err)
		}
	}
}
