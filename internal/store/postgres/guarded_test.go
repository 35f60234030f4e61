package postgres_test

import (
	"crypto/rand"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/postgres"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// TestGuardedWriteOutage: a guarded write (InsertIf, WriteIf) that cannot get a connection
// sent nothing: it tries a fresh connection three more times (four attempts, the pool reset
// before each retry), then fails with ErrUnavailable, not with an unknown outcome; when the
// database answers again within those attempts, the write succeeds.
func TestGuardedWriteOutage(t *testing.T) {
	p, via := proxied(t)
	// One connection attempt per connect (sslmode prefer and allow try twice).
	q := via.Query()
	switch q.Get("sslmode") {
	case "", "prefer", "allow":
		q.Set("sslmode", "disable")
		via.RawQuery = q.Encode()
	}
	warns := &warnCount{}
	db, err := postgres.Open(ctx, postgres.Options{URL: via.String(), Logger: slog.New(warns), ReclaimInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	guard, one := []byte("guard"), []byte("1")
	if err := db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set(guard, one) }); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.InsertIf(ctx, nil, []byte("before"), []byte("v"), guard, one); !ok || err != nil {
		t.Fatalf("InsertIf before the outage = %v, %v", ok, err)
	}
	// The pooled connections die with the outage; a read finds that out and empties the pool.
	p.refuse(1 << 30)
	if _, err := db.Get(ctx, guard); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Get during the outage: %v, want ErrUnavailable", err)
	}
	writes := map[string]func() (bool, error){
		"InsertIf": func() (bool, error) {
			return db.InsertIf(ctx, nil, []byte("during"), []byte("v"), guard, one)
		},
		"WriteIf": func() (bool, error) {
			return db.WriteIf(ctx, nil, store.CondWrite{Key: []byte("before"), Exists: true, Old: []byte("v"), Value: []byte("w"), GuardKey: guard, GuardValue: one})
		},
	}
	for name, write := range writes {
		p.refuse(1 << 30)
		resets := warns.n.Load()
		ok, err := write()
		if ok || !errors.Is(err, store.ErrUnavailable) || strings.Contains(err.Error(), "outcome unknown") {
			t.Fatalf("%s during the outage = %v, %v; want ErrUnavailable, the outcome known", name, ok, err)
		}
		if n := p.refused(); n != 4 {
			t.Fatalf("%s during the outage tried %d connections, want 4", name, n)
		}
		if n := warns.n.Load() - resets; n != 3 {
			t.Fatalf("%s during the outage reset the pool %d times, want 3", name, n)
		}
	}
	// The database back at the last attempt.
	p.refuse(3)
	if ok, err := db.InsertIf(ctx, nil, []byte("back"), []byte("v"), guard, one); !ok || err != nil {
		t.Fatalf("InsertIf with the database back at its fourth attempt = %v, %v", ok, err)
	}
	if n := p.refused(); n != 3 {
		t.Fatalf("InsertIf had %d connections refused, want 3", n)
	}
	// The connection that wrote it dies, and stays in the pool: a write on it is sent and its
	// answer lost, so its outcome is unknown, and it is not run again. (The pool pings a
	// connection idle for more than a second instead of handing it out; this one was used a
	// moment ago.)
	p.refuse(1 << 30)
	w := store.CondWrite{Key: []byte("before"), Exists: true, Old: []byte("v"), Value: []byte("w"), GuardKey: guard, GuardValue: one}
	if ok, err := db.WriteIf(ctx, nil, w); ok || !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "outcome unknown") {
		t.Fatalf("WriteIf sent on a dead connection = %v, %v; want ErrUnavailable, the outcome unknown", ok, err)
	}
	if n := p.refused(); n != 0 {
		t.Fatalf("WriteIf sent on a dead connection was tried again (%d connections refused)", n)
	}
	if _, err := db.Get(ctx, guard); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Get during the outage: %v, want ErrUnavailable", err)
	}
	p.refuse(2)
	if ok, err := db.WriteIf(ctx, nil, w); !ok || err != nil {
		t.Fatalf("WriteIf with the database back at its third attempt = %v, %v", ok, err)
	}
	for k, want := range map[string]string{"back": "v", "before": "w"} {
		if v, err := db.Get(ctx, []byte(k)); err != nil || string(v) != want {
			t.Fatalf("Get(%s) after the outage = %q, %v; want %q", k, v, err, want)
		}
	}
	if _, err := db.Get(ctx, []byte("during")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get(during) = %v, want ErrNotFound", err)
	}
}

// TestGuardedWriteRefused: a guarded write the server refuses committed nothing, and says so:
// its error is the server's, not an unknown outcome and not an outage.
func TestGuardedWriteRefused(t *testing.T) {
	db := open(t, pgtest.URL(t))
	defer db.Close()
	guard, one := []byte("guard"), []byte("1")
	if err := db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set(guard, one) }); err != nil {
		t.Fatal(err)
	}
	// A key past the largest index entry PostgreSQL takes (random: it does not compress).
	key := make([]byte, 8000)
	rand.Read(key)
	ok, err := db.InsertIf(ctx, nil, key, []byte("v"), guard, one)
	if ok || err == nil || strings.Contains(err.Error(), "outcome unknown") || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("InsertIf of an unindexable key = %v, %v; want the server's error", ok, err)
	}
}

// TestGuardedWriteDeadlock: a guarded write that the database aborts as a deadlock's victim
// runs again. Another session inserts the key (uncommitted); InsertIf locks the guard and
// waits for that insert; the session then asks for the guard's row: a deadlock, whose victim
// is InsertIf (it waited first, so its deadlock check runs first). The session rolls back,
// and InsertIf's second attempt inserts.
func TestGuardedWriteDeadlock(t *testing.T) {
	const app = "tablo_guarded_deadlock"
	base := pgtest.URL(t)
	db := open(t, pgtest.WithParam(base, "application_name", app))
	defer db.Close()
	guard, one, key := []byte("guard"), []byte("1"), []byte("key")
	if err := db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set(guard, one) }); err != nil {
		t.Fatal(err)
	}
	tx, endSession := otherSession(t, base)
	defer endSession()
	if _, err := tx.Exec(ctx, `INSERT INTO tablo_kv (k, v) VALUES ($1, $2)`, key, []byte("other")); err != nil {
		t.Fatal(err)
	}
	type result struct {
		ok  bool
		err error
	}
	done := make(chan result, 1)
	go func() {
		ok, err := db.InsertIf(ctx, nil, key, []byte("v"), guard, one)
		done <- result{ok, err}
	}()
	// Wait until InsertIf waits for the session's insert (holding its lock on the guard).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var waiting int
		err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("InsertIf not waiting for the other session's insert after 30 s")
		}
	}
	// Returns once the database has aborted InsertIf's statement, the deadlock's victim.
	if _, err := tx.Exec(ctx, `UPDATE tablo_kv SET v = v WHERE k = $1`, guard); err != nil {
		t.Fatalf("the other session's update of the guard: %v (want InsertIf to be the deadlock's victim)", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-done; !r.ok || r.err != nil {
		t.Fatalf("InsertIf after a deadlock = %v, %v; want it run again and inserted", r.ok, r.err)
	}
	if v, err := db.Get(ctx, key); err != nil || string(v) != "v" {
		t.Fatalf("Get(key) = %q, %v", v, err)
	}
}
