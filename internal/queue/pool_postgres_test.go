package queue

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/postgres"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// errorLog records the Error-level messages of a logger.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *errorLog) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelError }
func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool { msg += " " + a.String(); return true })
	l.msgs = append(l.msgs, msg)
	return nil
}
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }

// On the PostgreSQL engine with one pooled connection, the queue's paths that read inside an
// Update what its Txn alone cannot answer (a queue of the earlier layout is moved; a queue
// without a count key is counted; Get Messages walks the index) take no second connection:
// the engine's nesting check reports none, and every call returns instead of waiting for a
// connection its own Update holds.
func TestPostgresPoolOfOneReadsInsideUpdates(t *testing.T) {
	url := pgtest.URL(t) // skips without a test database
	errs := &errorLog{}
	db, err := postgres.Open(ctx, postgres.Options{URL: url, MaxConns: 1, StatementTimeout: time.Second,
		CheckNesting: true, Logger: slog.New(errs), ReclaimInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	s, clk := newServiceOn(t, db)
	mustCreate(t, s, "old")
	e, err := s.resolve(ctx, acct, "old")
	if err != nil {
		t.Fatal(err)
	}
	now := s.clock()
	old := []*message{
		{seq: 10, inserted: now, expires: now + int64(time.Hour), visibleAt: now, receipt: 1, text: "first"},
		{seq: 11, inserted: now, expires: now + int64(time.Second), visibleAt: now, receipt: 2, text: "expiring"},
	}
	// Messages of the earlier layout, and no count key (as a queue written before counts).
	writeEarlierLayout(t, s, e.id, old, func(tx store.Txn) error { return tx.Delete(keys.QueueCount(e.id)) })
	s.DropCaches()
	call := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err = s.PutMessage(ctx, acct, "old", "new", 0, 3600) // upgrades, then counts
	call("put", err)
	props, err := s.GetProperties(ctx, acct, "old")
	call("properties", err)
	if props.ApproximateCount != 3 {
		t.Errorf("count %d, want 3", props.ApproximateCount)
	}
	ms, err := s.GetMessages(ctx, acct, "old", 2, 30)
	call("get", err)
	if len(ms) != 2 || ms[0].Text != "first" {
		t.Errorf("got %+v, want first and expiring", ms)
	}
	clk.ns.Add(int64(2 * time.Hour))
	_, err = s.Reap(ctx)
	call("reap", err)
	errs.mu.Lock()
	defer errs.mu.Unlock()
	for _, m := range errs.msgs {
		t.Errorf("engine: %.600s", m)
	}
}
