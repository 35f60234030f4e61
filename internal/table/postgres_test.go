package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/postgres"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// TestPostgresOneRoundTripWrites: on the PostgreSQL engine (shared by processes; single
// writes go through its guarded one-statement insert and conditional write), two Services
// on one schema see each other's writes: inserts, replaces, merges and deletes with and
// without If-Match, guesses from this process's last write going stale when the other
// writes, and a table re-created by the other. With and without the cache of recent values.
func TestPostgresOneRoundTripWrites(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	for _, recent := range []int{0, -1} {
		db, err := postgres.Open(ctx, postgres.Options{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		a, b := New(db, Options{RecentValueBytes: recent}), New(db, Options{RecentValueBytes: recent})
		name := "fast" + map[int]string{0: "recent", -1: "none"}[recent]
		createTables(t, a, "acct", name)
		op := func(kind OpKind, rk string, props ...entity.Property) Op {
			return Op{Kind: kind, Entity: &entity.Entity{PartitionKey: "p", RowKey: rk, Props: props}, IfMatch: IfMatch{Any: true}}
		}
		prop := func(n string, v int32) entity.Property { return entity.Property{Name: n, Value: entity.Int32Value(v)} }
		write := func(s *Service, o Op) (Result, error) {
			t.Helper()
			return s.Write(ctx, "acct", name, o)
		}
		get := func(s *Service, rk string) *entity.Entity {
			t.Helper()
			e, err := s.GetEntity(ctx, "acct", name, "p", rk)
			if err != nil {
				t.Fatalf("recent %d: get %s: %v", recent, rk, err)
			}
			return e
		}
		must := func(r Result, err error) Result {
			t.Helper()
			if err != nil {
				t.Fatalf("recent %d: %v", recent, err)
			}
			return r
		}
		wantCode := func(err error, code azerr.Code) {
			t.Helper()
			if !azerr.Is(err, code) {
				t.Fatalf("recent %d: %v, want %s", recent, err, code)
			}
		}

		for _, rk := range []string{"1", "2", "3"} { // the first takes the general path and learns the table
			must(write(a, op(Insert, rk, prop("V", 1))))
		}
		_, err = write(a, op(Insert, "2", prop("V", 9)))
		wantCode(err, azerr.EntityAlreadyExists)
		r := must(write(a, op(Replace, "2", prop("V", 2))))
		if v := get(b, "2").Props; len(v) != 1 || v[0].Value.I != 2 {
			t.Fatalf("recent %d: replaced entity %+v", recent, v)
		}
		// b changes it: a's remembered value is stale; a's merge reads and merges afresh.
		must(write(b, op(Merge, "2", prop("W", 3))))
		must(write(a, op(Merge, "2", prop("X", 4))))
		if v := get(b, "2").Props; len(v) != 3 {
			t.Fatalf("recent %d: merged entity %+v", recent, v)
		}
		// If-Match of an older version fails, of the current one succeeds.
		stale := op(Replace, "2", prop("V", 5))
		stale.IfMatch = IfMatch{Ticks: r.Entity.Timestamp}
		_, err = write(a, stale)
		wantCode(err, azerr.UpdateConditionNotSatisfied)
		cur := get(a, "2")
		stale.IfMatch = IfMatch{Ticks: cur.Timestamp}
		if r := must(write(a, stale)); r.Entity.Timestamp <= cur.Timestamp {
			t.Fatalf("recent %d: Timestamp %d not after %d", recent, r.Entity.Timestamp, cur.Timestamp)
		}
		_, err = write(a, op(Replace, "missing", prop("V", 1)))
		wantCode(err, azerr.ResourceNotFound)
		must(write(a, op(InsertOrReplace, "4", prop("V", 4))))
		must(write(a, op(InsertOrMerge, "4", prop("W", 4))))
		if v := get(b, "4").Props; len(v) != 2 {
			t.Fatalf("recent %d: upserted entity %+v", recent, v)
		}
		must(write(a, op(Delete, "3")))
		_, err = a.GetEntity(ctx, "acct", name, "p", "3")
		wantCode(err, azerr.ResourceNotFound)
		_, err = write(a, op(Delete, "3"))
		wantCode(err, azerr.ResourceNotFound)

		// b re-creates the table: a's writes land in the new one.
		if err := b.DeleteTable(ctx, "acct", name); err != nil {
			t.Fatal(err)
		}
		createTables(t, b, "acct", name)
		_, err = write(a, op(Replace, "1", prop("V", 1)))
		wantCode(err, azerr.ResourceNotFound)
		must(write(a, op(Insert, "1", prop("V", 7))))
		must(write(a, op(InsertOrMerge, "5", prop("V", 5))))
		if v := get(b, "1").Props; len(v) != 1 || v[0].Value.I != 7 {
			t.Fatalf("recent %d: entity in the re-created table %+v", recent, v)
		}
		get(b, "5")
		if err := b.DeleteTable(ctx, "acct", name); err != nil {
			t.Fatal(err)
		}
		_, err = write(a, op(Insert, "6"))
		wantCode(err, azerr.TableNotFound)
		_, err = write(a, op(InsertOrReplace, "6"))
		wantCode(err, azerr.TableNotFound)
		a.Close()
		b.Close()
		db.Close()
	}
}

// TestPostgresWritesWhileTheClockJumps: a one-round-trip write whose clock has moved past the
// reserved Timestamps by more than the reserve reserves further ahead, doubling, and lands
// with a Timestamp past the previous one.
func TestPostgresWritesWhileTheClockJumps(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, postgres.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var now atomic.Int64
	now.Store(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	// Every reading of the clock is 10 s after the previous one: five times the reserve.
	clock := func() time.Time { return time.Unix(0, now.Add(int64(10*time.Second))) }
	svc := New(db, Options{Now: clock})
	defer svc.Close()
	createTables(t, svc, "acct", "jumps")
	var last int64
	for i := range 4 {
		r, err := svc.Write(ctx, "acct", "jumps", Op{Kind: Insert, Entity: &entity.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}})
		if err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
		if r.Entity.Timestamp <= last {
			t.Fatalf("insert %d: Timestamp %d not after %d", i, r.Entity.Timestamp, last)
		}
		last = r.Entity.Timestamp
	}
}

// countingPG is the PostgreSQL engine with its transactions and its reads counted.
type countingPG struct {
	*postgres.DB
	updates, reads atomic.Int64
}

func (c *countingPG) Update(ctx context.Context, locks []store.Lock, fn func(tx store.Txn) error) error {
	c.updates.Add(1)
	return c.DB.Update(ctx, locks, fn)
}

func (c *countingPG) GetMany(ctx context.Context, keys [][]byte, fn func(i int, value []byte, found bool) error) error {
	c.reads.Add(1)
	return c.DB.GetMany(ctx, keys, fn)
}

// TestPostgresSingleWritesTakeNoTransaction: once a Service knows the table, a single-entity
// write on the PostgreSQL engine is one conditional statement, no transaction; a write that
// follows this process's own write of the entity reads nothing first (the clock is frozen, so
// the stored Timestamp floor needs no raising meanwhile).
func TestPostgresSingleWritesTakeNoTransaction(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, postgres.Options{URL: pgtest.URL(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := &countingPG{DB: db}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	svc := New(st, Options{Now: func() time.Time { return at }})
	defer svc.Close()
	createTables(t, svc, "acct", "single")
	op := func(kind OpKind, rk string) Op {
		return Op{Kind: kind, IfMatch: IfMatch{Any: true}, Entity: &entity.Entity{PartitionKey: "p", RowKey: rk,
			Props: []entity.Property{{Name: "K", Value: entity.StringValue(kind.String())}}}}
	}
	// Learn the table and raise the floor.
	if _, err := svc.Write(ctx, "acct", "single", op(Insert, "warm")); err != nil {
		t.Fatal(err)
	}
	updates := st.updates.Load()
	ops := []Op{op(Insert, "1"), op(Replace, "1"), op(Merge, "1"), op(InsertOrReplace, "1"),
		op(InsertOrMerge, "1"), op(Delete, "1"), op(InsertOrReplace, "2")}
	for i, o := range ops {
		reads := st.reads.Load()
		if _, err := svc.Write(ctx, "acct", "single", o); err != nil {
			t.Fatalf("%s: %v", o.Kind, err)
		}
		if n := st.updates.Load() - updates; n != 0 {
			t.Fatalf("%s took %d transactions", o.Kind, n)
		}
		// Only the write of an entity this process has not written reads it first.
		if n := st.reads.Load() - reads; n != 0 && i < len(ops)-1 {
			t.Fatalf("%s after this process's own write read the entity %d times", o.Kind, n)
		}
	}
	// Another process rewrites the entity: this one's remembered value is stale, and its next
	// write reads the entity afresh, still without a transaction.
	other := New(db, Options{})
	defer other.Close()
	if _, err := other.Write(ctx, "acct", "single", op(Merge, "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Write(ctx, "acct", "single", op(InsertOrReplace, "2")); err != nil {
		t.Fatal(err)
	}
	if n := st.updates.Load() - updates; n != 0 {
		t.Fatalf("a write after a stale guess took %d transactions", n)
	}
	e, err := svc.GetEntity(ctx, "acct", "single", "p", "2")
	if err != nil || len(e.Props) != 1 || e.Props[0].Value.S != "insert-or-replace" {
		t.Fatalf("entity 2: %+v, %v", e, err)
	}
}

// lookedUp passes every call through to the engine unchanged; once armed, it closes done
// when a Get of key has returned: it tells a test that a Service has looked a table up.
type lookedUp struct {
	store.Store
	key   []byte
	armed atomic.Bool
	once  sync.Once
	done  chan struct{}
}

func (l *lookedUp) Traits() store.Traits { return store.TraitsOf(l.Store) }

func (l *lookedUp) Get(ctx context.Context, key []byte) ([]byte, error) {
	v, err := l.Store.Get(ctx, key)
	if l.armed.Load() && bytes.Equal(key, l.key) {
		l.once.Do(func() { close(l.done) })
	}
	return v, err
}

// TestPostgresTableMetaOnRecreatedTable: two processes share a PostgreSQL schema; one sets a
// table's access policies while the other deletes the table and creates it again between
// the setter's lookup and its write. The write lands on the table now under that name
// (looked up again), as a batch's does, instead of failing.
//
// The order is made, not hoped for: the test holds the setter's metadata lock (through its
// own engine's Update), so the setter, once it has looked the table up, waits for the lock
// until the other process has re-created the table.
func TestPostgresTableMetaOnRecreatedTable(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	open := func() *postgres.DB {
		db, err := postgres.Open(ctx, postgres.Options{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	dbA, dbB := open(), open()
	seen := &lookedUp{Store: dbA, key: keys.Table("acct", "acltab"), done: make(chan struct{})}
	a, b := New(seen, Options{}), New(dbB, Options{})
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	createTables(t, b, "acct", "acltab")
	old, err := a.GetTable(ctx, "acct", "acltab")
	if err != nil {
		t.Fatal(err)
	}

	held, release := make(chan struct{}), make(chan struct{})
	holdErr := make(chan error, 1)
	go func() {
		holdErr <- dbA.Update(ctx, []store.Lock{{Name: tableLock(old.ID) + "/meta"}}, func(store.Txn) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	seen.armed.Store(true)
	setErr := make(chan error, 1)
	go func() { setErr <- a.SetTableMeta(ctx, "acct", "acltab", "acl", []byte("policies")) }()
	<-seen.done // a has read the old table's id; its write waits for the lock held above

	if err := b.DeleteTable(ctx, "acct", "acltab"); err != nil {
		t.Fatal(err)
	}
	createTables(t, b, "acct", "acltab")
	close(release)
	if err := <-holdErr; err != nil {
		t.Fatal(err)
	}
	if err := <-setErr; err != nil {
		t.Fatalf("set metadata of a table re-created meanwhile: %v", err)
	}
	cur, err := b.GetTable(ctx, "acct", "acltab")
	if err != nil || cur.ID == old.ID {
		t.Fatalf("re-created table %+v (%v), old id %d", cur, err, old.ID)
	}
	if doc, err := b.TableMeta(ctx, "acct", "acltab", "acl"); err != nil || string(doc) != "policies" {
		t.Fatalf("metadata of the re-created table: %q, %v", doc, err)
	}
}

// TestPostgresBatchReadTimeout: when a batch's reads time out on PostgreSQL (another session
// holds a lock on the rows' table), the batch fails with the timeout: the catalog record read
// in the same statement was not read either, which says nothing about whether the table
// exists (TableNotFound would tell the client it is gone).
func TestPostgresBatchReadTimeout(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, postgres.Options{URL: url, StatementTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// A stopped clock: the floor the first write stores covers every later Timestamp, so
	// the batch under the lock writes no floor of its own first.
	at := time.Now()
	a := New(db, Options{Now: func() time.Time { return at }})
	t.Cleanup(a.Close)
	createTables(t, a, "acct", "locked")
	ins := func(rk string) Op { return Op{Kind: Insert, Entity: &entity.Entity{PartitionKey: "p", RowKey: rk}} }
	if _, err := a.Batch(ctx, "acct", "locked", []Op{ins("1"), ins("2")}); err != nil { // learns the table's id
		t.Fatal(err)
	}

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE tablo_kv IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	_, err = a.Batch(ctx, "acct", "locked", []Op{ins("3"), ins("4")})
	if !errors.Is(err, store.ErrTimeout) || azerr.Is(err, azerr.TableNotFound) {
		t.Fatalf("batch whose reads time out: %v, want the engine's timeout", err)
	}
}
