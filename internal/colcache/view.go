package colcache

import (
	"bytes"
	"sort"

	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/query"
)

// View is a reader's consistent picture of one table: the base (key order, column values
// as of the base's snapshot) and the keys written since, which the reader must take from its
// own store snapshot instead (see the package comment for why that is exact). A View must be
// released; it is not safe for concurrent use.
type View struct {
	c      *Cache
	b      *base
	prefix []byte   // the table's key prefix
	dirty  []string // sorted key suffixes written since the base's snapshot
	done   bool
}

// Release returns the view's hold on the base's memory. Safe to call twice.
func (v *View) Release() {
	if !v.done {
		v.done = true
		v.b.release()
	}
}

// Rows is the number of rows in the base.
func (v *View) Rows() int { return v.b.rows }

// Key returns row i's key suffix (the entity key without the table prefix). It aliases the
// cache's memory: valid until Release.
func (v *View) Key(i int) []byte { return v.b.key(i) }

// Value returns row i's stored entity if the base holds it (every entity when the table fit
// the budget, else the copies Remember kept), aliasing the cache's memory: valid until
// Release.
func (v *View) Value(i int) ([]byte, bool) { return v.b.value(i) }

// Remember keeps a copy of row i's stored entity, which the caller read from its store
// snapshot because Value had none, so that later pages find it with Value. Row i must not
// be among the view's written keys (its base row would be stale).
func (v *View) Remember(i int, entity []byte) {
	if m := v.b.matched; m != nil {
		m.put(i, entity, func(n int64) bool { return v.c.reserveMatched(v.b, n) })
	}
}

// Element returns the JSON that RememberElement kept for row i, aliasing the cache's
// memory: valid until Release.
func (v *View) Element(i int) ([]byte, bool) {
	if v.b.elements == nil {
		return nil, false
	}
	return v.b.elements.get(i)
}

// RememberElement keeps a copy of json, the response JSON of row i in one fixed form (the
// caller's choice: the cache stores bytes, and the table service uses one form only), so
// that later pages copy it instead of encoding the entity again. As with Remember, row i
// must not be among the view's written keys: the JSON is then a function of the row's base
// value, which every reader of this base sees for that row.
func (v *View) RememberElement(i int, json []byte) {
	if m := v.b.elements; m != nil {
		m.put(i, json, func(n int64) bool { return v.c.reserveMatched(v.b, n) })
	}
}

// Search returns the first row whose key suffix is >= k.
func (v *View) Search(k []byte) int { return v.b.search(k) }

// Span maps an encoded key span [start, end) (nil end: unbounded) to the base rows
// [lo, hi) inside it and the sorted key suffixes inside it that were written after the
// base's snapshot: their base rows, if any, are stale, and they may not exist.
func (v *View) Span(start, end []byte) (lo, hi int, dirty []string) {
	s, e, ok := suffixRange(v.prefix, start, end)
	if !ok {
		return 0, 0, nil
	}
	lo, hi = v.b.search(s), v.b.rows
	dlo, dhi := sort.SearchStrings(v.dirty, string(s)), len(v.dirty)
	if e != nil {
		hi = max(lo, v.b.search(e))
		dhi = max(dlo, sort.SearchStrings(v.dirty, string(e)))
	}
	return lo, hi, v.dirty[dlo:dhi]
}

// AppendKey appends the full encoded entity key of a key suffix to dst.
func (v *View) AppendKey(dst, suffix []byte) []byte {
	dst = append(dst, v.prefix...)
	return append(dst, suffix...)
}

// Matcher evaluates f over the base's rows. f must read only properties the view has (the
// Cache's View checks that).
func (v *View) Matcher(f *query.Filter) *Matcher { return v.matcher(f, true) }

// matcher is Matcher; eager allows evaluating a small dictionary up front (tests compare).
func (v *View) matcher(f *query.Filter, eager bool) *Matcher {
	m := &Matcher{f: f, b: v.b}
	for _, name := range f.Properties() {
		m.row.cols = append(m.row.cols, v.b.column(name))
		m.row.names = append(m.row.names, name)
	}
	if len(m.row.cols) == 1 {
		// One property: the filter's outcome depends only on the value, so evaluate it once
		// per distinct value (dictionary id) and remember it.
		m.single = m.row.cols[0]
		m.memo = make([]int8, len(m.single.offs))
		if eager && len(m.memo) <= eagerIDs && len(m.memo)*eagerRowsPerID <= v.b.rows {
			m.resolveAll(m.row.names[0])
		}
	}
	return m
}

// A one-property filter is evaluated up front on every distinct value of a small dictionary
// (at most eagerIDs values, and eagerRowsPerID rows per value): a page then compares ids
// only, without a memo lookup per row, for about the cost of evaluating the filter on the
// rows it would have evaluated it on anyway.
const (
	eagerIDs       = 256
	eagerRowsPerID = 64
)

// resolveAll evaluates the filter on every value of the single column and, when one value
// matches, makes Next look for its id alone.
func (m *Matcher) resolveAll(name string) {
	row := &m.dict
	row.name, row.c = name, m.single
	found := 0
	for id := range m.memo {
		row.id = uint32(id)
		m.memo[id] = -1
		if m.f.Eval(row) {
			m.memo[id] = 1
			m.target = uint32(id)
			found++
		}
	}
	m.onlyID = found == 1
	m.noID = found == 0
}

// Matcher finds rows of a base that satisfy a filter.
type Matcher struct {
	f      *query.Filter
	b      *base
	row    columnRow
	single *column
	memo   []int8 // per dictionary id: 0 unknown, 1 match, -1 no match
	// With every id resolved: noID when none matches, onlyID when target alone does.
	noID, onlyID bool
	target       uint32
	dict         dictRow // resolveAll's getter, kept here so that it is not allocated apart
}

// Next returns the first row in [i, end) that matches, or end.
func (m *Matcher) Next(i, end int) int {
	switch {
	case m.noID:
		return end
	case m.onlyID:
		t := m.target
		for j, id := range m.single.ids[i:end] {
			if id == t {
				return i + j
			}
		}
		return end
	}
	if c := m.single; c != nil {
		ids := c.ids[i:end]
		for j, id := range ids {
			r := m.memo[id]
			if r == 0 {
				r = -1
				m.row.i = i + j
				if m.f.Eval(&m.row) {
					r = 1
				}
				m.memo[id] = r
			}
			if r > 0 {
				return i + j
			}
		}
		return end
	}
	for ; i < end; i++ {
		m.row.i = i
		if m.f.Eval(&m.row) {
			return i
		}
	}
	return end
}

// columnRow is the query.Getter of one base row.
type columnRow struct {
	names []string
	cols  []*column
	i     int
}

// Get implements query.Getter. Values alias the cache's memory.
func (r *columnRow) Get(name string) (entity.Value, bool) {
	for k, n := range r.names {
		if n != name {
			continue
		}
		c := r.cols[k]
		id := c.ids[r.i]
		if id == 0 {
			return entity.Value{}, false
		}
		return entity.ViewValue(c.vals[c.offs[id]:])
	}
	return entity.Value{}, false
}

// dictRow is the query.Getter of one dictionary value of a column: a row holding that value
// (id 0: a row without the property).
type dictRow struct {
	name string
	c    *column
	id   uint32
}

// Get implements query.Getter. Values alias the cache's memory.
func (r *dictRow) Get(name string) (entity.Value, bool) {
	if name != r.name || r.id == 0 {
		return entity.Value{}, false
	}
	return entity.ViewValue(r.c.vals[r.c.offs[r.id]:])
}

// hasAll reports whether names (sorted) are all columns of b.
func (b *base) hasAll(names []string) bool {
	for _, n := range names {
		if b.column(n) == nil {
			return false
		}
	}
	return true
}

// suffixRange converts an encoded key span to key suffixes of the table with prefix p:
// ok is false when the span lies outside the table; a nil end means unbounded.
func suffixRange(p, start, end []byte) (s, e []byte, ok bool) {
	switch {
	case bytes.HasPrefix(start, p):
		s = start[len(p):]
	case bytes.Compare(start, p) < 0:
		s = []byte{}
	default:
		return nil, nil, false
	}
	switch {
	case end == nil:
	case bytes.HasPrefix(end, p):
		e = end[len(p):]
	case bytes.Compare(end, p) < 0:
		return nil, nil, false
	}
	return s, e, true
}
