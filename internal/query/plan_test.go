package query

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/keys"
)

func TestPlan(t *testing.T) {
	cases := []struct {
		filter   string
		plan     string // Plan.String()
		residual string // Residual.String(); "" for none
	}{
		{"", "table-scan", ""},
		{"PartitionKey eq 'p1' and RowKey eq 'r1'", "point pk='p1' rk='r1'", ""},
		{"RowKey eq 'r1' and PartitionKey eq 'p1'", "point pk='p1' rk='r1'", ""},
		{"PartitionKey eq 'p1' and (RowKey eq 'r1' and Age gt 3)", "point pk='p1' rk='r1' +residual", "Age gt 3"},
		{"PartitionKey eq 'p1'", "partition pk='p1'", ""},
		{"PartitionKey eq 'p1' and Name eq 'x'", "partition pk='p1' +residual", "Name eq 'x'"},
		{"PartitionKey eq 'p1' and RowKey ge 'a' and RowKey lt 'b'", "row-range pk='p1' rk=['a','b')", ""},
		{"PartitionKey eq 'p1' and RowKey gt 'a' and RowKey le 'b' and X", "row-range pk='p1' rk=('a','b'] +residual", "X"},
		{"PartitionKey eq 'p1' and RowKey lt 'm'", "row-range pk='p1' rk=[-inf,'m')", ""},
		{"PartitionKey eq 'p1' and RowKey ge 'm'", "row-range pk='p1' rk=['m',+inf]", ""},
		{"PartitionKey eq 'p1' and RowKey ge ''", "partition pk='p1'", ""},
		{"PartitionKey ge 'a' and PartitionKey lt 'b'", "partition-range pk=['a','b')", ""},
		{"PartitionKey gt 'a'", "partition-range pk=('a',+inf]", ""},
		{"PartitionKey le 'a'", "partition-range pk=[-inf,'a']", ""},
		{"PartitionKey ge ''", "table-scan", ""},
		{"PartitionKey le ''", "partition pk=''", ""},
		{"PartitionKey ge 'a' and PartitionKey le 'a'", "partition pk='a'", ""},
		{"PartitionKey ge 'a' and PartitionKey lt 'c' and RowKey eq 'x'", "partition-range pk=['a','c') +residual", "RowKey eq 'x'"},
		{"RowKey eq 'x'", "table-scan +residual", "RowKey eq 'x'"},
		{"Name eq 'x'", "table-scan +residual", "Name eq 'x'"},
		{"Timestamp gt datetime'2020-01-01T00:00:00Z'", "table-scan +residual", "Timestamp gt datetime'2020-01-01T00:00:00.0000000Z'"},

		// Unions.
		{"PartitionKey eq 'b' or PartitionKey eq 'a'", "union partition pk='a' | partition pk='b'", ""},
		{"(PartitionKey eq 'a' and RowKey eq '1') or (PartitionKey eq 'a' and RowKey eq '2')", "union point pk='a' rk='1' | point pk='a' rk='2'", ""},
		{"PartitionKey eq 'a' and (RowKey eq '1' or RowKey eq '2')", "union point pk='a' rk='1' | point pk='a' rk='2'", ""},
		{"PartitionKey eq 'a' or PartitionKey eq 'a'", "partition pk='a'", ""},
		{"(PartitionKey ge 'a' and PartitionKey lt 'c') or (PartitionKey ge 'b' and PartitionKey lt 'd')", "partition-range pk=['a','d')", ""},
		{"(PartitionKey ge 'a' and PartitionKey lt 'b') or PartitionKey eq 'b'", "partition-range pk=['a','b']", ""},
		{"PartitionKey eq 'a' or Name eq 'x'", "table-scan +residual", "PartitionKey eq 'a' or Name eq 'x'"},
		{"(PartitionKey eq 'a' and Name eq 'x') or PartitionKey eq 'b'", "union partition pk='a' | partition pk='b' +residual", "(PartitionKey eq 'a' and Name eq 'x') or PartitionKey eq 'b'"},
		{"Name eq 'x' and (PartitionKey eq 'a' or PartitionKey eq 'b')", "union partition pk='a' | partition pk='b' +residual", "Name eq 'x'"},
		{"PartitionKey ne 'm'", "union partition-range pk=[-inf,'m') | partition-range pk=('m',+inf]", ""},
		{"PartitionKey eq 'p' and RowKey ne 'm'", "union row-range pk='p' rk=[-inf,'m') | row-range pk='p' rk=('m',+inf]", ""},

		// Contradictions.
		{"PartitionKey eq 'a' and PartitionKey eq 'b'", "empty", ""},
		{"PartitionKey eq 'a' and PartitionKey gt 'a'", "empty", ""},
		{"PartitionKey ge 'b' and PartitionKey lt 'a'", "empty", ""},
		{"PartitionKey eq 'a' and RowKey gt 'b' and RowKey lt 'b'", "empty", ""},
		{"PartitionKey lt ''", "empty", ""},
		{"false", "empty", ""},
		{"false and Name eq 'x'", "empty", ""},
		{"true", "table-scan", ""},
		{"not false", "table-scan", ""},

		// Keys against literals of other types: a mismatch, so eq/gt/ge never hold and
		// ne/lt/le always do. The plan must not treat 3 as the string '3'.
		{"PartitionKey eq 3", "empty", ""},
		{"PartitionKey gt 3L", "empty", ""},
		{"PartitionKey lt 3", "table-scan", ""},
		{"PartitionKey ne guid'c9da6455-213d-42c9-9a79-3e9149a57833'", "table-scan", ""},
		{"PartitionKey eq 'a' and RowKey le 1.5", "partition pk='a'", ""},
		{"PartitionKey eq 'a' or PartitionKey eq true", "partition pk='a'", ""},
		{"not (PartitionKey eq 3)", "table-scan", ""},
		{"PartitionKey", "empty", ""},
		{"not RowKey", "table-scan", ""},

		// Things the planner leaves to the residual.
		{"not (PartitionKey eq 'a')", "table-scan +residual", "not (PartitionKey eq 'a')"},
		{"PartitionKey eq 'a' and not (RowKey eq 'b')", "partition pk='a' +residual", "not (RowKey eq 'b')"},

		// Mirrored literals, quotes and Unicode in keys.
		{"'p' eq PartitionKey and 'r' le RowKey", "row-range pk='p' rk=['r',+inf]", ""},
		{"PartitionKey eq 'pk ''quoted''' and RowKey eq 'rk-ü+&=%'", "point pk='pk ''quoted''' rk='rk-%C3%BC+&=%25'", ""},
		{"PartitionKey ge '😀' and PartitionKey lt '\uFFFD'", "partition-range pk=['%F0%9F%98%80','%EF%BF%BD')", ""},
		{"PartitionKey ge '\uFFFD' and PartitionKey lt '😀'", "empty", ""}, // UTF-16 order: U+FFFD > U+1F600
	}
	for _, c := range cases {
		f, err := Parse(c.filter)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.filter, err)
		}
		p := PlanQuery(f)
		if got := p.String(); got != c.plan {
			t.Errorf("PlanQuery(%q) = %s, want %s", c.filter, got, c.plan)
		}
		if got := p.Residual.String(); got != c.residual {
			t.Errorf("PlanQuery(%q).Residual = %q, want %q", c.filter, got, c.residual)
		}
	}
}

func TestPlanPoint(t *testing.T) {
	f, _ := Parse("PartitionKey eq 'p' and RowKey eq 'r'")
	pk, rk, ok := PlanQuery(f).Point()
	if !ok || pk != "p" || rk != "r" {
		t.Errorf("Point() = %q, %q, %v", pk, rk, ok)
	}
	if _, _, ok := PlanQuery(nil).Point(); ok {
		t.Error("table scan reported a point")
	}
}

func TestSpans(t *testing.T) {
	const id = 7
	span := func(filter string) []Span {
		f, err := Parse(filter)
		if err != nil {
			t.Fatal(err)
		}
		return PlanQuery(f).Spans(id)
	}
	after := func(k []byte) []byte { return append(k, 0x00) }
	cases := []struct {
		filter string
		want   []Span
	}{
		{"", []Span{{keys.TablePrefix(id), keys.TableEnd(id)}}},
		{"false", []Span{}},
		{"PartitionKey eq 'p' and RowKey eq 'r'", []Span{{keys.Entity(id, "p", "r"), after(keys.Entity(id, "p", "r"))}}},
		{"PartitionKey eq 'p'", []Span{{keys.PartitionPrefix(id, "p"), keys.PrefixEnd(keys.PartitionPrefix(id, "p"))}}},
		{"PartitionKey eq 'p' and RowKey gt 'a' and RowKey le 'x'", []Span{{after(keys.Entity(id, "p", "a")), after(keys.Entity(id, "p", "x"))}}},
		{"PartitionKey ge 'a' and PartitionKey lt 'b'", []Span{{keys.PartitionPrefix(id, "a"), keys.PartitionPrefix(id, "b")}}},
		{"PartitionKey gt 'a'", []Span{{keys.PrefixEnd(keys.PartitionPrefix(id, "a")), keys.TableEnd(id)}}},
	}
	for _, c := range cases {
		got := span(c.filter)
		if len(got) != len(c.want) {
			t.Errorf("Spans(%q) = %x, want %x", c.filter, got, c.want)
			continue
		}
		for i := range got {
			if !bytes.Equal(got[i].Start, c.want[i].Start) || !bytes.Equal(got[i].End, c.want[i].End) {
				t.Errorf("Spans(%q)[%d] = %x, want %x", c.filter, i, got[i], c.want[i])
			}
		}
	}
	// "RowKey le 'x'" includes 'x' but no longer row key, however close.
	s := span("PartitionKey eq 'p' and RowKey le 'x'")[0]
	for _, rk := range []string{"x", "w", "", "x\x00"[:1]} {
		if k := keys.Entity(id, "p", rk); bytes.Compare(k, s.Start) < 0 || bytes.Compare(k, s.End) >= 0 {
			t.Errorf("key (p,%q) not in span", rk)
		}
	}
	for _, rk := range []string{"x\x00", "x\x01", "xa", "y"} {
		if k := keys.Entity(id, "p", rk); bytes.Compare(k, s.End) < 0 {
			t.Errorf("key (p,%q) in span", rk)
		}
	}
}

func TestClipSpans(t *testing.T) {
	spans := []Span{{[]byte("b"), []byte("d")}, {[]byte("f"), []byte("h")}}
	cases := []struct {
		from string
		want []Span
	}{
		{"a", spans},
		{"c", []Span{{[]byte("c"), []byte("d")}, {[]byte("f"), []byte("h")}}},
		{"d", []Span{{[]byte("f"), []byte("h")}}},
		{"e", []Span{{[]byte("f"), []byte("h")}}},
		{"h", []Span{}},
	}
	for _, c := range cases {
		got := ClipSpans(spans, []byte(c.from))
		if len(got) != len(c.want) {
			t.Errorf("ClipSpans(%q) = %q, want %q", c.from, got, c.want)
			continue
		}
		for i := range got {
			if !bytes.Equal(got[i].Start, c.want[i].Start) || !bytes.Equal(got[i].End, c.want[i].End) {
				t.Errorf("ClipSpans(%q) = %q, want %q", c.from, got, c.want)
			}
		}
	}
}

// TestPlanBoxCap pins maxBoxes at its edge: an "or" of exactly maxBoxes partitions is a
// union of that many ranges with no residual; one more term widens the plan to a table
// scan that keeps the whole filter. The same holds for an "and" of two "or"s whose
// product of boxes is exactly maxBoxes, or one past it.
func TestPlanBoxCap(t *testing.T) {
	ors := func(prop string, n int) string {
		terms := make([]string, n)
		for i := range terms {
			terms[i] = fmt.Sprintf("%s eq 'k%03d'", prop, i)
		}
		return "(" + strings.Join(terms, " or ") + ")"
	}
	cases := []struct {
		filter string
		ranges int // 0: a widened table scan that keeps the filter as residual
	}{
		{ors("PartitionKey", maxBoxes), maxBoxes},
		{ors("PartitionKey", maxBoxes+1), 0},
		{ors("PartitionKey", 8) + " and " + ors("RowKey", 8), maxBoxes},
		{ors("PartitionKey", 5) + " and " + ors("RowKey", 13), 0},
	}
	for _, c := range cases {
		f, err := Parse(c.filter)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		p := PlanQuery(f)
		switch {
		case c.ranges == 0:
			if p.Kind != TableScan || p.Residual != f {
				t.Errorf("%.60s…: plan %v with residual %v; want a table scan keeping the filter", c.filter, p.Kind, p.Residual != nil)
			}
		case p.Kind != Union || len(p.Ranges) != c.ranges || p.Residual != nil:
			t.Errorf("%.60s…: plan %v with %d ranges, residual %v; want a union of %d, none", c.filter, p.Kind, len(p.Ranges), p.Residual != nil, c.ranges)
		}
	}
	// Nested under an "or", a union past the cap is widened before the "and" narrows it:
	// the narrowed part stays one inexact range, never an exact union of the survivors.
	nested := "PartitionKey eq 'z' or (" + ors("PartitionKey", maxBoxes+1) + " and PartitionKey lt 'k010')"
	f, err := Parse(nested)
	if err != nil {
		t.Fatal(err)
	}
	const want = "union partition-range pk=[-inf,'k010') | partition pk='z' +residual"
	if got := PlanQuery(f).String(); got != want {
		t.Errorf("nested union past the cap: plan %s, want %s", got, want)
	}
}
