package table

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// chunkedStore reports the traits of a shared engine whose range deletes cost per key, so
// that the background deletion path runs on an in-memory Pebble.
type chunkedStore struct {
	store.Store
	chunk int // keys per range delete (7 when 0)
	// widest, when set, records the most keys one range deletion removed.
	widest *atomic.Int64
	// gets, when set, counts reads outside transactions (Get).
	gets *atomic.Int64
}

func (c chunkedStore) Get(ctx context.Context, key []byte) ([]byte, error) {
	if c.gets != nil {
		c.gets.Add(1)
	}
	return c.Store.Get(ctx, key)
}

func (c chunkedStore) Traits() store.Traits {
	if c.chunk == 0 {
		c.chunk = 7
	}
	return store.Traits{Shared: true, RangeDeleteChunk: c.chunk}
}

func (c chunkedStore) Update(ctx context.Context, locks []store.Lock, fn func(tx store.Txn) error) error {
	if c.widest == nil {
		return c.Store.Update(ctx, locks, fn)
	}
	return c.Store.Update(ctx, locks, func(tx store.Txn) error { return fn(rangeCounter{Txn: tx, c: c}) })
}

// rangeCounter counts the committed keys each range deletion covers (the purge's Updates
// write nothing before it).
type rangeCounter struct {
	store.Txn
	c chunkedStore
}

func (r rangeCounter) DeleteRange(start, end []byte) error {
	if end == nil {
		return fmt.Errorf("range deletion from %q without an end", start)
	}
	n := 0
	err := r.c.Store.Scan(context.Background(), start, end, func(k, v []byte) (bool, error) { n++; return true, nil })
	if err != nil {
		return err
	}
	for w := r.c.widest.Load(); int64(n) > w && !r.c.widest.CompareAndSwap(w, int64(n)); w = r.c.widest.Load() {
	}
	return r.Txn.DeleteRange(start, end)
}

func countKeys(t *testing.T, st store.Store, start, end []byte) int {
	t.Helper()
	n := 0
	if err := st.Scan(context.Background(), start, end, func(k, v []byte) (bool, error) { n++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitPurged waits until table id's drop record is gone (the purge's last step), then
// checks that no entity of the table is left.
func waitPurged(t *testing.T, st store.Store, id uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for countKeys(t, st, dropKey(id), keys.PrefixEnd(dropKey(id))) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the deleted table's drop record was not purged")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := countKeys(t, st, keys.TablePrefix(id), keys.TableEnd(id)); n != 0 {
		t.Fatalf("%d entities of the deleted table left after its purge", n)
	}
}

// syncBuffer is a log destination the dropper's goroutine may write to while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func fillTable(t *testing.T, svc *Service, name string, n int) {
	t.Helper()
	for i := range n {
		e := &entity.Entity{PartitionKey: fmt.Sprint(i % 3), RowKey: fmt.Sprint(i)}
		if _, err := svc.Write(context.Background(), "acct", name, Op{Kind: Insert, Entity: e}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeleteTableInChunks: on an engine with costly range deletes, Delete Table is a catalog
// change: the table is gone at once for every reader and writer, a re-created table is
// empty, and the entities are purged in the background.
// Each range deletion covers at most a chunk of keys (the last chunk included: 40 entities
// fit in one chunk of 50), and a purge that succeeds logs no warning.
func TestDeleteTableInChunks(t *testing.T) {
	for _, chunk := range []int{1, 7, 50} {
		st := chunkedStore{Store: newDB(t), chunk: chunk, widest: new(atomic.Int64)}
		testDeleteTableInChunks(t, st)
		if w := st.widest.Load(); w == 0 || w > int64(chunk) {
			t.Fatalf("chunk %d: a range deletion removed %d keys", chunk, w)
		}
	}
}

func testDeleteTableInChunks(t *testing.T, st chunkedStore) {
	ctx := context.Background()
	var logs syncBuffer
	svc := New(st, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer func() {
		svc.Close()
		if strings.Contains(logs.String(), "level=WARN") {
			t.Fatalf("warnings logged:\n%s", logs.String())
		}
	}()
	for _, name := range []string{"before", "big", "after"} {
		if _, err := svc.CreateTable(ctx, "acct", name); err != nil {
			t.Fatal(err)
		}
	}
	tb, err := svc.GetTable(ctx, "acct", "big")
	if err != nil {
		t.Fatal(err)
	}
	fillTable(t, svc, "before", 5)
	fillTable(t, svc, "big", 40)
	fillTable(t, svc, "after", 5)
	if err := svc.DeleteTable(ctx, "acct", "big"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.GetTable(ctx, "acct", "big"); !azerr.Is(err, azerr.ResourceNotFound) {
		t.Fatalf("deleted table found: %v", err)
	}
	_, err = svc.Write(ctx, "acct", "big", Op{Kind: InsertOrReplace, Entity: &entity.Entity{PartitionKey: "0", RowKey: "0"}})
	if !azerr.Is(err, azerr.TableNotFound) {
		t.Fatalf("write into a deleted table: %v", err)
	}
	if _, err := svc.CreateTable(ctx, "acct", "big"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.GetEntity(ctx, "acct", "big", "0", "0"); !azerr.Is(err, azerr.ResourceNotFound) {
		t.Fatalf("re-created table not empty: %v", err)
	}
	waitPurged(t, st, tb.ID)
	// The purge stays within the deleted table: its neighbours keep every entity.
	for _, name := range []string{"before", "after"} {
		nb, err := svc.GetTable(ctx, "acct", name)
		if err != nil {
			t.Fatal(err)
		}
		if n := countKeys(t, st, keys.TablePrefix(nb.ID), keys.TableEnd(nb.ID)); n != 5 {
			t.Fatalf("table %s has %d entities after the purge of its neighbour, want 5", name, n)
		}
	}
}

// TestDropResumesAtStart: a drop record left by a front end that stopped before purging is
// finished by the next Service to start on the store.
func TestDropResumesAtStart(t *testing.T) {
	ctx := context.Background()
	st := chunkedStore{Store: newDB(t)}
	svc := New(st, Options{})
	tb, err := svc.CreateTable(ctx, "acct", "left")
	if err != nil {
		t.Fatal(err)
	}
	fillTable(t, svc, "left", 20)
	svc.Close()
	// What Delete Table commits, without its process surviving to purge.
	err = st.Update(ctx, nil, func(tx store.Txn) error {
		if err := tx.Delete(keys.Table("acct", strings.ToLower("left"))); err != nil {
			return err
		}
		return tx.Set(dropKey(tb.ID), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := countKeys(t, st, keys.TablePrefix(tb.ID), keys.TableEnd(tb.ID)); n != 20 {
		t.Fatalf("%d entities before the restart", n)
	}
	svc2 := New(st, Options{})
	defer svc2.Close()
	waitPurged(t, st, tb.ID)
	if _, err := svc2.GetTable(ctx, "acct", "left"); !azerr.Is(err, azerr.ResourceNotFound) {
		t.Fatalf("GetTable: %v", err)
	}
}

// TestSharedStoreTableHints: two Services on one shared store stand for two front ends. One
// deletes and re-creates a table the other has written to; the other's next write lands in
// the new table, its reads see the new table only, and a table deleted for good is not found.
func TestSharedStoreTableHints(t *testing.T) {
	ctx := context.Background()
	st := chunkedStore{Store: newDB(t)}
	a, b := New(st, Options{}), New(st, Options{})
	defer a.Close()
	defer b.Close()
	put := func(svc *Service, rk string) error {
		_, err := svc.Write(ctx, "acct", "tab1", Op{Kind: InsertOrReplace, Entity: &entity.Entity{PartitionKey: "p", RowKey: rk}})
		return err
	}
	if _, err := a.CreateTable(ctx, "acct", "tab1"); err != nil {
		t.Fatal(err)
	}
	if err := put(b, "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetEntity(ctx, "acct", "tab1", "p", "old"); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteTable(ctx, "acct", "tab1"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetEntity(ctx, "acct", "tab1", "p", "old"); !azerr.Is(err, azerr.TableNotFound) {
		t.Fatalf("read of a deleted table through the other service: %v", err)
	}
	if err := put(b, "x"); !azerr.Is(err, azerr.TableNotFound) {
		t.Fatalf("write into a deleted table through the other service: %v", err)
	}
	if err := put(b, "warm"); !azerr.Is(err, azerr.TableNotFound) { // b has no hint now
		t.Fatalf("second write: %v", err)
	}
	// b learns the id again, then a deletes and re-creates the table.
	if _, err := a.CreateTable(ctx, "acct", "tab1"); err != nil {
		t.Fatal(err)
	}
	if err := put(b, "mid"); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteTable(ctx, "acct", "tab1"); err != nil {
		t.Fatal(err)
	}
	t3, err := a.CreateTable(ctx, "acct", "tab1")
	if err != nil {
		t.Fatal(err)
	}
	if err := put(b, "new"); err != nil { // b's id for the table is stale here
		t.Fatalf("write after the re-create: %v", err)
	}
	// b's id for the table is stale again after another re-create: its read finds the
	// entity of the new table.
	if err := a.DeleteTable(ctx, "acct", "tab1"); err != nil {
		t.Fatal(err)
	}
	if t3, err = a.CreateTable(ctx, "acct", "tab1"); err != nil {
		t.Fatal(err)
	}
	if err := put(a, "new"); err != nil {
		t.Fatal(err)
	}
	if e, err := b.GetEntity(ctx, "acct", "tab1", "p", "new"); err != nil || e.RowKey != "new" {
		t.Fatalf("read with a stale id after a re-create: %v", err)
	}
	if _, err := b.GetEntity(ctx, "acct", "tab1", "p", "mid"); !azerr.Is(err, azerr.ResourceNotFound) {
		t.Fatalf("the re-created table shows the old one's entity: %v", err)
	}
	e, err := a.GetEntity(ctx, "acct", "tab1", "p", "new")
	if err != nil || e.RowKey != "new" {
		t.Fatalf("the write did not land in the re-created table: %v", err)
	}
	if n := countKeys(t, st, keys.TablePrefix(t3.ID), keys.TableEnd(t3.ID)); n != 1 {
		t.Fatalf("%d entities in the re-created table, want 1", n)
	}
}

// TestDropRecordOnCheapRangeDeletes: on an engine whose range deletes are cheap, a drop
// record that came with copied data (tablo migrate from a chunked engine) is finished by one
// range deletion: the entities and the record are gone.
func TestDropRecordOnCheapRangeDeletes(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	const id = 4242
	err := db.Update(ctx, nil, func(tx store.Txn) error {
		for i := range 30 {
			e := &entity.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Timestamp: 1}
			if err := tx.Set(keys.Entity(id, e.PartitionKey, e.RowKey), entity.AppendBinary(nil, e)); err != nil {
				return err
			}
		}
		return tx.Set(dropKey(id), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := New(db, Options{})
	defer svc.Close()
	waitPurged(t, db, id)
}

// TestDropFailureLogged: a purge that fails (here the store was closed under the Service) is
// logged as a warning.
func TestDropFailureLogged(t *testing.T) {
	db := newDB(t)
	var logs syncBuffer
	svc := New(chunkedStore{Store: db}, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	svc.drops.kick()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "purging deleted tables") {
		if time.Now().After(deadline) {
			svc.Close()
			t.Fatalf("no warning for a failed purge; logs:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	svc.Close()
}

// TestSharedStoreHintsSaveLookups: on a shared store, a front end remembers the id of each
// table it wrote to, so that its next writes to any of them read no catalog record outside
// their transaction (on a database, a round trip each).
func TestSharedStoreHintsSaveLookups(t *testing.T) {
	ctx := context.Background()
	st := chunkedStore{Store: newDB(t), gets: new(atomic.Int64)}
	svc := New(st, Options{})
	defer svc.Close()
	names := []string{"hintA", "hintB", "hintC"}
	for _, name := range names {
		if _, err := svc.CreateTable(ctx, "acct", name); err != nil {
			t.Fatal(err)
		}
	}
	put := func(name, rk string) {
		t.Helper()
		if _, err := svc.Write(ctx, "acct", name, Op{Kind: InsertOrReplace, Entity: &entity.Entity{PartitionKey: "p", RowKey: rk}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		put(name, "first")
	}
	before := st.gets.Load()
	for _, name := range names {
		put(name, "second")
	}
	if n := st.gets.Load() - before; n != 0 {
		t.Fatalf("%d catalog reads outside the transactions of writes to known tables, want 0", n)
	}
}

// TestSharedStoreColumnCacheOff: on a store other processes share, the column cache stays
// off even when asked for (its exactness rests on seeing every write), and says so; a
// service not asked for it says nothing.
func TestSharedStoreColumnCacheOff(t *testing.T) {
	ctx := context.Background()
	for _, bytes := range []int64{0, 64 << 20} {
		var logs syncBuffer
		o := columnOptions()
		o.ColumnCacheBytes = bytes
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		svc := New(chunkedStore{Store: newDB(t)}, o)
		defer svc.Close()
		if _, err := svc.CreateTable(ctx, "acct", "colsoff"); err != nil {
			t.Fatal(err)
		}
		q := Query{Filter: mustParse(t, "N eq 1")}
		if _, err := svc.QueryEntities(ctx, "acct", "colsoff", q, func(entity.Raw) (bool, error) { return true, nil }); err != nil {
			t.Fatal(err)
		}
		if st := svc.Stats(); st.ColumnCacheHits+st.ColumnCacheMisses != 0 {
			t.Errorf("cache of %d bytes asked for: the column cache weighed a filtered page on a shared store: %+v", bytes, st)
		}
		if said := strings.Contains(logs.String(), "column cache off"); said != (bytes > 0) {
			t.Errorf("cache of %d bytes asked for: logged that it is off: %v\n%s", bytes, said, logs.String())
		}
	}
}

// TestDeleteTableRemovesEverything: Delete Table leaves no key of the table behind,
// entities and metadata alike: at once where range deletes are cheap, after the background
// purge where they are not; and a re-created table gets a larger, never reused, id.
func TestDeleteTableRemovesEverything(t *testing.T) {
	ctx := context.Background()
	for _, chunked := range []bool{false, true} {
		var st store.Store = newDB(t)
		if chunked {
			st = chunkedStore{Store: st}
		}
		svc := New(st, Options{})
		defer svc.Close()
		var last uint64
		for round := range 3 {
			tb, err := svc.CreateTable(ctx, "acct", "gone")
			if err != nil {
				t.Fatal(err)
			}
			if tb.ID <= last {
				t.Fatalf("round %d: table id %d after %d", round, tb.ID, last)
			}
			last = tb.ID
			fillTable(t, svc, "gone", 10)
			if err := svc.SetTableMeta(ctx, "acct", "gone", "acl", []byte("doc")); err != nil {
				t.Fatal(err)
			}
			if err := svc.DeleteTable(ctx, "acct", "gone"); err != nil {
				t.Fatal(err)
			}
			if chunked {
				waitPurged(t, st, tb.ID)
			} else {
				if n := countKeys(t, st, keys.TablePrefix(tb.ID), keys.TableEnd(tb.ID)); n != 0 {
					t.Fatalf("%d entities left right after Delete Table", n)
				}
				if n := countKeys(t, st, dropKey(tb.ID), keys.PrefixEnd(dropKey(tb.ID))); n != 0 {
					t.Fatal("a drop record on an engine with cheap range deletes")
				}
			}
			if n := countKeys(t, st, keys.TableMetaPrefix(tb.ID), keys.PrefixEnd(keys.TableMetaPrefix(tb.ID))); n != 0 {
				t.Fatalf("chunked %v: %d metadata documents left after Delete Table", chunked, n)
			}
		}
	}
}
