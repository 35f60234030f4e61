package colcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/pebble"
)

// openPebble returns an in-memory Pebble store, closed when the test ends.
func openPebble(t *testing.T) *pebble.DB {
	t.Helper()
	st, err := pebble.Open(pebble.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// freezeThen freezes the table as the table service does (its lock taken exclusively on a
// real Pebble store), runs fn there, and then hands Update's result to after, which may
// replace it: an engine whose commit fails, or a table deleted once the freeze let go.
func freezeThen(st store.Store, after func(id uint64, err error) error) FreezeFunc {
	return func(ctx context.Context, id uint64, fn func(tx store.Txn) error) error {
		return after(id, st.Update(ctx, []store.Lock{{Name: fmt.Sprint("table", id)}}, fn))
	}
}

var errCommit = errors.New("commit failed")

// TestFreezeFailingAfterItsSnapshot: a freeze that fails once the build has taken its
// snapshot (an engine whose commit fails) fails the build, caches nothing, and leaves no
// store snapshot open (an open one pins Pebble's old versions and makes Close wait forever).
func TestFreezeFailingAfterItsSnapshot(t *testing.T) {
	// Closed only once no snapshot is open: Close would wait for a leaked one.
	st, err := pebble.Open(pebble.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{MaxBytes: 16 << 20}, freezeThen(st, func(_ uint64, err error) error {
		return errors.Join(err, errCommit)
	}))
	defer c.Close()
	f := &fixture{t: t, st: st, c: c}
	f.load(1, 10)
	if err := c.Build(1, []string{"Cat"}); !errors.Is(err, errCommit) {
		t.Fatalf("Build: %v, want the freeze's error", err)
	}
	if n := st.Metrics().Snapshots.Count; n != 0 {
		t.Fatalf("%d store snapshots left open by the failed build", n)
	}
	if f.ready(1, []string{"Cat"}) || c.Stats() != (Stats{}) {
		t.Fatalf("a failed build cached something: %+v", c.Stats())
	}
	c.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFreezeFailingBeforeItsSnapshot: a freeze that fails before the build took a snapshot
// (the store closed, the table's lock not obtained) just fails the build.
func TestFreezeFailingBeforeItsSnapshot(t *testing.T) {
	c := New(Options{MaxBytes: 16 << 20}, func(context.Context, uint64, func(store.Txn) error) error {
		return store.ErrClosed
	})
	defer c.Close()
	if err := c.Build(1, []string{"Cat"}); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Build: %v, want the freeze's error", err)
	}
	if _, ok := c.Ready(1, []string{"Cat"}); ok {
		t.Fatal("a failed build is ready")
	}
}

// TestFailedBuildIsLogged: a build that fails is logged as a warning with its table, except
// when it failed because the cache is closing.
func TestFailedBuildIsLogged(t *testing.T) {
	st := openPebble(t)
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	c := New(Options{MaxBytes: 16 << 20, Logger: logger}, freezeThen(st, func(_ uint64, err error) error {
		return errors.Join(err, errCommit)
	}))
	f := &fixture{t: t, st: st, c: c}
	f.load(7, 10)
	if err := c.Build(7, []string{"Cat"}); err == nil {
		t.Fatal("the build did not fail")
	}
	got := log.String()
	if !strings.Contains(got, "level=WARN") || !strings.Contains(got, "column cache build failed") ||
		!strings.Contains(got, "table_id=7") || !strings.Contains(got, errCommit.Error()) {
		t.Fatalf("failed build logged as %q", got)
	}

	log.Reset()
	c.Close()
	if err := c.Build(7, []string{"Cat"}); err == nil {
		t.Fatal("a build after Close succeeded")
	}
	if log.Len() != 0 {
		t.Fatalf("a build refused by a closed cache was logged: %q", log.String())
	}
}

// TestTableDroppedDuringItsBuild: a table deleted after its build took the snapshot (the
// deletion waits for the freeze to let go of the table, then drops it from the cache) is not
// cached by that build, whether the build then completes or fails for want of memory, and
// the cache counts no memory for it.
func TestTableDroppedDuringItsBuild(t *testing.T) {
	for _, budget := range []int64{16 << 20, 1} { // fits; too big for the budget
		st := openPebble(t)
		var c *Cache
		c = New(Options{MaxBytes: budget}, freezeThen(st, func(id uint64, err error) error {
			c.Drop(id)
			return err
		}))
		f := &fixture{t: t, st: st, c: c}
		f.load(1, 100)
		if err := c.Build(1, []string{"Cat"}); err == nil {
			t.Fatalf("budget %d: the build of a dropped table succeeded", budget)
		}
		if f.ready(1, []string{"Cat"}) || c.Stats() != (Stats{}) {
			t.Fatalf("budget %d: a dropped table's build was kept: %+v", budget, c.Stats())
		}
		c.Close()
	}
}

// TestElementCopies: the response JSON a reader keeps for a row is found by later readers of
// the same base and takes its memory from the budget; a cache without values keeps none.
func TestElementCopies(t *testing.T) {
	props := []string{"Cat"}
	f := newFixture(t, Options{MaxBytes: 16 << 20})
	f.load(1, 100)
	if err := f.c.Build(1, props); err != nil {
		t.Fatal(err)
	}
	before := f.c.Stats().Bytes
	v := f.view(1, props)
	if _, ok := v.Element(3); ok {
		t.Fatal("an element before any was kept")
	}
	v.RememberElement(3, []byte(`{"RowKey":"r00003"}`))
	v.Release()
	w := f.view(1, props)
	defer w.Release()
	if got, ok := w.Element(3); !ok || string(got) != `{"RowKey":"r00003"}` {
		t.Fatalf("row 3's element: %q, %v", got, ok)
	}
	if _, ok := w.Element(4); ok {
		t.Fatal("an element never kept was found")
	}
	if got := f.c.Stats().Bytes; got != before+matchedChunk {
		t.Fatalf("budget: %d bytes, want %d + one chunk", got, before)
	}

	g := newFixture(t, Options{MaxBytes: 16 << 20, NoValues: true})
	g.load(1, 100)
	if err := g.c.Build(1, props); err != nil {
		t.Fatal(err)
	}
	before = g.c.Stats().Bytes
	x := g.view(1, props)
	defer x.Release()
	x.RememberElement(3, []byte(`{}`))
	if _, ok := x.Element(3); ok {
		t.Fatal("a cache without values kept an element")
	}
	if got := g.c.Stats().Bytes; got != before {
		t.Fatalf("a cache without values took %d bytes for an element", got-before)
	}
}
