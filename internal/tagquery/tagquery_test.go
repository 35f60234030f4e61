package tagquery

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func tagsOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestMatch(t *testing.T) {
	tags := tagsOf(map[string]string{"Project": "Contoso", "Date": "2020-05-01", "@container": "c1", "it's": "a'b"})
	for _, c := range []struct {
		expr string
		mode Mode
		want bool
	}{
		{`"Project" = 'Contoso'`, Find, true},
		{`Project = 'Contoso'`, Find, true},
		{`Project='Contoso'`, Find, true},
		{`"Project" = 'contoso'`, Find, false},
		{`"Date" >= '2020-05-01' and "Date" < '2020-06-01'`, Find, true},
		{`"Date" > '2020-05-01' AND "Date" <= '2020-06-01'`, Find, false},
		{`"Missing" < 'z'`, Find, false},
		{`Date <= '2020-05-01'`, Find, true},
		{`Date < '2020-05-01'`, Find, false},
		{`Date >= '2020-05-01'`, Find, true},
		{`Date > '2020-05-01'`, Find, false},
		{`@container = 'c1' AND Project = 'Contoso'`, Find, true},
		{`"it's" = 'a''b'`, Find, true},
		{`Project <> 'Contoso' OR (Date = '2020-05-01' AND Project = 'Contoso')`, Condition, true},
		{`Project <> 'Contoso' or Date = 'x'`, Condition, false},
		{`"Missing" <> 'x'`, Condition, false},
	} {
		e, err := Parse(c.expr, c.mode)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := e.Match(tags); got != c.want {
			t.Errorf("%s: got %v, want %v", c.expr, got, c.want)
		}
	}
}

func TestKeys(t *testing.T) {
	e, err := Parse(`@container = 'a' AND "b" > '1' AND "b" < '9' AND c = 'x'`, Find)
	if err != nil {
		t.Fatal(err)
	}
	if k := e.Keys(); len(k) != 2 || k[0] != "b" || k[1] != "c" {
		t.Errorf("keys %q", k)
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, c := range []struct {
		expr string
		mode Mode
	}{
		{``, Find},
		{`Project`, Find},
		{`Project = Contoso`, Find},
		{`Project = 'Contoso`, Find},
		{`"Project = 'Contoso'`, Find},
		{`Project = 'a' OR Date = 'b'`, Find},
		{`Project <> 'a'`, Find},
		{`(Project = 'a')`, Find},
		{`Project = 'a' AND Project = 'b'`, Find},
		{`Date > 'a' AND Date > 'b'`, Find},
		{`Date > 'a' AND Date < 'b' AND Date < 'c'`, Find},
		{`@other = 'a'`, Find},
		{`@container = 'a'`, Condition},
		{`a = '1' AND`, Condition},
		{`(a = '1'`, Condition},
		{`a = '1')`, Condition},
		{`a = '1' b = '2'`, Condition},
		{`a='1' and b='1' and c='1' and d='1' and e='1' and f='1' and g='1' and h='1' and i='1' and j='1' and k='1'`, Find},
		{`((((((((((((((((((((((((((((((((((a='1'))))))))))))))))))))))))))))))))))`, Condition},
	} {
		if _, err := Parse(c.expr, c.mode); !errors.Is(err, ErrSyntax) {
			t.Errorf("%q (mode %d): %v, want a syntax error", c.expr, c.mode, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`"Project" = 'Contoso'`, `a>='1' AND a<'2'`, `(a='1' OR b<>'2') and c<='3'`, `@container='x'`, `"a""b"='c''d'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range []Mode{Find, Condition} {
			e, err := Parse(s, m)
			if err != nil {
				if !errors.Is(err, ErrSyntax) {
					t.Fatalf("%q: error %v is not a syntax error", s, err)
				}
				continue
			}
			if len(e.Keys()) > MaxComparisons {
				t.Fatalf("%q: %d keys", s, len(e.Keys()))
			}
			e.Match(func(string) (string, bool) { return "v", true })
		}
	})
}

// A Find range may name its bounds in either order; two bounds of the same side, or a third
// comparison of the key, are refused.
func TestFindRanges(t *testing.T) {
	tags := tagsOf(map[string]string{"Date": "2020-05-15"})
	for _, c := range []struct {
		expr string
		want bool
	}{
		{`Date < '2020-06-01' AND Date > '2020-05-01'`, true},
		{`Date <= '2020-05-15' AND Date >= '2020-05-15'`, true},
		{`Date <= '2020-05-14' AND Date >= '2020-05-01'`, false},
		{`Date > '2020-05-01' AND Date <= '2020-05-15'`, true},
	} {
		e, err := Parse(c.expr, Find)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := e.Match(tags); got != c.want {
			t.Errorf("%s: got %v, want %v", c.expr, got, c.want)
		}
	}
	for _, expr := range []string{
		`Date < 'b' AND Date <= 'c'`,
		`Date <= 'b' AND Date < 'c'`,
		`Date >= 'b' AND Date > 'c'`,
		`Date = 'b' AND Date < 'c'`,
		`Date < 'c' AND Date = 'b'`,
		`Date > 'a' AND Date < 'c' AND Date >= 'b'`,
		`Date > 'a' AND Date < 'c' AND Date <= 'b'`,
		`Date > 'a' AND Date < 'c' AND Date = 'b'`,
	} {
		if _, err := Parse(expr, Find); !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: %v, want a syntax error", expr, err)
		}
	}
}

// comparisons returns n comparisons of distinct keys joined with AND.
func comparisons(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, fmt.Sprintf("k%d = 'v'", i))
	}
	return strings.Join(parts, " AND ")
}

// Exactly MaxComparisons comparisons parse; one more does not (both dialects).
func TestComparisonLimitEdge(t *testing.T) {
	for _, m := range []Mode{Find, Condition} {
		e, err := Parse(comparisons(MaxComparisons), m)
		if err != nil {
			t.Fatalf("mode %d, %d comparisons: %v", m, MaxComparisons, err)
		}
		if len(e.Keys()) != MaxComparisons {
			t.Errorf("mode %d: %d keys", m, len(e.Keys()))
		}
		if _, err := Parse(comparisons(MaxComparisons+1), m); !errors.Is(err, ErrSyntax) {
			t.Errorf("mode %d, %d comparisons: %v", m, MaxComparisons+1, err)
		}
	}
}

// Nesting is bounded by depth (the whole expression is level 1): maxDepth levels parse,
// one more does not, and many parenthesised groups side by side are not nesting.
func TestNestingDepthEdge(t *testing.T) {
	nest := func(levels int) string {
		return strings.Repeat("(", levels-1) + "a = '1'" + strings.Repeat(")", levels-1)
	}
	if _, err := Parse(nest(maxDepth), Condition); err != nil {
		t.Errorf("%d levels: %v", maxDepth, err)
	}
	if _, err := Parse(nest(maxDepth+1), Condition); !errors.Is(err, ErrSyntax) {
		t.Errorf("%d levels: %v, want a syntax error", maxDepth+1, err)
	}
	var groups []string
	for i := range MaxComparisons {
		groups = append(groups, fmt.Sprintf("%sk%d = 'v'%s", strings.Repeat("(", 8), i, strings.Repeat(")", 8)))
	}
	wide := strings.Join(groups, " OR ")
	e, err := Parse(wide, Condition)
	if err != nil {
		t.Fatalf("%d groups of 9 levels: %v", MaxComparisons, err)
	}
	if !e.Match(tagsOf(map[string]string{"k9": "v"})) {
		t.Errorf("%s: no match", wide)
	}
}

// Input that ends where a value, a name or a closing quote is due is a syntax error, not a
// read past the end.
func TestTruncatedInput(t *testing.T) {
	for _, c := range []struct {
		expr string
		mode Mode
	}{
		{`Project =`, Find},
		{`Project <= `, Find},
		{`a = '1' AND `, Condition},
		{`a = '1' OR`, Condition},
		{`(`, Condition},
		{`"Project`, Find},
		{`Project = 'it''`, Find},
		{`"a""`, Condition},
	} {
		if _, err := Parse(c.expr, c.mode); !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: %v, want a syntax error", c.expr, err)
		}
	}
}
