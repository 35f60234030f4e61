package colcache

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/pebble"
)

// writtenKeys returns n distinct entity keys of table id, from index from on.
func writtenKeys(id uint64, from, n int) [][]byte {
	ks := make([][]byte, 0, n)
	for i := from; i < from+n; i++ {
		ks = append(ks, keys.Entity(id, "w", fmt.Sprintf("%06d", i)))
	}
	return ks
}

// TestDirtyThresholds: a View schedules a rebuild only once more than rebuildDirty keys were
// written since the base's snapshot, and writes drop the base only past maxDirty, each
// exactly at its edge.
func TestDirtyThresholds(t *testing.T) {
	const rows = 160 // rebuildDirty 266 (256 + rows/16), maxDirty 4256 (4096 + rows)
	f := newFixture(t, Options{MaxBytes: 16 << 20})
	f.load(1, rows)
	props := []string{"Cat"}
	if err := f.c.Build(1, props); err != nil {
		t.Fatal(err)
	}
	gen, _ := f.c.Ready(1, props)
	written := 0
	write := func(n int) {
		f.c.NoteWrites(1, writtenKeys(1, written, n))
		written += n
	}
	look := func() Gen {
		t.Helper()
		v := f.view(1, props)
		if v == nil {
			t.Fatalf("no view after %d written keys", written)
		}
		v.Release()
		f.c.builds.Wait()
		g, ok := f.c.Ready(1, props)
		if !ok {
			t.Fatal("not ready")
		}
		return g
	}

	write(256 + rows/16)
	if g := look(); g != gen {
		t.Fatalf("rebuilt at %d written keys, rebuildDirty(%d) = %d", written, rows, rebuildDirty(rows))
	}
	write(1)
	if g := look(); g == gen {
		t.Fatalf("not rebuilt at %d written keys", written)
	}

	// The rebuild starts over with no written keys (none were stored).
	written = 0
	write(4096 + rows)
	if f.c.Stats().Tables != 1 {
		t.Fatalf("dropped at %d written keys, maxDirty(%d) = %d", written, rows, maxDirty(rows))
	}
	write(1)
	if f.c.Stats().Tables != 0 {
		t.Fatalf("still cached at %d written keys", written)
	}
}

// TestWriteDuringFirstBuild: a key written after the first build's snapshot, while no base is
// installed yet, is among the View's written keys once that build is installed: its base
// row, taken before the write, is stale.
func TestWriteDuringFirstBuild(t *testing.T) {
	st, err := pebble.Open(pebble.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := &fixture{t: t, st: st}
	written := keys.Entity(1, "p", "r00003")
	f.c = New(Options{MaxBytes: 16 << 20}, func(ctx context.Context, id uint64, fn func(tx store.Txn) error) error {
		if err := st.Update(ctx, []store.Lock{{Name: fmt.Sprint("table", id)}}, fn); err != nil {
			return err
		}
		// A writer that took the table's lock right after the freeze, before the build ends.
		return st.Update(ctx, []store.Lock{{Name: fmt.Sprint("table", id), Shared: true}}, func(tx store.Txn) error {
			f.c.NoteWrites(id, [][]byte{written})
			return tx.Delete(written)
		})
	})
	defer f.c.Close()
	f.load(1, 10)
	if err := f.c.Build(1, []string{"Cat"}); err != nil {
		t.Fatal(err)
	}
	v := f.view(1, []string{"Cat"})
	if v == nil {
		t.Fatal("no view after the build")
	}
	defer v.Release()
	if _, _, dirty := v.Span(keys.TablePrefix(1), nil); len(dirty) != 1 || !equalSuffix(v, dirty[0], written) {
		t.Fatalf("written keys %q, want the key written during the build", dirty)
	}
}

func equalSuffix(v *View, suffix string, key []byte) bool {
	return string(v.AppendKey(nil, []byte(suffix))) == string(key)
}

// TestDisabledCacheNeverBuilds: with no memory budget, scans never start a build (the table
// is never frozen), however much they examine.
func TestDisabledCacheNeverBuilds(t *testing.T) {
	st, err := pebble.Open(pebble.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var frozen atomic.Int32
	c := New(Options{MaxBytes: 0, BuildAfter: 1}, func(ctx context.Context, id uint64, fn func(tx store.Txn) error) error {
		frozen.Add(1)
		return st.Update(ctx, []store.Lock{{Name: fmt.Sprint("table", id)}}, fn)
	})
	defer c.Close()
	c.NoteScan(1, []string{"Cat"}, 1000)
	c.builds.Wait()
	if n := frozen.Load(); n != 0 {
		t.Fatalf("a cache without memory froze the table %d times", n)
	}
}

// TestRetryAfterTooBig: a build that did not fit the budget is tried again only once scans
// have examined twice as many entities as the attempt followed, and exactly then.
func TestRetryAfterTooBig(t *testing.T) {
	st, err := pebble.Open(pebble.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var frozen atomic.Int32
	c := New(Options{MaxBytes: 1, BuildAfter: 100}, func(ctx context.Context, id uint64, fn func(tx store.Txn) error) error {
		frozen.Add(1)
		return st.Update(ctx, []store.Lock{{Name: fmt.Sprint("table", id)}}, fn)
	})
	defer c.Close()
	f := &fixture{t: t, st: st, c: c}
	f.load(1, 10)
	scan := func(n int) int32 {
		c.NoteScan(1, []string{"Cat"}, n)
		c.builds.Wait()
		return frozen.Load()
	}
	if n := scan(100); n != 1 {
		t.Fatalf("%d builds after BuildAfter entities, want 1", n)
	}
	if n := scan(199); n != 1 {
		t.Fatalf("%d builds after 199 more entities, want still 1 (retry after 200)", n)
	}
	if n := scan(1); n != 2 {
		t.Fatalf("%d builds after 200 more entities, want 2", n)
	}
}
