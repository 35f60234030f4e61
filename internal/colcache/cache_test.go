package colcache

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/query"
	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/pebble"
)

// fixture is a store with tables of n entities each ("Cat" = i%10, "Name" on even rows) and a
// cache that freezes a table by taking a lock named after it, as the table service does.
type fixture struct {
	t  *testing.T
	st store.Store
	c  *Cache
}

func newFixture(t *testing.T, o Options) *fixture {
	st, err := pebble.Open(pebble.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{t: t, st: st}
	f.c = New(o, func(ctx context.Context, id uint64, fn func(tx store.Txn) error) error {
		return st.Update(ctx, []store.Lock{{Name: fmt.Sprint("table", id)}}, fn)
	})
	t.Cleanup(f.c.Close)
	return f
}

// view is a reader's sequence without the store snapshot: Ready, then View of that generation.
func (f *fixture) view(id uint64, props []string) *View {
	gen, _ := f.c.Ready(id, props)
	return f.c.View(id, props, gen)
}

func (f *fixture) ready(id uint64, props []string) bool {
	_, ok := f.c.Ready(id, props)
	return ok
}

func (f *fixture) load(id uint64, n int) {
	f.t.Helper()
	err := f.st.Update(context.Background(), []store.Lock{{Name: fmt.Sprint("table", id), Shared: true}}, func(tx store.Txn) error {
		for i := range n {
			props := []entity.Property{{Name: "Cat", Value: entity.Int32Value(int32(i % 10))}}
			if i%2 == 0 {
				props = append(props, entity.Property{Name: "Name", Value: entity.StringValue(fmt.Sprint("n", i%4))})
			}
			e := &entity.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%05d", i), Timestamp: int64(i), Props: props}
			if err := tx.Set(keys.Entity(id, e.PartitionKey, e.RowKey), entity.AppendBinary(nil, e)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// matches returns the row keys the view's matcher selects for filter.
func matches(t *testing.T, v *View, filter string) []string {
	t.Helper()
	fl, err := query.Parse(filter)
	if err != nil {
		t.Fatal(err)
	}
	m := v.Matcher(fl)
	var out []string
	for i := m.Next(0, v.Rows()); i < v.Rows(); i = m.Next(i+1, v.Rows()) {
		_, _, rk, err := keys.DecodeEntity(v.AppendKey(nil, v.Key(i)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rk)
	}
	return out
}

func TestBuildAndMatch(t *testing.T) {
	for _, noValues := range []bool{false, true} {
		f := newFixture(t, Options{MaxBytes: 16 << 20, NoValues: noValues})
		f.load(1, 100)
		f.load(2, 50) // a neighbouring table never leaks in
		if v := f.view(1, []string{"Cat"}); v != nil || f.ready(1, []string{"Cat"}) {
			t.Fatal("view before any build")
		}
		if err := f.c.Build(1, []string{"Cat", "Name", "Timestamp"}); err != nil {
			t.Fatal(err)
		}
		if !f.ready(1, []string{"Cat", "Name"}) || f.ready(1, []string{"Cat", "Other"}) {
			t.Fatal("Ready disagrees with the built columns")
		}
		v := f.view(1, []string{"Cat", "Name"})
		if v == nil || v.Rows() != 100 {
			t.Fatalf("view: %+v", v)
		}
		if got := fmt.Sprint(matches(t, v, "Cat eq 3")); got != "[r00003 r00013 r00023 r00033 r00043 r00053 r00063 r00073 r00083 r00093]" {
			t.Fatalf("Cat eq 3: %s", got)
		}
		// Two properties (row by row), a missing property, Timestamp, not.
		if got := fmt.Sprint(matches(t, v, "Cat lt 2 and Name eq 'n0'")); got != "[r00000 r00020 r00040 r00060 r00080]" {
			t.Fatalf("two properties: %s", got)
		}
		if got := len(matches(t, v, "not (Name ge 'n')")); got != 50 {
			t.Fatalf("not over a missing property: %d rows", got)
		}
		if got := len(matches(t, v, "Timestamp lt datetime'1970-01-01T00:00:00.0000005Z'")); got != 5 {
			t.Fatalf("Timestamp: %d rows", got)
		}
		val, ok := v.Value(7)
		if ok == noValues {
			t.Fatalf("Value with NoValues=%v: ok=%v", noValues, ok)
		}
		if ok {
			raw, err := entity.NewRaw(val, "", "")
			if c, _ := raw.Get("Cat"); err != nil || c.I != 7 {
				t.Fatalf("value of row 7: %v %v", c, err)
			}
		}
		// Spans: one row range and the dirty keys inside it.
		f.c.NoteWrites(1, [][]byte{keys.Entity(1, "p", "r00011"), keys.Entity(1, "p", "r00500"), keys.Entity(1, "p", "r00002")})
		v.Release()
		v = f.view(1, []string{"Cat"})
		lo, hi, dirty := v.Span(keys.Entity(1, "p", "r00010"), keys.Entity(1, "p", "r00020"))
		if lo != 10 || hi != 20 || len(dirty) != 1 {
			t.Fatalf("span: rows [%d, %d), dirty %q", lo, hi, dirty)
		}
		if lo, hi, dirty := v.Span(keys.TablePrefix(1), keys.TableEnd(1)); lo != 0 || hi != 100 || len(dirty) != 3 {
			t.Fatalf("whole table: rows [%d, %d), dirty %q", lo, hi, dirty)
		}
		if lo, hi, _ := v.Span(keys.TablePrefix(2), keys.TableEnd(2)); lo != hi {
			t.Fatalf("another table's span: rows [%d, %d)", lo, hi)
		}
		v.Release()
		v.Release() // twice is harmless
		if v := f.view(1, []string{"Missing"}); v != nil {
			t.Fatal("view for a property that was not built")
		}
	}
}

func TestBudgetAndEviction(t *testing.T) {
	// Measure one table's base, then allow two and a half of them.
	probe := newFixture(t, Options{MaxBytes: 64 << 20})
	probe.load(1, 4_000)
	if err := probe.c.Build(1, []string{"Cat"}); err != nil {
		t.Fatal(err)
	}
	size := probe.c.Stats().Bytes
	f := newFixture(t, Options{MaxBytes: 5 * size / 2})
	for id := uint64(1); id <= 3; id++ {
		f.load(id, 4_000)
	}
	f.load(9, 60_000)
	if err := f.c.Build(1, []string{"Cat"}); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Build(2, []string{"Cat"}); err != nil {
		t.Fatal(err)
	}
	if st := f.c.Stats(); st.Tables != 2 || st.Bytes != 2*size {
		t.Fatalf("two tables of %d bytes: %+v", size, st)
	}
	// A table that cannot fit is refused and evicts nobody.
	if err := f.c.Build(9, []string{"Cat"}); !errors.Is(err, errTooBig) {
		t.Fatalf("oversized build: %v", err)
	}
	if st := f.c.Stats(); st.Tables != 2 {
		t.Fatalf("after the oversized build: %+v", st)
	}
	// Using table 1 makes table 2 the least recently used; a third table evicts it.
	f.view(1, []string{"Cat"}).Release()
	if err := f.c.Build(3, []string{"Cat"}); err != nil {
		t.Fatal(err)
	}
	if f.view(2, []string{"Cat"}) != nil || f.c.Stats().Bytes != 2*size {
		t.Fatalf("table 2 was not evicted: %+v", f.c.Stats())
	}
	// Drop frees a table; a View taken before keeps its memory readable until released.
	v := f.view(3, []string{"Cat"})
	f.c.Drop(3)
	if got := len(matches(t, v, "Cat eq 1")); got != 400 {
		t.Fatalf("view after Drop: %d matches", got)
	}
	v.Release()
	if f.view(3, []string{"Cat"}) != nil || f.c.Stats().Bytes != size {
		t.Fatalf("after Drop: %+v", f.c.Stats())
	}
}

func TestWritesTrackedAndBuildsTriggered(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 16 << 20, BuildAfter: 1000})
	f.load(1, 1000)
	// Writes to a table the cache does not track cost nothing and are not kept.
	f.c.NoteWrites(1, [][]byte{keys.Entity(1, "p", "x")})
	f.c.NoteScan(1, []string{"Cat"}, 999)
	if f.view(1, []string{"Cat"}) != nil {
		t.Fatal("built before BuildAfter entities were scanned")
	}
	f.c.NoteScan(1, []string{"Cat"}, 1)
	f.c.builds.Wait()
	v := f.view(1, []string{"Cat"})
	if v == nil {
		t.Fatal("not built after BuildAfter entities")
	}
	if _, _, dirty := v.Span(keys.TablePrefix(1), nil); len(dirty) != 0 {
		t.Fatalf("a write noted before the build's snapshot is dirty: %q", dirty)
	}
	v.Release()
	// Past maxDirty written keys with no build running, the table is dropped, not tracked on.
	var ks [][]byte
	for i := range maxDirty(1000) + 1 {
		ks = append(ks, keys.Entity(1, "q", fmt.Sprint(i)))
	}
	f.c.NoteWrites(1, ks)
	if f.view(1, []string{"Cat"}) != nil || f.c.Stats().Bytes != 0 {
		t.Fatalf("still cached after %d written keys: %+v", len(ks), f.c.Stats())
	}
}

// TestViewRefusesANewerBase: a reader that saw generation g before taking its snapshot must
// not get a base installed after that (it may hold writes newer than the snapshot).
func TestViewRefusesANewerBase(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 16 << 20})
	f.load(1, 10)
	props := []string{"Cat"}
	if err := f.c.Build(1, props); err != nil {
		t.Fatal(err)
	}
	old, ok := f.c.Ready(1, props)
	if !ok {
		t.Fatal("not ready after a build")
	}
	if err := f.c.Build(1, props); err != nil { // a rebuild between Ready and View
		t.Fatal(err)
	}
	if v := f.c.View(1, props, old); v != nil {
		v.Release()
		t.Fatal("View returned a base installed after the reader's Ready")
	}
	cur, _ := f.c.Ready(1, props)
	if cur == old {
		t.Fatal("a rebuild kept the generation")
	}
	v := f.c.View(1, props, cur)
	if v == nil {
		t.Fatal("View refused the current generation")
	}
	v.Release()
}

// TestMatchedCopies: a base without the entities keeps the copies readers give it, within the
// cache's budget, and gives their memory back with the base.
func TestMatchedCopies(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 16 << 20, ValuesMaxBytes: 1})
	f.load(1, 100)
	props := []string{"Cat"}
	if err := f.c.Build(1, props); err != nil {
		t.Fatal(err)
	}
	before := f.c.Stats().Bytes
	v := f.view(1, props)
	if _, ok := v.Value(3); ok {
		t.Fatal("a value before any copy was kept")
	}
	v.Remember(3, []byte("three"))
	v.Remember(3, []byte("again")) // the first copy stays
	v.Remember(5, []byte("five"))
	v.Release()
	v = f.view(1, props)
	if got, ok := v.Value(3); !ok || string(got) != "three" {
		t.Fatalf("row 3: %q, %v", got, ok)
	}
	if got, ok := v.Value(5); !ok || string(got) != "five" {
		t.Fatalf("row 5: %q, %v", got, ok)
	}
	if got := f.c.Stats().Bytes; got != before+matchedChunk {
		t.Fatalf("budget: %d bytes, want %d + one chunk", got, before)
	}
	f.c.Drop(1)
	if got, ok := v.Value(5); !ok || string(got) != "five" { // the view outlives the drop
		t.Fatalf("row 5 after drop: %q, %v", got, ok)
	}
	v.Release()
	if got := f.c.Stats().Bytes; got != 0 {
		t.Fatalf("budget after drop: %d bytes", got)
	}

	// No room in the budget for a chunk: nothing is kept.
	g := newFixture(t, Options{MaxBytes: before + matchedChunk - 1, ValuesMaxBytes: 1})
	g.load(1, 100)
	if err := g.c.Build(1, props); err != nil {
		t.Fatal(err)
	}
	w := g.view(1, props)
	defer w.Release()
	w.Remember(1, []byte("one"))
	if _, ok := w.Value(1); ok {
		t.Fatal("a copy kept beyond the budget")
	}

	// Room for exactly one chunk: the copy is kept.
	h := newFixture(t, Options{MaxBytes: before + matchedChunk, ValuesMaxBytes: 1})
	h.load(1, 100)
	if err := h.c.Build(1, props); err != nil {
		t.Fatal(err)
	}
	x := h.view(1, props)
	defer x.Release()
	x.Remember(1, []byte("one"))
	if got, ok := x.Value(1); !ok || string(got) != "one" {
		t.Fatalf("a copy that fits the budget exactly: %q, %v", got, ok)
	}
}
