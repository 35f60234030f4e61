package query

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tablo/tablo/internal/azerr"
)

// dump renders an AST without positions, with exact literal bits, for structural equality.
func dump(x Expr) string {
	switch x := x.(type) {
	case *Logical:
		parts := make([]string, len(x.Terms))
		for i, t := range x.Terms {
			parts[i] = dump(t)
		}
		return x.Op.String() + "(" + strings.Join(parts, ",") + ")"
	case *Not:
		return "not(" + dump(x.X) + ")"
	case *Compare:
		v := x.Value
		return fmt.Sprintf("cmp(%q %v %v|%q|%x|%d|%x)", x.Prop, x.Op, v.Type, v.S, v.B, v.I, math.Float64bits(v.F))
	case *BoolProp:
		return fmt.Sprintf("prop(%q)", x.Name)
	case *BoolConst:
		return fmt.Sprintf("const(%v)", x.Value)
	}
	return "?"
}

// FuzzParse: no panic on any input; errors are positioned InvalidInput; a parsed filter
// prints to a canonical form that parses back to the same AST and prints identically.
func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		f.Add(c.in)
	}
	f.Add("PartitionKey eq 'a' and (RowKey ge 'b' or not (X lt 1.5e10d)) or Y")
	f.Fuzz(func(t *testing.T, in string) {
		flt, err := Parse(in)
		if err != nil {
			var qe *Error
			if !errors.As(err, &qe) || !azerr.Is(err, azerr.InvalidInput) {
				t.Fatalf("Parse(%q): %v is not a positioned InvalidInput", in, err)
			}
			if qe.Pos < 0 || qe.Pos > len(in) {
				t.Fatalf("Parse(%q): position %d out of range", in, qe.Pos)
			}
			return
		}
		if flt == nil {
			if strings.Trim(in, " \t\r\n") != "" {
				t.Fatalf("Parse(%q) = nil filter", in)
			}
			return
		}
		printed := flt.String()
		// The canonical form may be longer (e.g. datetime fractions) or nest one level deeper
		// ("not (…)"), so reparse with relaxed limits: the property is about meaning.
		again, err := ParseWithLimits(printed, Limits{MaxLength: 1 << 30, MaxDepth: 1 << 20})
		if err != nil {
			t.Fatalf("Parse(%q) printed %q, which does not parse: %v", in, printed, err)
		}
		if again.String() != printed {
			t.Fatalf("print not stable: %q → %q → %q", in, printed, again.String())
		}
		if dump(again.Root) != dump(flt.Root) {
			t.Fatalf("AST changed by print: %q\n%s\n%s", in, dump(flt.Root), dump(again.Root))
		}
		p := PlanQuery(flt)
		_ = p.String()
		_ = p.Spans(1)
	})
}

// FuzzToken: any UTF-8 key survives encode → URL query → decode; DecodeToken never panics
// and anything it accepts re-encodes to a token that decodes to the same key.
func FuzzToken(f *testing.F) {
	for _, s := range []string{"", "13", "listEntitiesTest", "pk 'quoted'", "rk-ü+&=%", "😀", "1!4!MTM-", "1!0!", "1!3!MTM"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if key, err := DecodeToken(s); err == nil {
			if back, err := DecodeToken(EncodeToken(key)); err != nil || back != key {
				t.Fatalf("DecodeToken(%q) = %q, which does not round-trip: %q, %v", s, key, back, err)
			}
		} else if !azerr.Is(err, azerr.InvalidInput) {
			t.Fatalf("DecodeToken(%q): %v", s, err)
		}
		if !utf8.ValidString(s) || len(s) > 3<<10 { // keys are at most 1,024 UTF-16 units
			return
		}
		tok := EncodeToken(s)
		for _, wire := range []string{url.QueryEscape(tok), tok} { // Go/Python escape; JS sends raw
			q, err := url.ParseQuery("NextPartitionKey=" + wire)
			if err != nil {
				t.Fatalf("token %q is not a valid query value: %v", tok, err)
			}
			if key, err := DecodeToken(q.Get("NextPartitionKey")); err != nil || key != s {
				t.Fatalf("key %q → token %q → %q, %v", s, tok, key, err)
			}
		}
	})
}

// FuzzParseSelect: no panic; accepted lists hold only valid, distinct names within the limit.
func FuzzParseSelect(f *testing.F) {
	for _, s := range []string{"", "*", "PartitionKey,RowKey,Name", " a , ,b,a", "a-b", "Größe", "1a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ParseSelect(s)
		if err != nil {
			if !azerr.Is(err, azerr.InvalidInput) {
				t.Fatalf("ParseSelect(%q): %v", s, err)
			}
			return
		}
		if len(names) > MaxSelect {
			t.Fatalf("ParseSelect(%q): %d names", s, len(names))
		}
		seen := map[string]bool{}
		for _, n := range names {
			if !validName(n) || seen[n] {
				t.Fatalf("ParseSelect(%q) = %q", s, names)
			}
			seen[n] = true
		}
	})
}
