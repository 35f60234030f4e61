package queue

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// testClock is a settable clock.
type testClock struct{ ns atomic.Int64 }

func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func newService(t testing.TB, inMemory bool) (*Service, *testClock) {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir(), InMemory: inMemory})
	if err != nil {
		t.Fatal(err)
	}
	return newServiceOn(t, db)
}

// newServiceOn returns a Service on db (closed with it at cleanup), its clock at a fixed
// instant and its reaper off.
func newServiceOn(t testing.TB, db store.Store) (*Service, *testClock) {
	t.Helper()
	clk := &testClock{}
	clk.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s := New(db, Options{Now: clk.now, ReapInterval: -1})
	t.Cleanup(func() { s.Close(); db.Close() })
	return s, clk
}

const acct = "devstoreaccount1"

var ctx = context.Background()

func mustCreate(t testing.TB, s *Service, name string) {
	t.Helper()
	if _, err := s.CreateQueue(ctx, acct, name, nil); err != nil {
		t.Fatal(err)
	}
}

func wantCode(t testing.TB, err error, code azerr.Code) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	if !azerr.Is(err, code) {
		t.Fatalf("got %v, want %s", err, code)
	}
}

func TestCreateQueueIdempotence(t *testing.T) {
	s, _ := newService(t, true)
	md := []Meta{{"Purpose", "x"}}
	created, err := s.CreateQueue(ctx, acct, "qq1", md)
	if err != nil || !created {
		t.Fatal(created, err)
	}
	created, err = s.CreateQueue(ctx, acct, "qq1", []Meta{{"purpose", "x"}})
	if err != nil || created {
		t.Fatalf("same metadata: %v %v", created, err)
	}
	_, err = s.CreateQueue(ctx, acct, "qq1", []Meta{{"purpose", "y"}})
	wantCode(t, err, azerr.QueueAlreadyExists)
	_, err = s.CreateQueue(ctx, acct, "Q1x", nil)
	wantCode(t, err, azerr.InvalidResourceName)
	_, err = s.CreateQueue(ctx, acct, "ab", nil)
	wantCode(t, err, azerr.OutOfRangeInput)
	_, err = s.CreateQueue(ctx, acct, "a--b", nil)
	wantCode(t, err, azerr.InvalidResourceName)
	_, err = s.CreateQueue(ctx, acct, "abc", []Meta{{"1x", "v"}})
	wantCode(t, err, azerr.InvalidMetadata)
}

// A message is invisible from a Get until TimeNextVisible; each Get and Update gives a new
// pop receipt and the old one stops working; DequeueCount counts Gets, not Updates.
func TestVisibilityReceiptsDequeueCount(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "vis")
	put, err := s.PutMessage(ctx, acct, "vis", "hello", 0, DefaultTTL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMessages(ctx, acct, "vis", 1, 30)
	if err != nil || len(got) != 1 || got[0].Text != "hello" || got[0].DequeueCount != 1 || got[0].ID != put.ID {
		t.Fatalf("%+v %v", got, err)
	}
	// The service's clock moves on by at least a nanosecond per reading.
	if d := got[0].NextVisible.Sub(clk.now().Add(30 * time.Second)); d < 0 || d > time.Millisecond {
		t.Fatalf("next visible %v", got[0].NextVisible)
	}
	// Invisible until then.
	clk.advance(29 * time.Second)
	if again, _ := s.GetMessages(ctx, acct, "vis", 32, 30); len(again) != 0 {
		t.Fatalf("got an invisible message: %+v", again)
	}
	if peek, _ := s.PeekMessages(ctx, acct, "vis", 32); len(peek) != 0 {
		t.Fatalf("peeked an invisible message: %+v", peek)
	}
	clk.advance(time.Second + time.Millisecond)
	second, err := s.GetMessages(ctx, acct, "vis", 1, 30)
	if err != nil || len(second) != 1 || second[0].DequeueCount != 2 || second[0].PopReceipt == got[0].PopReceipt {
		t.Fatalf("%+v %v", second, err)
	}
	// The first receipt is dead (Azure: 404 MessageNotFound); so is the producer's.
	wantCode(t, s.DeleteMessage(ctx, acct, "vis", put.ID, got[0].PopReceipt), azerr.MessageNotFound)
	wantCode(t, s.DeleteMessage(ctx, acct, "vis", put.ID, put.PopReceipt), azerr.MessageNotFound)
	// Update: new receipt, text replaced, count unchanged, visible at once with 0.
	text := "changed"
	up, err := s.UpdateMessage(ctx, acct, "vis", put.ID, second[0].PopReceipt, &text, 0)
	if err != nil || up.PopReceipt == second[0].PopReceipt {
		t.Fatal(up, err)
	}
	_, err = s.UpdateMessage(ctx, acct, "vis", put.ID, second[0].PopReceipt, nil, 0)
	wantCode(t, err, azerr.MessageNotFound)
	peek, err := s.PeekMessages(ctx, acct, "vis", 1)
	if err != nil || len(peek) != 1 || peek[0].Text != "changed" || peek[0].DequeueCount != 2 || peek[0].PopReceipt != "" {
		t.Fatalf("%+v %v", peek, err)
	}
	// An update without text keeps it.
	up2, err := s.UpdateMessage(ctx, acct, "vis", put.ID, up.PopReceipt, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.DeleteMessage(ctx, acct, "vis", put.ID, up.PopReceipt), azerr.MessageNotFound)
	wantCode(t, s.DeleteMessage(ctx, acct, "vis", put.ID, up2.PopReceipt), "")
	wantCode(t, s.DeleteMessage(ctx, acct, "vis", put.ID, up2.PopReceipt), azerr.MessageNotFound)
	wantCode(t, s.DeleteMessage(ctx, acct, "vis", put.ID, "!!"), azerr.InvalidQueryParameterValue)
}

// Messages of one producer come back in insertion order; put with a visibility timeout
// stays hidden until it passes.
func TestFIFOAndDelayedPut(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "fifo")
	if _, err := s.PutMessage(ctx, acct, "fifo", "later", 10, DefaultTTL); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := s.PutMessage(ctx, acct, "fifo", fmt.Sprint(i), 0, DefaultTTL); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	for {
		got, err := s.GetMessages(ctx, acct, "fifo", 7, 60)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		for _, m := range got {
			seen = append(seen, m.Text)
		}
	}
	if len(seen) != 40 {
		t.Fatalf("got %d of 40 messages: %v", len(seen), seen)
	}
	for i, v := range seen {
		if v != fmt.Sprint(i) {
			t.Fatalf("order %v", seen)
		}
	}
	clk.advance(10*time.Second + time.Millisecond)
	got, _ := s.GetMessages(ctx, acct, "fifo", 32, 60)
	if len(got) != 1 || got[0].Text != "later" {
		t.Fatalf("%+v", got)
	}
}

// Expired messages are never returned and the reaper deletes them from the expiry index.
func TestExpiry(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "exp")
	for range 10 {
		if _, err := s.PutMessage(ctx, acct, "exp", "short", 0, 5); err != nil {
			t.Fatal(err)
		}
	}
	keep, err := s.PutMessage(ctx, acct, "exp", "forever", 0, -1)
	if err != nil || !keep.Expires.Equal(NeverExpires) {
		t.Fatal(keep, err)
	}
	taken, _ := s.GetMessages(ctx, acct, "exp", 1, 1) // one short message, taken
	clk.advance(5*time.Second + time.Millisecond)
	peek, _ := s.PeekMessages(ctx, acct, "exp", 32)
	if len(peek) != 1 || peek[0].Text != "forever" {
		t.Fatalf("peek after expiry: %+v", peek)
	}
	wantCode(t, s.DeleteMessage(ctx, acct, "exp", taken[0].ID, taken[0].PopReceipt), azerr.MessageNotFound)
	n, err := s.Reap(ctx)
	if err != nil || n != 10 {
		t.Fatalf("reaped %d %v", n, err)
	}
	p, _ := s.GetProperties(ctx, acct, "exp")
	if p.ApproximateCount != 1 {
		t.Fatalf("count after reaping %d", p.ApproximateCount)
	}
	got, _ := s.GetMessages(ctx, acct, "exp", 32, 1)
	if len(got) != 1 || got[0].Text != "forever" {
		t.Fatalf("%+v", got)
	}
}

func TestLimits(t *testing.T) {
	s, _ := newService(t, true)
	mustCreate(t, s, "lim")
	big := string(make([]byte, MaxMessageBytes+1))
	_, err := s.PutMessage(ctx, acct, "lim", big, 0, DefaultTTL)
	wantCode(t, err, azerr.RequestBodyTooLarge)
	_, err = s.PutMessage(ctx, acct, "lim", big[:MaxMessageBytes], 0, DefaultTTL)
	wantCode(t, err, "")
	for _, tc := range []struct{ vt, ttl int64 }{{-1, 60}, {60, 60}, {MaxVisibilityTimeout + 1, -1}, {0, 0}, {0, -2}} {
		_, err = s.PutMessage(ctx, acct, "lim", "x", tc.vt, tc.ttl)
		wantCode(t, err, azerr.OutOfRangeQueryParameterValue)
	}
	_, err = s.PutMessage(ctx, acct, "lim", "x", 59, 60)
	wantCode(t, err, "")
	for _, n := range []int{0, 33} {
		_, err = s.GetMessages(ctx, acct, "lim", n, 30)
		wantCode(t, err, azerr.OutOfRangeQueryParameterValue)
		_, err = s.PeekMessages(ctx, acct, "lim", n)
		wantCode(t, err, azerr.OutOfRangeQueryParameterValue)
	}
	for _, vt := range []int64{0, MaxVisibilityTimeout + 1} {
		_, err = s.GetMessages(ctx, acct, "lim", 1, vt)
		wantCode(t, err, azerr.OutOfRangeQueryParameterValue)
	}
	_, err = s.GetMessages(ctx, acct, "nosuch", 1, 30)
	wantCode(t, err, azerr.QueueNotFound)
}

// Delete Queue drops the messages with it; a queue created again with the same name starts
// empty, and old message ids do not reach into it.
func TestDeleteAndRecreate(t *testing.T) {
	s, _ := newService(t, true)
	mustCreate(t, s, "again")
	m, _ := s.PutMessage(ctx, acct, "again", "old", 0, DefaultTTL)
	if _, err := s.PeekMessages(ctx, acct, "again", 1); err != nil { // the id is cached now
		t.Fatal(err)
	}
	old, _ := s.resolve(ctx, acct, "again")
	wantCode(t, s.DeleteQueue(ctx, acct, "again"), "")
	wantCode(t, s.DeleteQueue(ctx, acct, "again"), azerr.QueueNotFound)
	// The queue's data went with it (one range delete), not just its catalog entry.
	left := 0
	_ = s.st.Scan(ctx, keys.QueueData(old.id), keys.PrefixEnd(keys.QueueData(old.id)), func(_, _ []byte) (bool, error) {
		left++
		return true, nil
	})
	if left != 0 {
		t.Fatalf("%d keys of the deleted queue remain", left)
	}
	_, err := s.PutMessage(ctx, acct, "again", "into a deleted queue", 0, DefaultTTL)
	wantCode(t, err, azerr.QueueNotFound)
	_, err = s.PeekMessages(ctx, acct, "again", 1)
	wantCode(t, err, azerr.QueueNotFound)
	mustCreate(t, s, "again")
	if _, err := s.PutMessage(ctx, acct, "again", "new", 0, DefaultTTL); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.GetProperties(ctx, acct, "again"); p.ApproximateCount != 1 {
		t.Fatalf("the new queue holds %d messages, want 1", p.ApproximateCount)
	}
	wantCode(t, s.ClearMessages(ctx, acct, "again"), "")
	if got, _ := s.PeekMessages(ctx, acct, "again", 32); len(got) != 0 {
		t.Fatalf("re-created queue holds %+v", got)
	}
	wantCode(t, s.DeleteMessage(ctx, acct, "again", m.ID, m.PopReceipt), azerr.MessageNotFound)
	if p, _ := s.GetProperties(ctx, acct, "again"); p.ApproximateCount != 0 {
		t.Fatal(p)
	}
	// Clear Messages empties a queue in one range delete.
	for range 5 {
		s.PutMessage(ctx, acct, "again", "x", 0, DefaultTTL)
	}
	wantCode(t, s.ClearMessages(ctx, acct, "again"), "")
	if got, _ := s.GetMessages(ctx, acct, "again", 32, 30); len(got) != 0 {
		t.Fatal(got)
	}
}

func TestListQueues(t *testing.T) {
	s, _ := newService(t, true)
	for _, n := range []string{"abc-1", "abc-2", "abc-3", "xyz"} {
		if _, err := s.CreateQueue(ctx, acct, n, []Meta{{"n", n}}); err != nil {
			t.Fatal(err)
		}
	}
	page, next, err := s.ListQueues(ctx, acct, "abc", "", 2)
	if err != nil || len(page) != 2 || page[0].Name != "abc-1" || next != "/"+acct+"/abc-3" {
		t.Fatalf("%+v %q %v", page, next, err)
	}
	page, next, err = s.ListQueues(ctx, acct, "abc", next, 2)
	if err != nil || len(page) != 1 || page[0].Name != "abc-3" || next != "" || page[0].Metadata[0].Value != "abc-3" {
		t.Fatalf("%+v %q %v", page, next, err)
	}
	_, _, err = s.ListQueues(ctx, acct, "", "garbage", 2)
	wantCode(t, err, azerr.InvalidMarker)
}

// 16 consumers get-and-delete 10,000 messages concurrently: every message is handed out
// exactly once (each visibility window is long enough that none reappears).
func TestConcurrentConsumersExactlyOnce(t *testing.T) {
	s, _ := newService(t, true)
	mustCreate(t, s, "work")
	const total = 10000
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := p; i < total; i += 4 {
				if _, err := s.PutMessage(ctx, acct, "work", fmt.Sprint(i), 0, DefaultTTL); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var mu sync.Mutex
	seen := make(map[string]int, total)
	var received atomic.Int64
	deadline := time.Now().Add(2 * time.Minute) // a lost message must fail the test, not hang it
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for received.Load() < total && time.Now().Before(deadline) {
				got, err := s.GetMessages(ctx, acct, "work", 32, 3600)
				if err != nil {
					t.Error(err)
					return
				}
				for _, m := range got {
					mu.Lock()
					seen[m.Text]++
					mu.Unlock()
					if err := s.DeleteMessage(ctx, acct, "work", m.ID, m.PopReceipt); err != nil {
						t.Error(err)
						return
					}
					received.Add(1)
				}
				if len(got) == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != total {
		t.Fatalf("%d distinct messages, want %d", len(seen), total)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("message %s handed out %d times", k, n)
		}
	}
	if p, _ := s.GetProperties(ctx, acct, "work"); p.ApproximateCount != 0 {
		t.Fatalf("%d left", p.ApproximateCount)
	}
}

// A message made visible again by an update (visibility timeout 0) is found by the next Get
// even when the wall clock has not moved (the service's clock still does), and even though
// an earlier Get already walked past its old place in the index.
func TestUpdatedMessageVisibleAgain(t *testing.T) {
	s, _ := newService(t, true)
	mustCreate(t, s, "again-visible")
	a, _ := s.PutMessage(ctx, acct, "again-visible", "a", 0, DefaultTTL)
	s.PutMessage(ctx, acct, "again-visible", "b", 0, DefaultTTL)
	got, err := s.GetMessages(ctx, acct, "again-visible", 1, 30)
	if err != nil || len(got) != 1 || got[0].ID != a.ID {
		t.Fatal(got, err)
	}
	if _, err := s.UpdateMessage(ctx, acct, "again-visible", a.ID, got[0].PopReceipt, nil, 0); err != nil {
		t.Fatal(err)
	}
	all, err := s.GetMessages(ctx, acct, "again-visible", 32, 30)
	if err != nil || len(all) != 2 {
		t.Fatalf("after the update: %+v %v", all, err)
	}
}

// A Get that walks past expired messages keeps its place right after the last message it
// took, not past messages it did not reach.
func TestWalkPastExpired(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "past-expired")
	s.PutMessage(ctx, acct, "past-expired", "short", 0, 1)
	s.PutMessage(ctx, acct, "past-expired", "long1", 0, DefaultTTL)
	s.PutMessage(ctx, acct, "past-expired", "long2", 0, DefaultTTL)
	clk.advance(time.Second + time.Millisecond)
	for _, want := range []string{"long1", "long2"} {
		got, err := s.GetMessages(ctx, acct, "past-expired", 1, 30)
		if err != nil || len(got) != 1 || got[0].Text != want {
			t.Fatalf("want %s: %+v %v", want, got, err)
		}
	}
}

// DeleteAccount drops one account's queues, messages and settings (not those of an account
// whose name it prefixes); the expiry entries it leaves are dropped by the reaper.
func TestDeleteAccount(t *testing.T) {
	s, clk := newService(t, true)
	var ids []uint64
	for _, a := range []string{"acct", "acct2"} {
		if _, err := s.CreateQueue(ctx, a, "qqq", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutMessage(ctx, a, "qqq", "m-"+a, 0, 60); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateAccountSetting(ctx, a, "properties", func([]byte) ([]byte, error) { return []byte("doc"), nil }); err != nil {
			t.Fatal(err)
		}
		e, _ := s.resolve(ctx, a, "qqq")
		ids = append(ids, e.id)
	}
	wantCode(t, s.DeleteAccount(ctx, "acct"), "")
	s.DropCaches()
	_, err := s.PeekMessages(ctx, "acct", "qqq", 1)
	wantCode(t, err, azerr.QueueNotFound)
	left := 0
	_ = s.st.Scan(ctx, keys.QueueData(ids[0]), keys.PrefixEnd(keys.QueueData(ids[0])), func(_, _ []byte) (bool, error) {
		left++
		return true, nil
	})
	if left != 0 {
		t.Fatalf("%d keys of acct's queue remain", left)
	}
	if doc, err := s.AccountSetting(ctx, "acct", "properties"); err != nil || doc != nil {
		t.Fatalf("acct's settings: %q %v", doc, err)
	}
	if got, err := s.PeekMessages(ctx, "acct2", "qqq", 1); err != nil || len(got) != 1 || got[0].Text != "m-acct2" {
		t.Fatalf("acct2's queue: %+v %v", got, err)
	}
	if doc, err := s.AccountSetting(ctx, "acct2", "properties"); err != nil || string(doc) != "doc" {
		t.Fatalf("acct2's settings: %q %v", doc, err)
	}
	clk.advance(2 * time.Minute)
	if _, err := s.Reap(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = s.st.Scan(ctx, keys.QueueExpiryPrefix(), keys.PrefixEnd(keys.QueueExpiryPrefix()), func(_, _ []byte) (bool, error) {
		n++
		return true, nil
	})
	if n != 0 {
		t.Fatalf("%d expiry entries after the reaper", n)
	}
}
