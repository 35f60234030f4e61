package partition

// sketch tracks the heaviest keys of a stream in bounded memory: the Space-Saving algorithm
// (Metwally, Agrawal, El Abbadi, 2005). It holds at most k entries. A new key, when the
// sketch is full, takes the place of the entry with the smallest count and inherits that count
// as its possible overestimate (err). Guarantees: every key whose true weight exceeds
// total/k is present; for a present key, count-err <= true weight <= count. Entries are kept
// in a min-heap on count, so an update costs O(log k).
type sketch struct {
	k     int
	total uint64
	byKey map[string]*keyEntry
	heap  []*keyEntry
}

// keyEntry is one tracked key with its load.
type keyEntry struct {
	key        string
	count, err uint64
	pos        int // index in heap
	w          window
	heat       heat
}

func newSketch(k int) *sketch {
	return &sketch{k: k, byKey: make(map[string]*keyEntry, min(k, 64))}
}

// add counts weight w for key and returns its entry. The entry's window is reset when it
// takes over another key's slot.
func (s *sketch) add(key string, w uint64) *keyEntry {
	s.total += w
	if e, ok := s.byKey[key]; ok {
		e.count += w
		s.down(e.pos)
		return e
	}
	if len(s.heap) < s.k {
		e := &keyEntry{key: key, count: w, pos: len(s.heap), heat: coldHeat}
		s.heap = append(s.heap, e)
		s.byKey[key] = e
		s.up(e.pos)
		return e
	}
	e := s.heap[0]
	delete(s.byKey, e.key)
	*e = keyEntry{key: key, err: e.count, count: e.count + w, pos: 0, heat: coldHeat}
	s.byKey[key] = e
	s.down(0)
	return e
}

// get returns key's entry, or nil if it is not tracked.
func (s *sketch) get(key string) *keyEntry { return s.byKey[key] }

// halve divides every count by two (an exponential decay, so keys that were hot long ago
// give way to keys hot now). Order is preserved, so the heap stays valid.
func (s *sketch) halve() {
	s.total /= 2
	for _, e := range s.heap {
		e.count /= 2
		e.err /= 2
	}
}

func (s *sketch) less(i, j int) bool { return s.heap[i].count < s.heap[j].count }

func (s *sketch) swap(i, j int) {
	s.heap[i], s.heap[j] = s.heap[j], s.heap[i]
	s.heap[i].pos, s.heap[j].pos = i, j
}

func (s *sketch) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			return
		}
		s.swap(i, p)
		i = p
	}
}

func (s *sketch) down(i int) {
	n := len(s.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			return
		}
		s.swap(i, m)
		i = m
	}
}
