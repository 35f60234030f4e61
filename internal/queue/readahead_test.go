package queue

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// scanCounter is a real store that counts the iterators opened on it (Scan calls) and the
// entries they visit: the work the head cache (head.go) exists to save.
type scanCounter struct {
	store.Store
	scans, entries atomic.Int64
}

func (c *scanCounter) Scan(ctx context.Context, start, end []byte, fn func(k, v []byte) (bool, error)) error {
	c.scans.Add(1)
	return c.Store.Scan(ctx, start, end, func(k, v []byte) (bool, error) {
		c.entries.Add(1)
		return fn(k, v)
	})
}

// countedQueue returns a service over a counting in-memory store, with queue name holding
// n messages "0", "1", … (the counters start at zero after the puts).
func countedQueue(t *testing.T, name string, n int) (*Service, *scanCounter) {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	c := &scanCounter{Store: db}
	s, _ := newServiceOn(t, c)
	mustCreate(t, s, name)
	for i := range n {
		if _, err := s.PutMessage(ctx, acct, name, fmt.Sprint(i), 0, DefaultTTL); err != nil {
			t.Fatal(err)
		}
	}
	c.scans.Store(0)
	c.entries.Store(0)
	return s, c
}

// getTexts takes n messages and checks they are want, in order.
func getTexts(t *testing.T, s *Service, name string, n int, want ...string) {
	t.Helper()
	got, err := s.GetMessages(ctx, acct, name, n, 60)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(textsInOrder(got)) != fmt.Sprint(want) {
		t.Fatalf("get %d: %v, want %v", n, textsInOrder(got), want)
	}
}

func numbers(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

// A Get reads exactly headAhead messages past what it takes into the cache, in one
// iterator, and the next Gets take them without opening another.
func TestGetReadsHeadAheadMessages(t *testing.T) {
	s, c := countedQueue(t, "ahead", 100)
	getTexts(t, s, "ahead", 1, "0")
	if n := c.scans.Load(); n != 1 {
		t.Fatalf("the first get opened %d iterators, want 1", n)
	}
	h := s.state(mustID(t, s, "ahead")).head.Load()
	if h == nil || fmt.Sprint(textsInOrder(outAll(s, h.msgs))) != fmt.Sprint(numbers(1, 1+headAhead)) {
		t.Fatalf("cached after the first get: %v, want messages 1 to %d", h != nil && len(h.msgs) > 0, headAhead)
	}
	for i := 1; i <= headAhead; i++ {
		getTexts(t, s, "ahead", 1, fmt.Sprint(i))
	}
	if n := c.scans.Load(); n != 1 {
		t.Fatalf("%d gets of one message opened %d iterators, want 1", 1+headAhead, n)
	}
	getTexts(t, s, "ahead", 1, fmt.Sprint(1+headAhead))
	if n := c.scans.Load(); n != 2 {
		t.Fatalf("the get after the cache ran out: %d iterators in all, want 2", n)
	}
}

// A Get that takes part of what it wants from the cache reads the rest, and headAhead more,
// from the store: each index entry is read once, plus at most the one past where the walk
// stops.
func TestGetReadsOnlyWhatTheCacheLacks(t *testing.T) {
	s, c := countedQueue(t, "lacks", 100)
	getTexts(t, s, "lacks", 1, "0")                // caches 1 … 32
	getTexts(t, s, "lacks", 20, numbers(1, 21)...) // from the cache: 21 … 32 left
	c.entries.Store(0)
	getTexts(t, s, "lacks", MaxNumOfMessages, numbers(21, 53)...) // 12 cached, 20 read
	if n, most := c.entries.Load(), int64(MaxNumOfMessages-12+headAhead+1); n > most {
		t.Fatalf("the get read %d index entries, want at most %d", n, most)
	}
}

// textsInOrder returns the messages' texts in the order given.
func textsInOrder(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

func outAll(s *Service, ms []*message) []Message {
	var out []Message
	for _, m := range ms {
		out = append(out, s.out(1, m, false))
	}
	return out
}

// A cached message expires at its expiration time exactly, as a stored one does; a Get
// still takes no more than it asked for when cached messages at the front have expired.
func TestCachedMessagesExpire(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "cached-exp")
	var short Message
	for _, text := range []string{"first", "short", "b", "c", "d"} {
		ttl := int64(DefaultTTL)
		if text == "short" {
			ttl = 10
		}
		m, err := s.PutMessage(ctx, acct, "cached-exp", text, 0, ttl)
		if err != nil {
			t.Fatal(err)
		}
		if text == "short" {
			short = m
		}
	}
	getTexts(t, s, "cached-exp", 1, "first") // caches short, b, c, d
	if h := s.state(mustID(t, s, "cached-exp")).head.Load(); h == nil || len(h.msgs) != 4 {
		t.Fatalf("setup: cached %+v, want 4 messages", h)
	}
	clk.ns.Store(short.Expires.UnixNano())
	getTexts(t, s, "cached-exp", 2, "b", "c")
	wantCount(t, s, "cached-exp", 4)
}
