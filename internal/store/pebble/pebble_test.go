package pebble

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/storetest"
)

func TestConformanceOnDisk(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		db, err := Open(Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

func TestConformanceInMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		db, err := Open(Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

func TestReopenKeepsData(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Get(ctx, []byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("after reopen: %q %v", v, err)
	}
}

// TestCrashKeepsAcknowledgedWrites simulates power loss: every Update that returned before
// the crash must be in the clone, because Update commits with an fsync.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	db, err := Open(Options{Dir: "/data", FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				k := fmt.Appendf(nil, "k%04d", i)
				if err := db.Update(ctx, []store.Lock{{Name: string(k)}}, func(tx store.Txn) error { return tx.Set(k, k) }); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	db.Close()
	db2, err := Open(Options{Dir: "/data", FS: crashed})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	for i := range n {
		k := fmt.Appendf(nil, "k%04d", i)
		if v, err := db2.Get(ctx, k); err != nil || string(v) != string(k) {
			t.Fatalf("acknowledged write %s lost after crash: %v", k, err)
		}
	}
}

// TestLookupAcrossSSTables checks Txn.Lookup, as one walk and as single-key Gets or
// filtered seeks (either expectation), where the data lives in the last level, in a flushed
// sstable (their Bloom filters decide the single-key probes), in the memtable, and in the
// Txn's own batch, with keys that are prefixes of one another.
func TestLookupAcrossSSTables(t *testing.T) {
	ctx := context.Background()
	db, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(k, v string) {
		t.Helper()
		if err := db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set([]byte(k), []byte(v)) }); err != nil {
			t.Fatal(err)
		}
	}
	put("p/a", "sst1")
	put("p/abc", "sst1")
	if err := db.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.db.Compact(ctx, []byte("p/"), []byte("p0"), true); err != nil {
		t.Fatal(err)
	}
	if m := db.db.Metrics(); m.Levels[6].TablesCount == 0 {
		t.Fatalf("no sstable in L6 after the compaction:\n%s", m)
	}
	put("p/ab", "sst2")
	if err := db.db.Flush(); err != nil {
		t.Fatal(err)
	}
	put("p/b", "mem")
	err = db.Update(ctx, nil, func(tx store.Txn) error {
		check := func(want map[string]string, ks ...string) error {
			var keys [][]byte
			for _, k := range ks {
				keys = append(keys, []byte(k))
			}
			for _, expect := range []store.Expect{store.ExpectPresent, store.ExpectAbsent} {
				err := tx.Lookup(keys, expect, func(i int, v []byte, found bool) error {
					if w, ok := want[ks[i]]; ok != found || string(v) != w {
						return fmt.Errorf("Lookup(%q, expect %d) = %q, %v; want %q", ks[i], expect, v, found, w)
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			return nil
		}
		want := map[string]string{"p/a": "sst1", "p/ab": "sst2", "p/abc": "sst1", "p/b": "mem"}
		all := []string{"p/", "p/a", "p/aa", "p/ab", "p/abc", "p/abcd", "p/b", "p/c"}
		if err := check(want, all...); err != nil { // one walk
			return err
		}
		for _, k := range all { // one Get or filtered seek each
			if err := check(want, k); err != nil {
				return err
			}
		}
		if err := check(want, "p/abcd", "p/b"); err != nil { // a walk that starts past a key
			return err
		}
		if err := tx.Set([]byte("p/aa"), []byte("own")); err != nil {
			return err
		}
		if err := tx.Delete([]byte("p/abc")); err != nil {
			return err
		}
		want = map[string]string{"p/a": "sst1", "p/aa": "own", "p/ab": "sst2", "p/b": "mem"}
		if err := check(want, all...); err != nil {
			return err
		}
		return check(want, "p/abc")
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCrashKeepsCommittedExtents simulates power loss while extents are written from
// several goroutines: every extent whose Commit returned is there after the crash, byte for
// byte, and the files handed out but not committed (and the unused pre-created ones) are
// at most unreferenced extents, never a listed extent with the wrong bytes.
func TestCrashKeepsCommittedExtents(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	db, err := Open(Options{Dir: "/data", FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 20 // more than one pool batch
	var mu sync.Mutex
	committed := map[uint64][]byte{}
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				data := bytes.Repeat(fmt.Appendf(nil, "%d-%d;", g, i), 1000+i*37)
				w, err := db.Extents().NewExtent(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				w.Write(data)
				id, err := w.Commit()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				committed[id] = data
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	open, err := db.Extents().NewExtent(ctx) // handed out, written, never committed
	if err != nil {
		t.Fatal(err)
	}
	open.Write([]byte("never committed"))
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	open.Abort()
	db.Close()
	db2, err := Open(Options{Dir: "/data", FS: crashed})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	for id, want := range committed {
		r, err := db2.Extents().ReadExtent(ctx, id, 0, -1)
		if err != nil {
			t.Fatalf("committed extent %d lost after crash: %v", id, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("committed extent %d after crash: %d bytes (%v), want %d", id, len(got), err, len(want))
		}
	}
	// New extents after the restart get ids above every committed one (the engine finds them
	// in its directory; no snapshot names them) and overwrite none.
	maxID := uint64(0)
	for id := range committed {
		maxID = max(maxID, id)
	}
	w, err := db2.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("after the restart"))
	id, err := w.Commit()
	if err != nil || id <= maxID {
		t.Fatalf("extent %d (%v) after a restart whose directory holds extents up to %d", id, err, maxID)
	}
}

// TestExtentWriteback: a writer asks the file system to start writing out each full
// writeback-sized stretch as it is written (so Commit's sync finds little left), not before.
func TestExtentWriteback(t *testing.T) {
	var syncTos atomic.Int64
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileSyncTo && strings.Contains(op.Path, extentDir) {
			syncTos.Add(1)
		}
		return nil
	}))
	db, err := Open(Options{Dir: "/data", FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, err := db.Extents().NewExtent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, writeback/8)
	for i := 1; i <= 16; i++ {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if got, want := syncTos.Load(), int64(i/8); got != want {
			t.Fatalf("after %d/8 of the writeback size: %d writebacks started, want %d", i, got, want)
		}
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestExtentSectionReads: a section of an on-disk extent read in pieces, the later ones into
// buffers larger than what is left of it, yields exactly its bytes, then EOF.
func TestExtentSectionReads(t *testing.T) {
	ctx := context.Background()
	db, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	data := make([]byte, 100)
	for i := range data {
		data[i] = byte(i)
	}
	id := storetest.PutExtent(t, db.Extents(), data)
	r, err := db.Extents().ReadExtent(ctx, id, 10, 50)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []byte
	for _, size := range []int{5, 50, 1000} { // 50: more than the 45 left, less than 5+50
		buf := make([]byte, size)
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, data[10:60]) {
		t.Fatalf("section [10, 60) read as %d bytes: %v", len(got), got)
	}
}

// TestLookupRefusesUnorderedKeys: Lookup's keys must be distinct and ascending; a repeated or
// descending key is refused before anything is read.
func TestLookupRefusesUnorderedKeys(t *testing.T) {
	db, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, keys := range [][]string{{"a", "a"}, {"a", "b", "b"}, {"b", "a"}} {
		bs := make([][]byte, len(keys))
		for i, k := range keys {
			bs[i] = []byte(k)
		}
		calls := 0
		err := db.Update(context.Background(), nil, func(tx store.Txn) error {
			return tx.Lookup(bs, store.ExpectPresent, func(int, []byte, bool) error { calls++; return nil })
		})
		if err == nil || calls != 0 {
			t.Errorf("Lookup(%q): %v after %d calls, want a refusal before any", keys, err, calls)
		}
	}
}

// TestLookupAbsentUsesLastLevelFilter checks that a single key expected absent (an insert) is
// answered by the Bloom filter of the last level, which a Get skips: with every table in L6,
// the probe of a missing key consults that filter, and a Get of it does not.
func TestLookupAbsentUsesLastLevelFilter(t *testing.T) {
	ctx := context.Background()
	db, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(ctx, nil, func(tx store.Txn) error {
		for i := range 100 {
			if err := tx.Set([]byte(fmt.Sprintf("k/%03d", i)), []byte("v")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.db.Compact(ctx, []byte("k/"), []byte("k0"), true); err != nil {
		t.Fatal(err)
	}
	if m := db.db.Metrics(); m.Levels[6].TablesCount == 0 || m.Levels[0].TablesCount != 0 {
		t.Fatalf("want every table in L6 after the compaction:\n%s", m)
	}
	// Consultations of a filter (hits and false positives alike) tell that it was read.
	consulted := func(expect store.Expect) int64 {
		t.Helper()
		m := db.db.Metrics().Filter
		before := m.Hits + m.Misses
		err := db.Update(ctx, nil, func(tx store.Txn) error {
			return tx.Lookup([][]byte{[]byte("k/050x")}, expect, func(_ int, _ []byte, found bool) error {
				if found {
					return fmt.Errorf("missing key found")
				}
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		m = db.db.Metrics().Filter
		return m.Hits + m.Misses - before
	}
	if n := consulted(store.ExpectPresent); n != 0 {
		t.Errorf("a Get of a missing key consulted %d filters, want 0 (Get skips L6's filter)", n)
	}
	if n := consulted(store.ExpectAbsent); n != 1 {
		t.Errorf("a missing key expected absent consulted %d filters, want L6's", n)
	}
}

// TestTxnSnapshotBounds: one snapshot taken in an Update serves scans and lookups one after
// another, each with its own bounds (a lookup after a bounded scan finds a key outside
// them), and closes without error, twice.
func TestTxnSnapshotBounds(t *testing.T) {
	ctx := context.Background()
	db, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(ctx, nil, func(tx store.Txn) error {
		for _, k := range []string{"a", "b", "c"} {
			if err := tx.Set([]byte(k), []byte(k+"!")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(ctx, nil, func(tx store.Txn) error {
		snap, err := tx.Snapshot()
		if err != nil {
			return err
		}
		scan := func(start, end []byte) string {
			var got []byte
			if err := snap.Scan(ctx, start, end, func(k, _ []byte) (bool, error) {
				got = append(got, k...)
				return true, nil
			}); err != nil {
				t.Fatal(err)
			}
			return string(got)
		}
		lookup := func(k string) {
			if v, err := snap.Lookup([]byte(k)); err != nil || string(v) != k+"!" {
				t.Fatalf("Lookup(%s) = %q, %v", k, v, err)
			}
		}
		for i, c := range []struct {
			start, end []byte
			want       string
		}{
			{nil, nil, "abc"}, {[]byte("b"), nil, "bc"}, {nil, []byte("b"), "a"}, {[]byte("c"), []byte("d"), "c"}, {nil, nil, "abc"},
		} {
			if got := scan(c.start, c.end); got != c.want {
				t.Fatalf("scan %d [%q, %q): %q, want %q", i, c.start, c.end, got, c.want)
			}
			lookup("a")
			lookup("b")
		}
		if err := snap.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := snap.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
