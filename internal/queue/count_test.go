package queue

import (
	"testing"
	"time"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

func wantCount(t *testing.T, s *Service, name string, want int) {
	t.Helper()
	p, err := s.GetProperties(ctx, acct, name)
	if err != nil || p.ApproximateCount != want {
		t.Fatalf("approximate count %d (%v), want %d", p.ApproximateCount, err, want)
	}
}

// The count follows puts, gets, deletes, expiry (read and reaped) and clear, and is kept,
// not counted: a message key written behind the service's back is not in it.
func TestApproximateCountIsKept(t *testing.T) {
	s, clk := newService(t, false)
	mustCreate(t, s, "cnt")
	wantCount(t, s, "cnt", 0)
	for i := 0; i < 5; i++ {
		if _, err := s.PutMessage(ctx, acct, "cnt", "m", 0, DefaultTTL); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if _, err := s.PutMessage(ctx, acct, "cnt", "short", 0, 2); err != nil {
			t.Fatal(err)
		}
	}
	wantCount(t, s, "cnt", 8)
	got, err := s.GetMessages(ctx, acct, "cnt", 2, 30)
	if err != nil || len(got) != 2 {
		t.Fatal(got, err)
	}
	wantCount(t, s, "cnt", 8) // taken, not deleted
	if err := s.DeleteMessage(ctx, acct, "cnt", got[0].ID, got[0].PopReceipt); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.DeleteMessage(ctx, acct, "cnt", got[0].ID, got[0].PopReceipt), "MessageNotFound")
	wantCount(t, s, "cnt", 7)

	// Behind the service's back: a count that scans would see this key.
	e, _ := s.resolve(ctx, acct, "cnt")
	if err := s.st.Update(ctx, nil, func(tx store.Txn) error {
		return tx.Set(keys.QueueVisible(e.id, 1, 1), []byte("x"))
	}); err != nil {
		t.Fatal(err)
	}
	wantCount(t, s, "cnt", 7)

	clk.advance(3 * time.Second)
	if n, err := s.Reap(ctx); err != nil || n != 3 {
		t.Fatalf("reaped %d %v", n, err)
	}
	wantCount(t, s, "cnt", 4)
	if err := s.ClearMessages(ctx, acct, "cnt"); err != nil {
		t.Fatal(err)
	}
	wantCount(t, s, "cnt", 0)
	if _, err := s.PutMessage(ctx, acct, "cnt", "m", 0, DefaultTTL); err != nil {
		t.Fatal(err)
	}
	wantCount(t, s, "cnt", 1)
}

// Expired messages a get walks past are deleted, and counted out.
func TestApproximateCountAfterGetPastExpired(t *testing.T) {
	s, clk := newService(t, false)
	mustCreate(t, s, "cntx")
	for i := 0; i < 4; i++ {
		if _, err := s.PutMessage(ctx, acct, "cntx", "short", 0, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutMessage(ctx, acct, "cntx", "long", 0, DefaultTTL); err != nil {
		t.Fatal(err)
	}
	clk.advance(2 * time.Second)
	got, err := s.GetMessages(ctx, acct, "cntx", 32, 30)
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	wantCount(t, s, "cntx", 1)
}
