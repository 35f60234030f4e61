package queue

import (
	"fmt"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

// Peek returns the first n visible messages in order, no more, and changes nothing.
func TestPeekReturnsAtMostN(t *testing.T) {
	s, _ := newService(t, true)
	mustCreate(t, s, "peek-n")
	for i := range 5 {
		if _, err := s.PutMessage(ctx, acct, "peek-n", fmt.Sprint(i), 0, DefaultTTL); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		n    int
		want []string
	}{{1, numbers(0, 1)}, {3, numbers(0, 3)}, {5, numbers(0, 5)}, {MaxNumOfMessages, numbers(0, 5)}} {
		got, err := s.PeekMessages(ctx, acct, "peek-n", tc.n)
		if err != nil || fmt.Sprint(textsInOrder(got)) != fmt.Sprint(tc.want) {
			t.Fatalf("peek %d: %v %v, want %v", tc.n, textsInOrder(got), err, tc.want)
		}
	}
	getTexts(t, s, "peek-n", 2, "0", "1") // peeking took nothing
}

// On a shared store, Peek reads the catalog each time: it sees messages put through another
// front end, a deleted queue is gone, and a queue created again under the name is the new one.
func TestSharedPeek(t *testing.T) {
	a, b, ca, cb := twoFrontEnds(t)
	mustCreate(t, a, "shared-peek")
	if _, err := a.PutMessage(ctx, acct, "shared-peek", "old", 0, DefaultTTL); err != nil {
		t.Fatal(err)
	}
	cb.advance(time.Millisecond)
	if got, err := b.PeekMessages(ctx, acct, "shared-peek", 1); err != nil || fmt.Sprint(textsInOrder(got)) != "[old]" {
		t.Fatalf("peek through the other front end: %v %v", textsInOrder(got), err)
	}
	if err := a.DeleteQueue(ctx, acct, "shared-peek"); err != nil {
		t.Fatal(err)
	}
	_, err := b.PeekMessages(ctx, acct, "shared-peek", 1)
	wantCode(t, err, azerr.QueueNotFound)
	mustCreate(t, a, "shared-peek")
	if _, err := a.PutMessage(ctx, acct, "shared-peek", "new", 0, DefaultTTL); err != nil {
		t.Fatal(err)
	}
	ca.advance(time.Millisecond)
	cb.advance(time.Millisecond)
	if got, err := b.PeekMessages(ctx, acct, "shared-peek", 32); err != nil || fmt.Sprint(textsInOrder(got)) != "[new]" {
		t.Fatalf("peek of the queue created again: %v %v", textsInOrder(got), err)
	}
}

// A receipt stops working at the message's expiration time exactly: Update and Delete, each
// the first reading of the clock at that instant, find no message.
func TestReceiptsEndAtExpirationTime(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "rcpt-exp")
	for _, text := range []string{"update", "delete"} {
		if _, err := s.PutMessage(ctx, acct, "rcpt-exp", text, 0, 60); err != nil {
			t.Fatal(err)
		}
		clk.advance(time.Second)
	}
	got, err := s.GetMessages(ctx, acct, "rcpt-exp", 2, 30)
	if err != nil || len(got) != 2 {
		t.Fatal(got, err)
	}
	clk.ns.Store(got[0].Expires.UnixNano())
	_, err = s.UpdateMessage(ctx, acct, "rcpt-exp", got[0].ID, got[0].PopReceipt, nil, 0)
	wantCode(t, err, azerr.MessageNotFound)
	clk.ns.Store(got[1].Expires.UnixNano())
	wantCode(t, s.DeleteMessage(ctx, acct, "rcpt-exp", got[1].ID, got[1].PopReceipt), azerr.MessageNotFound)
}

// A reaper pass leaves the next one to start reapSlack before the time it ran at, not at the
// beginning of the expiry index; a later pass moves it on.
func TestReaperResumesWhereItEnded(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "resume")
	if _, err := s.PutMessage(ctx, acct, "resume", "x", 0, 1); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		clk.advance(time.Minute)
		before := clk.now().UnixNano()
		if _, err := s.Reap(ctx); err != nil {
			t.Fatal(err)
		}
		if d := s.reapFrom.Load() - (before - int64(reapSlack)); d < 0 || d > int64(time.Millisecond) {
			t.Fatalf("the next pass starts %v after the clock less reapSlack", time.Duration(d))
		}
	}
}
