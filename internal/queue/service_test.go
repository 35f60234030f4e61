package queue

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

var errInjected = errors.New("injected engine failure")

// failing is a real store whose reads of one key inside transactions, or whose scans from
// one prefix, fail: an engine failing under the service.
type failing struct {
	store.Store
	txnGetKey  []byte
	scanPrefix []byte
}

type failingTxn struct {
	store.Txn
	key []byte
}

func (t failingTxn) Get(k []byte) ([]byte, error) {
	if bytes.Equal(k, t.key) {
		return nil, errInjected
	}
	return t.Txn.Get(k)
}

func (f *failing) Update(ctx context.Context, locks []store.Lock, fn func(store.Txn) error) error {
	return f.Store.Update(ctx, locks, func(tx store.Txn) error { return fn(failingTxn{tx, f.txnGetKey}) })
}

func (f *failing) Scan(ctx context.Context, start, end []byte, fn func(k, v []byte) (bool, error)) error {
	if f.scanPrefix != nil && bytes.HasPrefix(start, f.scanPrefix) {
		return errInjected
	}
	return f.Store.Scan(ctx, start, end, fn)
}

func openFailing(t *testing.T) *failing {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	return &failing{Store: db}
}

// Create Queue whose read of the next queue id fails returns the failure and creates nothing.
func TestCreateQueueEngineFailure(t *testing.T) {
	f := openFailing(t)
	s, _ := newServiceOn(t, f)
	f.txnGetKey = keys.QueueNextID()
	if _, err := s.CreateQueue(ctx, acct, "fails", nil); !errors.Is(err, errInjected) {
		t.Fatalf("got %v, want the engine's failure", err)
	}
	f.txnGetKey = nil
	_, err := s.GetProperties(ctx, acct, "fails")
	wantCode(t, err, azerr.QueueNotFound)
}

// A reaper pass that fails is logged as a warning.
func TestReaperLogsFailures(t *testing.T) {
	f := openFailing(t)
	f.scanPrefix = keys.QueueExpiryPrefix()
	w := &warnings{logged: make(chan struct{})}
	s := New(f, Options{ReapInterval: time.Millisecond, Logger: slog.New(w)})
	defer f.Close()
	defer s.Close()
	select {
	case <-w.logged:
	case <-time.After(time.Minute):
		t.Fatal("a failing reaper pass was not logged")
	}
}

// Without a ReapInterval the service reaps in the background (every second).
func TestDefaultReaper(t *testing.T) {
	t.Parallel() // it waits for the reaper's first tick, a second of real time
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clk := &testClock{}
	clk.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	c := &committed{Store: db, done: make(chan struct{}, 1)}
	s := New(c, Options{Now: clk.now})
	defer s.Close()
	mustCreate(t, s, "default")
	if _, err := s.PutMessage(ctx, acct, "default", "x", 0, 1); err != nil {
		t.Fatal(err)
	}
	clk.advance(2 * time.Second)
	waitEmpty(t, s, c, "default")
}

// Shared reports whether other processes share the store.
func TestSharedReported(t *testing.T) {
	a, _, _, _ := twoFrontEnds(t)
	s, _ := newService(t, true)
	var none *Service
	if !a.Shared() || s.Shared() || none.Shared() {
		t.Fatalf("Shared: %v on a shared store, %v on one process, %v on nil", a.Shared(), s.Shared(), none.Shared())
	}
}

// Message ids are unique, also for puts within one clock tick of a shared store (its
// message numbers count in ticks of 2^nodeBits ns).
func TestMessageIDsUniqueWithinATick(t *testing.T) {
	a, _, _, _ := twoFrontEnds(t)
	s, _ := newService(t, true)
	for _, svc := range []*Service{a, s} {
		mustCreate(t, svc, "ids")
		seen := map[string]bool{}
		for range 10 {
			m, err := svc.PutMessage(ctx, acct, "ids", "x", 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			if seen[m.ID] {
				t.Fatalf("message id %s handed out twice (shared: %v)", m.ID, svc.Shared())
			}
			seen[m.ID] = true
		}
	}
}
