package queue

import (
	"slices"
	"testing"
	"time"
)

// The head cache (head.go) holds messages a Get read but did not take. Each test puts a
// message inside the cached range, changes it by another path, and checks that the next Get
// sees the store, not the stale copy: a stale copy would be handed out again (a deleted or
// cleared message coming back, an updated one twice) or counted twice.

// headSetup leaves a queue whose one visible message, first, sits in the head cache with
// its receipt still valid: first is taken for one second, third is put half a second later,
// and once first's deadline has passed, the Get that takes third reads first on and caches
// it. It returns first as taken.
func headSetup(t *testing.T, name string, ttl int64) (*Service, *testClock, Message) {
	t.Helper()
	s, clk := newService(t, true)
	mustCreate(t, s, name)
	put := func(text string) {
		t.Helper()
		if _, err := s.PutMessage(ctx, acct, name, text, 0, ttl); err != nil {
			t.Fatal(err)
		}
	}
	get := func(want string, vt int64) Message {
		t.Helper()
		got, err := s.GetMessages(ctx, acct, name, 1, vt)
		if err != nil || len(got) != 1 || got[0].Text != want {
			t.Fatalf("get: %+v %v, want %q", got, err, want)
		}
		return got[0]
	}
	put("first")
	put("second")
	first := get("first", 1)
	clk.advance(500 * time.Millisecond)
	put("third")
	clk.advance(2 * time.Second)
	get("second", 60)
	get("third", 60)
	if h := s.state(mustID(t, s, name)).head.Load(); h == nil || len(h.msgs) != 1 || h.msgs[0].text != "first" {
		t.Fatalf("setup: first is not the one cached message (%+v)", h)
	}
	return s, clk, first
}

func mustID(t *testing.T, s *Service, name string) uint64 {
	t.Helper()
	e, err := s.resolve(ctx, acct, name)
	if err != nil || e == nil {
		t.Fatal(e, err)
	}
	return e.id
}

func texts(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	slices.Sort(out)
	return out
}

func wantTexts(t *testing.T, s *Service, name string, want ...string) {
	t.Helper()
	got, err := s.GetMessages(ctx, acct, name, MaxNumOfMessages, 60)
	if err != nil {
		t.Fatal(err)
	}
	if g := texts(got); !slices.Equal(g, want) {
		t.Fatalf("get: %q, want %q", g, want)
	}
}

func TestHeadCacheDelete(t *testing.T) {
	s, _, first := headSetup(t, "head-delete", -1)
	// The receipt of a message whose visibility timeout has passed still deletes it.
	if err := s.DeleteMessage(ctx, acct, "head-delete", first.ID, first.PopReceipt); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessage(ctx, acct, "head-delete", "after", 0, -1); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, s, "head-delete", "after")
	p, _ := s.GetProperties(ctx, acct, "head-delete")
	if p.ApproximateCount != 3 {
		t.Fatalf("count %d, want 3", p.ApproximateCount)
	}
}

func TestHeadCacheUpdate(t *testing.T) {
	s, _, first := headSetup(t, "head-update", -1)
	text := "first, updated"
	if _, err := s.UpdateMessage(ctx, acct, "head-update", first.ID, first.PopReceipt, &text, 3600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessage(ctx, acct, "head-update", "after", 0, -1); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, s, "head-update", "after")
	p, _ := s.GetProperties(ctx, acct, "head-update")
	if p.ApproximateCount != 4 {
		t.Fatalf("count %d, want 4", p.ApproximateCount)
	}
}

func TestHeadCacheClear(t *testing.T) {
	s, _, _ := headSetup(t, "head-clear", -1)
	if err := s.ClearMessages(ctx, acct, "head-clear"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessage(ctx, acct, "head-clear", "after", 0, -1); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, s, "head-clear", "after")
}

func TestHeadCacheReap(t *testing.T) {
	s, clk, _ := headSetup(t, "head-reap", 10)
	clk.advance(10 * time.Second) // every message expires; the reaper deletes three
	if n, err := s.Reap(ctx); err != nil || n != 3 {
		t.Fatalf("reaped %d %v", n, err)
	}
	if _, err := s.PutMessage(ctx, acct, "head-reap", "after", 0, -1); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, s, "head-reap", "after")
	p, _ := s.GetProperties(ctx, acct, "head-reap")
	if p.ApproximateCount != 1 {
		t.Fatalf("count %d, want 1", p.ApproximateCount)
	}
}

// Gets one at a time from a queue longer than the cache take every message once, in order.
func TestHeadCacheOrder(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "head-order")
	const n = 3*headAhead + 5
	for i := range n {
		if _, err := s.PutMessage(ctx, acct, "head-order", string(rune('a'+i%26))+string(rune('0'+i/26)), 0, -1); err != nil {
			t.Fatal(err)
		}
		clk.advance(time.Millisecond)
	}
	var got []string
	for {
		ms, err := s.GetMessages(ctx, acct, "head-order", 1+len(got)%3, 60)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			break
		}
		for _, m := range ms {
			got = append(got, m.Text)
		}
	}
	if len(got) != n {
		t.Fatalf("took %d messages, want %d", len(got), n)
	}
	for i, text := range got {
		if want := string(rune('a'+i%26)) + string(rune('0'+i/26)); text != want {
			t.Fatalf("message %d is %q, want %q", i, text, want)
		}
	}
}
