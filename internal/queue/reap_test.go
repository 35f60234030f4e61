package queue

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// The reaper deletes a message whose expiration time is the reaper's clock reading exactly.
func TestReapAtExpirationTime(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "reap-exact")
	m, err := s.PutMessage(ctx, acct, "reap-exact", "x", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	clk.ns.Store(m.Expires.UnixNano() - 1)
	if n, err := s.Reap(ctx); err != nil || n != 0 {
		t.Fatalf("1 ns before expiry: reaped %d %v", n, err)
	}
	clk.ns.Store(m.Expires.UnixNano())
	if n, err := s.Reap(ctx); err != nil || n != 1 {
		t.Fatalf("at expiry: reaped %d %v", n, err)
	}
	wantCount(t, s, "reap-exact", 0)
}

// A message whose expiry entry lands a little below where the last pass ended (its put read
// a clock behind the reaper's) is still reaped: passes start reapSlack back.
func TestReaperFindsEntriesBehindItsLastPass(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	reaper, clk := newServiceOn(t, db)
	behind := &testClock{}
	behind.ns.Store(clk.ns.Load() - int64(3*time.Second))
	slow := New(db, Options{Now: behind.now, ReapInterval: -1})
	defer slow.Close()
	mustCreate(t, reaper, "behind")
	if n, err := reaper.Reap(ctx); err != nil || n != 0 {
		t.Fatal(n, err)
	}
	// Expires two seconds before the reaper's last pass, within reapSlack (5 s).
	if _, err := slow.PutMessage(ctx, acct, "behind", "x", 0, 1); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Minute)
	if n, err := reaper.Reap(ctx); err != nil || n != 1 {
		t.Fatalf("reaped %d %v, want the message that expired behind the last pass", n, err)
	}
}

// The reaper reads the expiry index deleteBatch entries at a time: its transactions stay
// bounded however many messages expire together.
func TestReaperBatches(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	c := &batchCounter{scanCounter: scanCounter{Store: db}}
	s, clk := newServiceOn(t, c)
	mustCreate(t, s, "batches")
	for i := range deleteBatch + 1 {
		if _, err := s.PutMessage(ctx, acct, "batches", fmt.Sprint(i), 0, 1); err != nil {
			t.Fatal(err)
		}
	}
	clk.advance(2 * time.Second)
	c.scans.Store(0)
	if n, err := s.Reap(ctx); err != nil || n != deleteBatch+1 {
		t.Fatalf("reaped %d %v", n, err)
	}
	if n := c.scans.Load(); n > 3 || c.most != deleteBatch {
		t.Fatalf("%d scans, at most %d entries in one, want batches of %d", n, c.most, deleteBatch)
	}
	wantCount(t, s, "batches", 0)
}

// batchCounter records the most entries one scan visited.
type batchCounter struct {
	scanCounter
	most int
}

func (c *batchCounter) Scan(ctx context.Context, start, end []byte, fn func(k, v []byte) (bool, error)) error {
	n := 0
	err := c.scanCounter.Scan(ctx, start, end, func(k, v []byte) (bool, error) {
		n++
		return fn(k, v)
	})
	c.most = max(c.most, n)
	return err
}

// committed is a real store that signals each transaction it has committed.
type committed struct {
	store.Store
	done chan struct{}
}

func (c *committed) Update(ctx context.Context, locks []store.Lock, fn func(store.Txn) error) error {
	err := c.Store.Update(ctx, locks, fn)
	select {
	case c.done <- struct{}{}:
	default:
	}
	return err
}

// waitEmpty waits, transaction by transaction, until queue name of s (over c) holds no
// message, failing after a minute.
func waitEmpty(t *testing.T, s *Service, c *committed, name string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		p, err := s.GetProperties(ctx, acct, name)
		if err != nil {
			t.Fatal(err)
		}
		if p.ApproximateCount == 0 {
			return
		}
		select {
		case <-c.done:
		case <-timeout:
			t.Fatal("no reaper deleted the expired message")
		}
	}
}

// warnings records what is logged at Warn or above, and signals the first.
type warnings struct {
	mu     sync.Mutex
	msgs   []string
	logged chan struct{}
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, r.Message)
	if w.logged != nil && len(w.msgs) == 1 {
		close(w.logged)
	}
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

// The background reaper deletes expired messages and logs nothing when its passes succeed.
func TestReaperLoopLogsOnlyFailures(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clk := &testClock{}
	clk.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	w := &warnings{}
	n := &committed{Store: db, done: make(chan struct{}, 1)}
	s := New(n, Options{Now: clk.now, ReapInterval: time.Millisecond, Logger: slog.New(w)})
	mustCreate(t, s, "loop")
	if _, err := s.PutMessage(ctx, acct, "loop", "x", 0, 1); err != nil {
		t.Fatal(err)
	}
	clk.advance(2 * time.Second)
	waitEmpty(t, s, n, "loop")
	s.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.msgs) != 0 {
		t.Fatalf("logged %q", w.msgs)
	}
}

// Node numbers on a shared store are 1 … 65535 and wrap around after 65535, so that they fit
// the low nodeBits bits of message numbers.
func TestNodeNumbersWrap(t *testing.T) {
	a, b, _, _ := twoFrontEnds(t)
	if err := a.st.Update(ctx, nil, func(tx store.Txn) error {
		return tx.Set(nodeKey, []byte{0, 0, 0, 0, 0, 0, 0xff, 0xfe})
	}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, a, "nodes")
	for _, s := range []*Service{a, b} {
		if _, err := s.PutMessage(ctx, acct, "nodes", "x", 0, -1); err != nil {
			t.Fatal(err)
		}
	}
	if na, nb := a.node.Load(), b.node.Load(); na != 1<<nodeBits-1 || nb != 1 {
		t.Fatalf("node numbers %d and %d, want %d and 1", na, nb, 1<<nodeBits-1)
	}
}
