package colcache

import (
	"slices"
	"sync"
)

// matchedChunk is the unit in which matched-row copies take memory from the cache's budget.
const matchedChunk = 1 << 20

// matchedRows keeps copies of the entities that filtered scans matched, for a base too large
// to hold every entity, and (as a base's elements) of the response JSON of the rows scans
// returned: a repeated filter then reads its matches from memory instead of one store block
// per match (at 1 M rows of 1 KiB, ~10-20 µs each) or encoding them again. A copy is exact
// for the base's lifetime: readers only ask for rows not written since the base's snapshot,
// whose value is the same in every such reader's snapshot. Copies live in off-heap chunks
// that never move (views alias them) and are freed with the base; chunks are taken from the
// cache's budget, never by evicting other tables.
//
// The index is sorted by row, not hashed: scans ask for rows in ascending order, so a get
// usually finds its row right after the previous one, reading the index (and, since copies
// are mostly made in row order, the chunks) sequentially; a hash lookup per match missed the
// CPU cache every time.
type matchedRows struct {
	mu     sync.Mutex
	rows   []int32       // ascending
	spans  []matchedSpan // spans[k] locates row rows[k]'s copy
	next   int           // where the next get looks first: after the previous hit
	chunks [][]byte
}

// matchedSpan locates one copy: chunks[chunk][off:off+n].
type matchedSpan struct{ chunk, off, n uint32 }

// find returns the index position of row i, or where it would be inserted, and whether it is
// there. The caller holds m.mu.
func (m *matchedRows) find(i int32) (int, bool) {
	if k := m.next; k < len(m.rows) && m.rows[k] == i {
		return k, true
	}
	return slices.BinarySearch(m.rows, i)
}

func (m *matchedRows) get(i int) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.find(int32(i))
	if !ok {
		return nil, false
	}
	m.next = k + 1
	s := m.spans[k]
	return m.chunks[s.chunk][s.off : s.off+s.n : s.off+s.n], true
}

// put copies v as row i's entity unless it is there already, or does not fit: in a chunk,
// or in the budget, which reserve (called with m.mu held) grants a chunk at a time.
func (m *matchedRows) put(i int, v []byte, reserve func(n int64) bool) {
	if len(v) > matchedChunk {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.find(int32(i))
	if ok {
		return
	}
	last := len(m.chunks) - 1
	if last < 0 || len(m.chunks[last])+len(v) > cap(m.chunks[last]) {
		if !reserve(matchedChunk) {
			return
		}
		c, err := allocOffHeap(matchedChunk)
		if err != nil {
			return // the reservation stays counted until the base is dropped: harmless
		}
		m.chunks = append(m.chunks, c[:0])
		last++
	}
	c := m.chunks[last]
	// Scans put rows in ascending order, so this is nearly always an append.
	m.rows = slices.Insert(m.rows, k, int32(i))
	m.spans = slices.Insert(m.spans, k, matchedSpan{chunk: uint32(last), off: uint32(len(c)), n: uint32(len(v))})
	m.chunks[last] = append(c, v...) // within capacity: never reallocates onto the heap
}

// free releases the chunks; the base's last reference is gone.
func (m *matchedRows) free() {
	for _, c := range m.chunks {
		freeOffHeap(c)
	}
	m.chunks, m.rows, m.spans = nil, nil, nil
}
