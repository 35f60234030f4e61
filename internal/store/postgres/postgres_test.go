package postgres_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/postgres"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
	"github.com/tablo/tablo/internal/store/storetest"
)

var ctx = context.Background()

func open(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), postgres.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestConformance(t *testing.T) {
	pgtest.Base(t)
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, pgtest.URL(t)) })
}

// TestCrossProcessCounters: two engines on one database stand for two front ends (each has
// its own pool and its own process-local locks). Read-modify-write increments through both
// lose no update: the database's serializable isolation, not the lock set, orders them.
func TestCrossProcessCounters(t *testing.T) {
	url := pgtest.URL(t)
	a, b := open(t, url), open(t, url)
	defer a.Close()
	defer b.Close()
	const workers, rounds = 6, 30
	key := []byte("counter")
	var wg sync.WaitGroup
	for w := range workers {
		db := a
		if w%2 == 1 {
			db = b
		}
		wg.Go(func() {
			for range rounds {
				err := db.Update(ctx, []store.Lock{{Name: "counter"}}, func(tx store.Txn) error {
					var n uint64
					if v, err := tx.Get(key); err == nil {
						n = binary.BigEndian.Uint64(v)
					} else if !errors.Is(err, store.ErrNotFound) {
						return err
					}
					return tx.Set(key, binary.BigEndian.AppendUint64(nil, n+1))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	v, err := a.Get(ctx, key)
	if err != nil || binary.BigEndian.Uint64(v) != workers*rounds {
		t.Fatalf("counter = %x (%v), want %d", v, err, workers*rounds)
	}
}

// TestConcurrentOpen: front ends starting at once on an empty database all migrate the
// schema without error, and it ends at the current version.
func TestConcurrentOpen(t *testing.T) {
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	dbs := make([]*postgres.DB, 6)
	for i := range dbs {
		wg.Go(func() {
			db, err := postgres.Open(ctx, postgres.Options{URL: url})
			if err != nil {
				t.Error(err)
				return
			}
			dbs[i] = db
		})
	}
	wg.Wait()
	for _, db := range dbs {
		if db != nil {
			db.Close()
		}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT version FROM tablo_schema WHERE id = 1").Scan(&v); err != nil || v != postgres.SchemaVersion {
		t.Fatalf("schema version %d (%v), want %d", v, err, postgres.SchemaVersion)
	}
}

// TestScanAcrossBatches: a scan longer than several batches is one snapshot: writers that
// add keys in pairs, each pair at both ends of the scanned range, are seen whole or not at
// all, and every key comes once, in order.
func TestScanAcrossBatches(t *testing.T) {
	db := open(t, pgtest.URL(t))
	defer db.Close()
	err := db.Update(ctx, nil, func(tx store.Txn) error {
		for i := range 3000 {
			if err := tx.Set(fmt.Appendf(nil, "m%05d", i), []byte("v")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := db.Update(ctx, nil, func(tx store.Txn) error {
				if err := tx.Set(fmt.Appendf(nil, "a%05d", i), nil); err != nil {
					return err
				}
				return tx.Set(fmt.Appendf(nil, "z%05d", i), nil)
			})
			if err != nil {
				t.Error(err)
				return
			}
		}
	})
	for round := range 10 {
		var a, z, m int
		var last []byte
		scan := db.Scan
		if round%2 == 1 {
			// Past one batch, ScanLimit scans in a snapshot too.
			scan = func(ctx context.Context, start, end []byte, fn func(k, v []byte) (bool, error)) error {
				return db.ScanLimit(ctx, start, end, 1_000_000, fn)
			}
		}
		err := scan(ctx, nil, nil, func(k, v []byte) (bool, error) {
			if last != nil && bytes.Compare(last, k) >= 0 {
				return false, fmt.Errorf("keys out of order: %q then %q", last, k)
			}
			last = append(last[:0], k...)
			switch k[0] {
			case 'a':
				a++
			case 'z':
				z++
			default:
				m++
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if a != z || m != 3000 {
			t.Fatalf("scan saw %d a-keys, %d z-keys, %d m-keys: not one snapshot", a, z, m)
		}
	}
	close(stop)
	wg.Wait()
}

// TestRecoversFromLostConnections: after every connection of the engine is killed on the
// server (as a database restart does), reads and writes succeed without the caller seeing
// an error: reads and uncommitted Updates are retried on fresh connections.
func TestRecoversFromLostConnections(t *testing.T) {
	// Its own application name: the test kills only its own backends, not those of other
	// packages' tests running on the same cluster at the same time.
	url := pgtest.WithParam(pgtest.URL(t), "application_name", "tablo_lost_connections")
	db := open(t, url)
	defer db.Close()
	set := func(k, v string) error {
		return db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set([]byte(k), []byte(v)) })
	}
	// Fill the pool with several idle connections.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := set(fmt.Sprint("k", i), "v"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// kill terminates the engine's backends and waits until the server has ended them.
	kill := func() {
		t.Helper()
		const mine = `application_name = 'tablo_lost_connections' AND pid <> pg_backend_pid()`
		var killed int
		if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE `+mine).Scan(&killed); err != nil || killed == 0 {
			t.Fatalf("terminated %d backends: %v", killed, err)
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var left int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE `+mine).Scan(&left); err != nil {
				t.Fatal(err)
			}
			if left == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d backends still there 30 s after they were terminated", left)
			}
		}
	}
	kill()
	if _, err := db.Get(ctx, []byte("k1")); err != nil {
		t.Fatalf("Get after the connections died: %v", err)
	}
	kill()
	if err := set("after", "1"); err != nil {
		t.Fatalf("Update after the connections died: %v", err)
	}
	kill()
	// An Update whose first statement is a read: the read fails on the dead connection, and
	// the whole Update runs again on a fresh one.
	err = db.Update(ctx, nil, func(tx store.Txn) error {
		v, err := tx.Get([]byte("after"))
		if err != nil {
			return err
		}
		return tx.Set([]byte("copy"), v)
	})
	if err != nil {
		t.Fatalf("Update reading first after the connections died: %v", err)
	}
	kill()
	n := 0
	if err := db.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) { n++; return true, nil }); err != nil || n != 10 {
		t.Fatalf("Scan after the connections died: %d keys, %v", n, err)
	}
	if v, err := db.Get(ctx, []byte("after")); err != nil || string(v) != "1" {
		t.Fatalf("Get(after) = %q, %v", v, err)
	}
}

// TestUnavailable: while the database cannot be reached, calls fail promptly with
// store.ErrUnavailable (not a hang, not an unclassified error), and the engine recovers by
// itself when it returns.
func TestUnavailable(t *testing.T) {
	p, via := proxied(t)
	warns := &warnCount{}
	db, err := postgres.Open(ctx, postgres.Options{URL: via.String(), Logger: slog.New(warns), ReclaimInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	set := func(k string) error {
		return db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set([]byte(k), []byte("v")) })
	}
	if err := set("before"); err != nil {
		t.Fatal(err)
	}
	p.stop()
	if _, err := db.Get(ctx, []byte("before")); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Get during the outage: %v, want ErrUnavailable", err)
	}
	resets := warns.n.Load()
	if err := set("during"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Update during the outage: %v, want ErrUnavailable", err)
	}
	// Retried three times on fresh connections (nothing was sent), the pool reset each time.
	if n := warns.n.Load() - resets; n != 3 {
		t.Fatalf("Update during the outage reset the pool %d times, want 3", n)
	}
	resets = warns.n.Load()
	if err := db.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) { return true, nil }); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Scan during the outage: %v, want ErrUnavailable", err)
	}
	// Three attempts, the pool reset (and the reset logged) between them.
	if n := warns.n.Load() - resets; n != 2 {
		t.Fatalf("Scan during the outage reset the pool %d times, want 2 (three attempts)", n)
	}
	if err := db.Ping(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Ping during the outage: %v, want ErrUnavailable", err)
	}
	p.start(t)
	if err := set("after"); err != nil {
		t.Fatalf("Update after the outage: %v", err)
	}
	if v, err := db.Get(ctx, []byte("before")); err != nil || string(v) != "v" {
		t.Fatalf("Get after the outage: %q, %v", v, err)
	}
}

// TestReclaimFailureWarned: a background reclaim pass that fails while the engine runs (the
// database unreachable) is logged as a warning.
func TestReclaimFailureWarned(t *testing.T) {
	p, via := proxied(t)
	logs := &reclaimLog{}
	db, err := postgres.Open(ctx, postgres.Options{URL: via.String(), Logger: slog.New(logs), ReclaimInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p.stop()
	for deadline := time.Now().Add(30 * time.Second); logs.failed() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no warning from the background reclaimer 30 s into an outage")
		}
	}
}

// warnCount counts the engine's warnings (a lost connection, the pool reset).
type warnCount struct{ n atomic.Int64 }

func (w *warnCount) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnCount) Handle(context.Context, slog.Record) error    { w.n.Add(1); return nil }
func (w *warnCount) WithAttrs([]slog.Attr) slog.Handler           { return w }
func (w *warnCount) WithGroup(string) slog.Handler                { return w }

// proxy forwards TCP connections to a target; stop closes the listener and every
// connection, start listens again on the same address; refuse keeps listening but refuses
// connections.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
	down         bool
	refusing     int // connection attempts still to refuse (closed once they ask to start)
	refusals     int // connection attempts refused since the last refuse
}

// proxied starts a proxy in front of the test database and returns it with the database's
// URL pointing at it (skipping the test without a postgres:// URL).
func proxied(t *testing.T) (*proxy, url.URL) {
	t.Helper()
	target, err := url.Parse(pgtest.URL(t))
	if err != nil || target.Host == "" {
		t.Skip("needs a postgres:// URL")
	}
	p := startProxy(t, target.Host)
	via := *target
	via.Host = p.addr
	return p, via
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String(), target: target}
	p.serve(ln)
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) start(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.serve(ln)
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln, p.down = ln, false
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.handle(c)
		}
	}()
}

// cancelRequestCode opens a CancelRequest, which pgx sends on a connection of its own when
// it closes a failed one: not a connection attempt.
const cancelRequestCode = 80877102

func (p *proxy) handle(c net.Conn) {
	head := make([]byte, 8) // the first message's length and code
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(c, head); err != nil {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	p.mu.Lock()
	refuse := p.refusing > 0 && binary.BigEndian.Uint32(head[4:]) != cancelRequestCode
	if refuse {
		p.refusing--
		p.refusals++
	}
	p.mu.Unlock()
	if refuse {
		c.Close()
		return
	}
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	down := p.down
	if !down {
		p.conns = append(p.conns, c, u)
	}
	p.mu.Unlock()
	if _, err := u.Write(head); down || err != nil {
		c.Close()
		u.Close()
		return
	}
	go func() { io.Copy(u, c); u.Close() }()
	go func() { io.Copy(c, u); c.Close() }()
}

// refuse closes every connection and refuses the next n connection attempts, counting them:
// the database down (n large), or back after n attempts.
func (p *proxy) refuse(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.refusing, p.refusals = n, 0
}

// refused reports how many connections were refused since the last refuse.
func (p *proxy) refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refusals
}

func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	p.down = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestGetMany: present and absent keys in one call, in the caller's order; an empty value is
// present.
func TestGetMany(t *testing.T) {
	db := open(t, pgtest.URL(t))
	defer db.Close()
	err := db.Update(ctx, nil, func(tx store.Txn) error {
		if err := tx.Set([]byte("b"), []byte("2")); err != nil {
			return err
		}
		return tx.Set([]byte("e"), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = store.GetMany(ctx, db, [][]byte{[]byte("z"), []byte("b"), []byte("a"), []byte("e")}, func(i int, v []byte, found bool) error {
		got = append(got, fmt.Sprintf("%d:%q:%v", i, v, found))
		return nil
	})
	if want := `[0:"":false 1:"2":true 2:"":false 3:"":true]`; err != nil || fmt.Sprint(got) != want {
		t.Fatalf("GetMany = %v (%v), want %s", got, err, want)
	}
	// Every count of keys, through both statements (point lookups, then k = ANY), past the
	// 32 keys of the largest gathered statement: even positions present, odd ones absent, in
	// descending key order.
	err = db.Update(ctx, nil, func(tx store.Txn) error {
		for i := 0; i < 40; i += 2 {
			if err := tx.Set(fmt.Appendf(nil, "many/%02d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 40; n++ {
		var ks [][]byte
		var want []string
		for i := n - 1; i >= 0; i-- {
			ks = append(ks, fmt.Appendf(nil, "many/%02d", i))
			if i%2 == 0 {
				want = append(want, fmt.Sprintf("%d:v%d", len(want), i))
			} else {
				want = append(want, fmt.Sprintf("%d:-", len(want)))
			}
		}
		got = got[:0]
		err := store.GetMany(ctx, db, ks, func(i int, v []byte, found bool) error {
			if found {
				got = append(got, fmt.Sprintf("%d:%s", i, v))
			} else {
				got = append(got, fmt.Sprintf("%d:-", i))
			}
			return nil
		})
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("GetMany of %d keys = %v (%v), want %v", n, got, err, want)
		}
	}
}

// TestStatementTimeout: an Update stuck behind another session's row lock past the statement
// timeout fails with store.ErrTimeout (the server's OperationTimedOut), not a hang.
func TestStatementTimeout(t *testing.T) {
	url := pgtest.URL(t)
	db, err := postgres.Open(ctx, postgres.Options{URL: url, StatementTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	tx, endSession := otherSession(t, url)
	defer endSession()
	if _, err := tx.Exec(ctx, "SELECT v FROM tablo_kv WHERE k = 'k' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	err = db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set([]byte("k"), []byte("w")) })
	if !errors.Is(err, store.ErrTimeout) {
		t.Fatalf("Update behind a lock: %v, want ErrTimeout", err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Fatalf("took %v", d)
	}
}

// TestConflictsKeepConnections: a transaction that failed (a serialization failure, under
// contention) is rolled back on its connection, which the pool then reuses. Released inside
// the failed transaction, the connection would be closed, and every retry would cost the
// database a new backend process.
func TestConflictsKeepConnections(t *testing.T) {
	const conns = 4
	db, err := postgres.Open(ctx, postgres.Options{URL: pgtest.URL(t), MaxConns: conns})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const workers, rounds = 8, 20
	key := []byte("counter")
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				// No lock: the workers' transactions conflict in the database.
				err := db.Update(ctx, nil, func(tx store.Txn) error {
					var n uint64
					if v, err := tx.Get(key); err == nil {
						n = binary.BigEndian.Uint64(v)
					} else if !errors.Is(err, store.ErrNotFound) {
						return err
					}
					return tx.Set(key, binary.BigEndian.AppendUint64(nil, n+1))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if v, err := db.Get(ctx, key); err != nil || binary.BigEndian.Uint64(v) != workers*rounds {
		t.Fatalf("counter = %x (%v), want %d", v, err, workers*rounds)
	}
	if n := db.Pool().Stat().NewConnsCount(); n > conns {
		t.Fatalf("the pool opened %d connections for %d slots: failed transactions cost their connections", n, conns)
	}
}

// TestTxnSnapshotsDoNotExhaustThePool: Updates that each read a snapshot inside their
// function, more of them at once than the pool has connections, all finish (a snapshot on
// a second connection left every Update holding one connection and waiting for another).
func TestTxnSnapshotsDoNotExhaustThePool(t *testing.T) {
	const conns, workers = 2, 8
	db, err := postgres.Open(ctx, postgres.Options{URL: pgtest.URL(t), MaxConns: conns, StatementTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			key := fmt.Appendf(nil, "w%d", w)
			err := db.Update(ctx, nil, func(tx store.Txn) error {
				if _, err := tx.Get(key); err != nil && !errors.Is(err, store.ErrNotFound) {
					return err // the Update now holds its connection
				}
				snap, err := tx.Snapshot()
				if err != nil {
					return err
				}
				defer snap.Close()
				if err := snap.Scan(ctx, []byte("w"), []byte("x"), func(k, v []byte) (bool, error) { return true, nil }); err != nil {
					return err
				}
				return tx.Set(key, []byte("v"))
			})
			if err != nil {
				t.Errorf("worker %d: %v", w, err)
			}
		})
	}
	wg.Wait()
}

// TestOpenDefaults: what Options leaves zero takes the documented default — a pool of
// max(16, 8 × GOMAXPROCS) connections unless the URL sets pool_max_conns, a 10 s statement
// timeout on the server, a 5 s connect timeout, the default abandon age, GOMAXPROCS/2 point
// reads in flight (at least one) before they gather — and a reclaim interval that is set runs
// in the background.
func TestOpenDefaults(t *testing.T) {
	url := pgtest.URL(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	db := open(t, url)
	defer db.Close()
	cfg := db.Pool().Config()
	if cfg.MaxConns != 32 || cfg.ConnConfig.ConnectTimeout != 5*time.Second {
		t.Errorf("pool of %d connections, connect timeout %v; want 32 (GOMAXPROCS 4) and 5s", cfg.MaxConns, cfg.ConnConfig.ConnectTimeout)
	}
	var st string
	if err := db.Pool().QueryRow(ctx, "SHOW statement_timeout").Scan(&st); err != nil || st != "10s" {
		t.Errorf("statement_timeout %q (%v), want 10s", st, err)
	}
	small, err := postgres.Open(ctx, postgres.Options{URL: pgtest.WithParam(url, "pool_max_conns", "3"), ReclaimInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	if n := small.Pool().Config().MaxConns; n != 3 {
		t.Errorf("pool_max_conns=3 gave %d connections", n)
	}
	if n := postgres.PointReadLimit(db); n != 2 {
		t.Errorf("%d point reads in flight before they gather, want 2 (GOMAXPROCS 4)", n)
	}
	runtime.GOMAXPROCS(1)
	one := open(t, url)
	defer one.Close()
	if n := postgres.PointReadLimit(one); n != 1 {
		t.Errorf("%d point reads in flight before they gather, want 1 (GOMAXPROCS 1)", n)
	}
	runtime.GOMAXPROCS(4)

	// An extent being written, untouched for a moment, is left alone by the default age.
	w, err := db.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, err := w.Write(pattern(1<<20+1, 3)); err != nil { // one chunk written behind
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); count(t, url, "tablo_extent_chunks") == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the chunk written behind never arrived")
		}
	}
	if n, err := small.ReclaimExtents(ctx); err != nil || n != 0 {
		t.Fatalf("the default abandon age reclaimed a live extent: %d, %v", n, err)
	}
	// A front end that reclaims at start and every 20 ms, after 1 ms, deletes it, and then
	// one written after its first pass too.
	logs := &reclaimLog{}
	eager, err := postgres.Open(ctx, postgres.Options{URL: url, AbandonAfter: time.Millisecond, ReclaimInterval: 20 * time.Millisecond,
		Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer eager.Close()
	gone := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); count(t, url, "tablo_extents") != 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the background reclaimer did not delete %s in 30 s", what)
			}
		}
	}
	gone("an abandoned extent")
	w2, err := db.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Abort()
	// The third Write waits for chunk 0 (sent behind the second) to be written.
	for _, size := range []int{1<<20 + 1, 1<<20 - 1, 1} {
		if _, err := w2.Write(pattern(size, 4)); err != nil {
			t.Fatal(err)
		}
	}
	gone("an extent abandoned after its first pass")
	// Each pass that reclaimed something said how many, at Info; the idle ones (most of
	// them, 20 ms apart) said nothing; none warned.
	if warned, reclaimed, idle := logs.get(); warned != 0 || reclaimed != 2 || idle != 0 {
		t.Errorf("background reclaimer logged %d warnings, %d extents reclaimed, %d idle passes; want 0, 2, 0", warned, reclaimed, idle)
	}
}

// reclaimLog counts the warnings and the extents the background reclaimer reports.
type reclaimLog struct {
	mu                             sync.Mutex
	warned, reclaimed, idle, fails int64
}

func (l *reclaimLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *reclaimLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Level >= slog.LevelWarn {
		l.warned++
		if r.Message == "postgres: reclaiming unfinished extents" {
			l.fails++
		}
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "extents" && r.Level == slog.LevelInfo {
			l.reclaimed += a.Value.Int64()
			if a.Value.Int64() == 0 {
				l.idle++
			}
		}
		return true
	})
	return nil
}
func (l *reclaimLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *reclaimLog) WithGroup(string) slog.Handler      { return l }

func (l *reclaimLog) get() (warned, reclaimed, idle int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.warned, l.reclaimed, l.idle
}

// TestHasParam: a parameter set in a URL's query or a DSN is found wherever it stands, and a
// longer name that ends with it is not that parameter.
func TestHasParam(t *testing.T) {
	for url, want := range map[string]bool{
		"postgres://h/db?pool_max_conns=3":                     true,
		"postgres://h/db?a=1&pool_max_conns=3":                 true,
		"host=h pool_max_conns=3":                              true,
		"pool_max_conns=3 host=h":                              true,
		"postgres://h/db":                                      false,
		"postgres://h/db?application_name=my_pool_max_conns":   false,
		"postgres://h/db?application_name=x&xpool_max_conns=3": false,
		"host=h application_name=apool_max_conns":              false,
		"pool_max_conn":                                        false,
	} {
		if got := postgres.HasParam(url, "pool_max_conns"); got != want {
			t.Errorf("%q: %v, want %v", url, got, want)
		}
	}
}

// TestPointReadsSeeAcknowledgedWrites: with one point-read statement in flight at a time,
// concurrent gets gather into shared statements (coalesce.go); each still sees the write its
// goroutine had acknowledged before it began, and reads its keys from one snapshot.
func TestPointReadsSeeAcknowledgedWrites(t *testing.T) {
	db, err := postgres.Open(ctx, postgres.Options{URL: pgtest.URL(t), PointReads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const workers, rounds = 16, 40
	shared := []byte("shared")
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			key := fmt.Appendf(nil, "w%02d", w)
			for n := range rounds {
				val := fmt.Appendf(nil, "%d", n)
				// The pair (key, shared) is written together: a read of both from one
				// snapshot sees them equal.
				err := db.Update(ctx, nil, func(tx store.Txn) error {
					if err := tx.Set(key, val); err != nil {
						return err
					}
					return tx.Set(append(bytes.Clone(shared), key...), val)
				})
				if err != nil {
					t.Error(err)
					return
				}
				if v, err := db.Get(ctx, key); err != nil || !bytes.Equal(v, val) {
					t.Errorf("Get(%s) after writing %s = %q, %v", key, val, v, err)
					return
				}
				var got [2]string
				err = store.GetMany(ctx, db, [][]byte{key, append(bytes.Clone(shared), key...), shared}, func(i int, v []byte, found bool) error {
					if i < 2 {
						got[i] = string(v)
					} else if found {
						return fmt.Errorf("%q found", shared)
					}
					return nil
				})
				if err != nil || got[0] != string(val) || got[1] != string(val) {
					t.Errorf("GetMany(%s) after writing %s = %q, %v", key, val, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestLookupRefusesUnorderedKeys: a Txn's Lookup keys must be distinct and ascending; a
// repeated or descending key is refused before anything is read.
func TestLookupRefusesUnorderedKeys(t *testing.T) {
	db := open(t, pgtest.URL(t))
	defer db.Close()
	for _, keys := range [][]string{{"a", "a"}, {"a", "b", "b"}, {"b", "a"}} {
		bs := make([][]byte, len(keys))
		for i, k := range keys {
			bs[i] = []byte(k)
		}
		calls := 0
		err := db.Update(ctx, nil, func(tx store.Txn) error {
			return tx.Lookup(bs, store.ExpectPresent, func(int, []byte, bool) error { calls++; return nil })
		})
		if err == nil || calls != 0 {
			t.Errorf("Lookup(%q): %v after %d calls, want a refusal before any", keys, err, calls)
		}
	}
}

// TestTxnSnapshotReadsInsideUpdate: a snapshot taken inside an Update reads, while the
// Update's function runs, what was committed before it (not the Update's own writes), a
// missing key as missing, and a scan longer than one batch whole.
func TestTxnSnapshotReadsInsideUpdate(t *testing.T) {
	db := open(t, pgtest.URL(t))
	defer db.Close()
	const n = 300 // past the first scan batch (128)
	err := db.Update(ctx, nil, func(tx store.Txn) error {
		for i := range n {
			if err := tx.Set(fmt.Appendf(nil, "s/%03d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(ctx, nil, func(tx store.Txn) error {
		if err := tx.Set([]byte("s/000"), []byte("own")); err != nil {
			return err
		}
		snap, err := tx.Snapshot()
		if err != nil {
			return err
		}
		defer snap.Close()
		if v, err := snap.Lookup([]byte("s/000")); err != nil || string(v) != "v0" {
			return fmt.Errorf("Lookup(s/000) = %q, %v; want the committed v0", v, err)
		}
		if _, err := snap.Lookup([]byte("s/missing")); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("Lookup of a missing key: %v, want ErrNotFound", err)
		}
		i := 0
		err = snap.Scan(ctx, []byte("s/"), []byte("s0"), func(k, v []byte) (bool, error) {
			if want := fmt.Sprintf("s/%03d=v%d", i, i); string(k)+"="+string(v) != want {
				return false, fmt.Errorf("row %d: %s=%s, want %s", i, k, v, want)
			}
			i++
			return true, nil
		})
		if err != nil || i != n {
			return fmt.Errorf("Scan read %d rows (%v), want %d", i, err, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestScanLimitPastOneBatch: a limit larger than one scan batch (4096 rows) reads in a
// snapshot, batch after batch, and stops at exactly the limit.
func TestScanLimitPastOneBatch(t *testing.T) {
	db := open(t, pgtest.URL(t))
	defer db.Close()
	const rows, limit = 4200, 4100
	err := db.Update(ctx, nil, func(tx store.Txn) error {
		for i := range rows {
			if err := tx.Set(fmt.Appendf(nil, "r/%05d", i), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = store.ScanLimit(ctx, db, []byte("r/"), nil, limit, func(k, v []byte) (bool, error) {
		if want := fmt.Sprintf("r/%05d", n); string(k) != want {
			return false, fmt.Errorf("row %d is %s, want %s", n, k, want)
		}
		n++
		return true, nil
	})
	if err != nil || n != limit {
		t.Fatalf("ScanLimit(%d) read %d rows: %v", limit, n, err)
	}
}

// TestFailedReadFailsUpdate: a read that fails inside an Update (here: the table locked by
// another session past the statement timeout) returns its error to the function, and the
// Update fails with it and writes nothing, even when the function ignores the error.
func TestFailedReadFailsUpdate(t *testing.T) {
	url := pgtest.URL(t)
	setup := open(t, url) // the default timeouts: set-up and checks never time out
	defer setup.Close()
	db, err := postgres.Open(ctx, postgres.Options{URL: url, StatementTimeout: time.Second, ReclaimInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := setup.Update(ctx, nil, func(tx store.Txn) error { return tx.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	locker, endSession := otherSession(t, url)
	defer endSession()
	if _, err := locker.Exec(ctx, `LOCK TABLE tablo_kv IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var getErr error
	err = db.Update(ctx, nil, func(tx store.Txn) error {
		if err := tx.Set([]byte("x"), []byte("1")); err != nil {
			return err
		}
		_, getErr = tx.Get([]byte("k"))
		return nil // the function ignores the failure
	})
	if !errors.Is(getErr, store.ErrTimeout) {
		t.Errorf("Get behind the lock: %v, want ErrTimeout", getErr)
	}
	if !errors.Is(err, store.ErrTimeout) {
		t.Errorf("Update whose read failed: %v, want ErrTimeout", err)
	}
	if err := locker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Get(ctx, []byte("x")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the failed Update's write is there: %v", err)
	}
}

func (l *reclaimLog) failed() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fails
}

// otherSession begins a transaction in a PostgreSQL session of its own, as another process
// would; end rolls it back (if it is still open) and closes the session.
func otherSession(t *testing.T, url string) (tx pgx.Tx, end func()) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	tx, err = conn.Begin(ctx)
	if err != nil {
		conn.Close(ctx)
		t.Fatal(err)
	}
	return tx, func() {
		_ = tx.Rollback(ctx)
		conn.Close(ctx)
	}
}
