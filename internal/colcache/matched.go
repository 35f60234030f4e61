package colcache

import "sync"

// matchedChunk is the unit in which matched-row copies take memory from the cache's budget.
const matchedChunk = 1 << 20

// matchedRows keeps copies of the entities that filtered scans matched, for a base too large
// to hold every entity: a repeated filter then reads its matches from memory instead of one
// store block per match (at 1 M rows of 1 KiB, ~10-20 µs each). A copy is exact for the
// base's lifetime: readers only ask for rows not written since the base's snapshot, whose
// value is the same in every such reader's snapshot. Copies live in off-heap chunks that
// never move (views alias them) and are freed with the base; chunks are taken from the
// cache's budget, never by evicting other tables.
type matchedRows struct {
	mu     sync.Mutex
	at     map[int32]matchedSpan
	chunks [][]byte
}

// matchedSpan locates one copy: chunks[chunk][off:off+n].
type matchedSpan struct{ chunk, off, n uint32 }

func (m *matchedRows) get(i int) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.at[int32(i)]
	if !ok {
		return nil, false
	}
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
	if _, ok := m.at[int32(i)]; ok {
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
	m.at[int32(i)] = matchedSpan{chunk: uint32(last), off: uint32(len(c)), n: uint32(len(v))}
	m.chunks[last] = append(c, v...) // within capacity: never reallocates onto the heap
}

// free releases the chunks; the base's last reference is gone.
func (m *matchedRows) free() {
	for _, c := range m.chunks {
		freeOffHeap(c)
	}
	m.chunks, m.at = nil, nil
}
