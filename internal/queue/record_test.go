package queue

import (
	"errors"
	"testing"
	"time"
)

// A catalog record cut short anywhere is corrupt, never read as a shorter valid record (nor
// a panic).
func TestTruncatedQueueRecordIsCorrupt(t *testing.T) {
	r := &queueRecord{id: 7, name: "queue", md: []Meta{{"a", "1"}, {"bb", "22"}}, acl: []byte("<x/>")}
	b := r.encode()
	if got, err := decodeQueueRecord(b); err != nil || got.name != "queue" || len(got.md) != 2 || string(got.acl) != "<x/>" {
		t.Fatalf("whole record: %+v %v", got, err)
	}
	for n := range len(b) {
		if got, err := decodeQueueRecord(b[:n]); !errors.Is(err, errCorrupt) {
			t.Errorf("record cut to %d of %d bytes: %+v %v, want errCorrupt", n, len(b), got, err)
		}
	}
}

// A message with empty text is stored and handed out like any other.
func TestEmptyMessageText(t *testing.T) {
	s, _ := newService(t, true)
	mustCreate(t, s, "empty-text")
	if _, err := s.PutMessage(ctx, acct, "empty-text", "", 0, -1); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMessages(ctx, acct, "empty-text", 1, 30)
	if err != nil || len(got) != 1 || got[0].Text != "" {
		t.Fatalf("%+v %v", got, err)
	}
}

// Index positions order by visibility time, then by message number; the position after the
// last number of an instant is the next instant's first.
func TestPositionOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b position
		less bool
	}{
		{position{1, 5}, position{2, 0}, true},
		{position{2, 0}, position{1, 5}, false},
		{position{1, 3}, position{1, 4}, true},
		{position{1, 4}, position{1, 3}, false},
		{position{1, 4}, position{1, 4}, false},
	} {
		if got := tc.a.less(tc.b); got != tc.less {
			t.Errorf("%v less %v: %v", tc.a, tc.b, got)
		}
	}
	if got := (position{5, 3}).next(); got != (position{5, 4}) {
		t.Errorf("next of {5 3}: %v", got)
	}
	if got := (position{5, ^uint64(0)}).next(); got != (position{6, 0}) {
		t.Errorf("next of the last number: %v", got)
	}
}

// Two messages that become visible at the same instant are both handed out, one Get at a
// time, in the order they were put.
func TestMessagesVisibleAtTheSameInstant(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "same-instant")
	a, err := s.PutMessage(ctx, acct, "same-instant", "a", 1, -1)
	if err != nil {
		t.Fatal(err)
	}
	clk.ns.Store(a.NextVisible.UnixNano())
	b, err := s.PutMessage(ctx, acct, "same-instant", "b", 0, -1)
	if err != nil || !b.NextVisible.Equal(a.NextVisible) {
		t.Fatalf("setup: %v %v, want both visible at %v", b.NextVisible, err, a.NextVisible)
	}
	clk.advance(time.Second)
	getTexts(t, s, "same-instant", 1, "a")
	getTexts(t, s, "same-instant", 1, "b")
}

// Reaping the expiry entries of a deleted queue's messages counts each entry once.
func TestReapAfterDeleteQueue(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "dropped")
	for range 3 {
		if _, err := s.PutMessage(ctx, acct, "dropped", "x", 0, 1); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, s.DeleteQueue(ctx, acct, "dropped"), "")
	clk.advance(2 * time.Second)
	if n, err := s.Reap(ctx); err != nil || n != 3 {
		t.Fatalf("reaped %d %v, want the 3 entries", n, err)
	}
	if n, err := s.Reap(ctx); err != nil || n != 0 {
		t.Fatalf("second pass reaped %d %v", n, err)
	}
}
