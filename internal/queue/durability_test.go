package queue

import (
	"testing"
	"time"

	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// The visibility deadline is stored: a message taken but not deleted is still hidden after a
// restart, and reappears once its deadline passes.
func TestVisibilityDeadlineSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	clk := &testClock{}
	clk.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	open := func() (*Service, func()) {
		db, err := pebblestore.Open(pebblestore.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		s := New(db, Options{Now: clk.now, ReapInterval: -1})
		return s, func() { s.Close(); db.Close() }
	}
	s, closeFn := open()
	mustCreate(t, s, "durable")
	m, err := s.PutMessage(ctx, acct, "durable", "survives", 0, DefaultTTL)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetMessages(ctx, acct, "durable", 1, 30); err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	closeFn()

	s, closeFn = open()
	defer closeFn()
	if got, _ := s.GetMessages(ctx, acct, "durable", 1, 30); len(got) != 0 {
		t.Fatalf("visible again right after restart: %+v", got)
	}
	clk.advance(31 * time.Second)
	got, err := s.GetMessages(ctx, acct, "durable", 1, 30)
	if err != nil || len(got) != 1 || got[0].ID != m.ID || got[0].DequeueCount != 2 {
		t.Fatalf("%+v %v", got, err)
	}
}
