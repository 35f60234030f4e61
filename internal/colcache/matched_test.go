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

// TestMatchedRowsChunkEdges: copies share an off-heap chunk up to its exact capacity, the
// next one reserves a new chunk, a copy of exactly a chunk is kept and a larger one is not.
func TestMatchedRowsChunkEdges(t *testing.T) {
	var m matchedRows
	defer m.free()
	reserved := 0
	reserve := func(n int64) bool {
		if n != matchedChunk {
			t.Fatalf("reserved %d bytes, want a chunk", n)
		}
		reserved++
		return true
	}
	sizes := []int{matchedChunk / 2, matchedChunk - matchedChunk/2, 1, matchedChunk, matchedChunk + 1}
	wantReserved := []int{1, 1, 2, 3, 3}
	for i, n := range sizes {
		v := make([]byte, n)
		v[0], v[n-1] = byte(i+1), byte(i+1)
		m.put(i, v, reserve)
		if reserved != wantReserved[i] {
			t.Fatalf("after a copy of %d bytes: %d chunks reserved, want %d", n, reserved, wantReserved[i])
		}
	}
	for i, n := range sizes {
		got, ok := m.get(i)
		if want := n <= matchedChunk; ok != want || ok && (len(got) != n || got[0] != byte(i+1) || got[n-1] != byte(i+1)) {
			t.Errorf("row %d (%d bytes): kept %v with %d bytes, want kept %v", i, n, ok, len(got), want)
		}
	}
}
