package colcache

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestMatchedRowsIndex: copies put in any order (ascending runs, as scans make them, and
// out of order, as resumed pages can) are found by row in any order of gets, a second put of
// a row keeps the first copy, and rows never put are absent.
func TestMatchedRowsIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var m matchedRows
	defer m.free()
	want := map[int]string{}
	put := func(i int) {
		v := fmt.Sprintf("row %d copy %d", i, r.IntN(1000))
		m.put(i, []byte(v), func(int64) bool { return true })
		if _, ok := want[i]; !ok {
			want[i] = v
		}
	}
	for i := 500; i < 1000; i += 3 {
		put(i)
	}
	for range 300 {
		put(r.IntN(2000))
	}
	for i := 0; i < 500; i += 7 {
		put(i)
	}
	check := func(i int) {
		got, ok := m.get(i)
		if w, has := want[i]; ok != has || string(got) != w {
			t.Fatalf("row %d: %q %v, want %q %v", i, got, ok, w, has)
		}
	}
	for i := range 2000 {
		check(i)
	}
	for range 5000 {
		check(r.IntN(2100))
	}
}
