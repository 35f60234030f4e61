package colcache

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tablo/tablo/internal/query"
)

// TestMatcherEager: a one-property filter over a small dictionary, evaluated up front, finds
// exactly the rows the row-by-row memo finds, from any starting row and in chunks: one
// matching value, none, several, and the rows lacking the property.
func TestMatcherEager(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 16 << 20})
	f.load(1, 2000) // Cat = i%10 (11 ids with "absent"), Name = n0..n3 on even rows
	if err := f.c.Build(1, []string{"Cat", "Name"}); err != nil {
		t.Fatal(err)
	}
	v := f.view(1, []string{"Cat", "Name"})
	defer v.Release()
	filters := []string{
		"Cat eq 3", "Cat eq 42", "Cat lt 3", "Cat ne 3",
		"Name eq 'n1'", "Name eq 'zz'", "not (Name eq 'n1')", "Name ge 'n'",
	}
	for _, text := range filters {
		fl, err := query.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		eager, lazy := v.matcher(fl, true), v.matcher(fl, false)
		if eager.memo == nil || slices.Contains(eager.memo, 0) {
			t.Fatalf("%s: the dictionary was not resolved up front", text)
		}
		for _, start := range []int{0, 1, 7, 1999} {
			for _, chunk := range []int{1, 13, 4096} {
				got, want := rowsOf(eager, start, v.Rows(), chunk), rowsOf(lazy, start, v.Rows(), chunk)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s from %d in chunks of %d: eager %v, memo %v", text, start, chunk, got, want)
				}
			}
		}
	}
}

// rowsOf returns the rows m selects in [start, rows), asking chunk rows at a time.
func rowsOf(m *Matcher, start, rows, chunk int) []int {
	var out []int
	for i := start; i < rows; {
		end := min(rows, i+chunk)
		j := m.Next(i, end)
		if j < end {
			out = append(out, j)
			j++
		}
		i = j
	}
	return out
}
