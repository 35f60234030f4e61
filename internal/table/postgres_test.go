package table

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
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
