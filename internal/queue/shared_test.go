package queue

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// sharedStore makes a store report that other processes share it, so that two Services over
// it behave as two front ends on one database (each with its own caches and clock).
type sharedStore struct{ store.Store }

func (sharedStore) Traits() store.Traits { return store.Traits{Shared: true} }

// twoFrontEnds returns two Services sharing one store, with clocks of their own (both at
// the same instant: the test moves them).
func twoFrontEnds(t *testing.T) (a, b *Service, ca, cb *testClock) {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	ca, cb = &testClock{}, &testClock{}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	ca.ns.Store(start)
	cb.ns.Store(start)
	a = New(sharedStore{db}, Options{Now: ca.now, ReapInterval: -1})
	b = New(sharedStore{db}, Options{Now: cb.now, ReapInterval: -1})
	t.Cleanup(func() { a.Close(); b.Close(); db.Close() })
	return a, b, ca, cb
}

func takeAll(t *testing.T, s *Service, name string) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	for {
		ms, err := s.GetMessages(ctx, acct, name, MaxNumOfMessages, 60)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			return got
		}
		for _, m := range ms {
			if got[m.Text] {
				t.Fatalf("message %q handed out twice", m.Text)
			}
			got[m.Text] = true
		}
	}
}

// Two front ends whose clocks read the same make different message numbers: no put
// overwrites another's message.
func TestSharedMessageNumbersDiffer(t *testing.T) {
	a, b, ca, _ := twoFrontEnds(t)
	mustCreate(t, a, "nums")
	for i := range 20 {
		for j, s := range []*Service{a, b} {
			if _, err := s.PutMessage(ctx, acct, "nums", fmt.Sprintf("m%d-%d", j, i), 0, DefaultTTL); err != nil {
				t.Fatal(err)
			}
		}
	}
	ca.advance(time.Millisecond)
	if got := takeAll(t, a, "nums"); len(got) != 40 {
		t.Fatalf("%d of 40 messages left: puts of the two front ends overwrote each other", len(got))
	}
}

// A front end whose clock is behind puts a message below where the other's last get
// ended: the other's next get still finds it (no visibility hint on a shared store).
func TestSharedGetSeesSlowerClock(t *testing.T) {
	a, b, ca, _ := twoFrontEnds(t)
	mustCreate(t, a, "skew")
	ca.advance(10 * time.Second)
	if _, err := a.PutMessage(ctx, acct, "skew", "first", 0, DefaultTTL); err != nil {
		t.Fatal(err)
	}
	if got := takeAll(t, a, "skew"); len(got) != 1 {
		t.Fatalf("got %v", got)
	}
	if _, err := b.PutMessage(ctx, acct, "skew", "second", 0, DefaultTTL); err != nil {
		t.Fatal(err)
	}
	if got := takeAll(t, a, "skew"); !got["second"] {
		t.Fatalf("the message put by the front end with the slower clock was not found: %v", got)
	}
}

// Puts and deletes through both front ends keep one count.
func TestSharedCount(t *testing.T) {
	a, b, _, _ := twoFrontEnds(t)
	mustCreate(t, a, "count")
	for i, s := range []*Service{a, b, a, b, a} {
		if _, err := s.PutMessage(ctx, acct, "count", fmt.Sprint(i), 0, DefaultTTL); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := b.GetMessages(ctx, acct, "count", 2, 60)
	if err != nil || len(ms) != 2 {
		t.Fatal(ms, err)
	}
	for i, m := range ms {
		if err := []*Service{a, b}[i].DeleteMessage(ctx, acct, "count", m.ID, m.PopReceipt); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*Service{a, b} {
		p, err := s.GetProperties(ctx, acct, "count")
		if err != nil || p.ApproximateCount != 3 {
			t.Fatalf("count %d (%v), want 3", p.ApproximateCount, err)
		}
	}
}

// A queue deleted and created again through one front end is the new queue on the other,
// which had its catalog entry cached.
func TestSharedCatalogRecreated(t *testing.T) {
	a, b, ca, _ := twoFrontEnds(t)
	mustCreate(t, a, "again")
	if _, err := b.PutMessage(ctx, acct, "again", "old", 0, DefaultTTL); err != nil { // b caches the id
		t.Fatal(err)
	}
	if err := a.DeleteQueue(ctx, acct, "again"); err != nil {
		t.Fatal(err)
	}
	_, err := b.PutMessage(ctx, acct, "again", "lost", 0, DefaultTTL)
	wantCode(t, err, "QueueNotFound")
	_, err = b.PeekMessages(ctx, acct, "again", 1)
	wantCode(t, err, "QueueNotFound")
	mustCreate(t, a, "again")
	if _, err := b.PutMessage(ctx, acct, "again", "new", 0, DefaultTTL); err != nil {
		t.Fatal(err)
	}
	ca.advance(time.Millisecond) // past b's readings (each Service's clock ticks per reading)
	if got := takeAll(t, a, "again"); len(got) != 1 || !got["new"] {
		t.Fatalf("queue created again holds %v, want only the message put after", got)
	}
}

// staleScans is a shared store whose scans read a snapshot taken earlier: what a front end
// sees when another one changes the index between its scan and its transaction.
type staleScans struct {
	sharedStore
	snap store.Snapshot
}

func (s staleScans) Scan(ctx context.Context, start, end []byte, fn func(k, v []byte) (bool, error)) error {
	return s.snap.Scan(ctx, start, end, fn)
}

// A message another front end took after this one read the index is not taken again: the
// entry is read again inside the transaction, where it is gone.
func TestSharedGetRechecksEntries(t *testing.T) {
	a, _, ca, _ := twoFrontEnds(t)
	mustCreate(t, a, "recheck")
	put, err := a.PutMessage(ctx, acct, "recheck", "once", 0, DefaultTTL)
	if err != nil {
		t.Fatal(err)
	}
	ca.advance(time.Millisecond)
	snap, err := a.st.Snapshot(ctx) // the index as the slow front end read it
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if got, err := a.GetMessages(ctx, acct, "recheck", 1, 60); err != nil || len(got) != 1 || got[0].ID != put.ID {
		t.Fatalf("first get: %+v %v", got, err)
	}
	slow := New(staleScans{sharedStore{a.st.(sharedStore).Store}, snap}, Options{Now: ca.now, ReapInterval: -1})
	defer slow.Close()
	if got, err := slow.GetMessages(ctx, acct, "recheck", 1, 60); err != nil || len(got) != 0 {
		t.Fatalf("a message taken by another front end was handed out again: %+v %v", got, err)
	}
}
