package queue

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// details returns an Azure error's detail elements by name.
func details(t *testing.T, err error) map[string]string {
	t.Helper()
	var e *azerr.Error
	if !errors.As(err, &e) {
		t.Fatalf("%v is not an Azure error", err)
	}
	out := map[string]string{}
	for _, d := range e.Details {
		out[d.Name] = d.Value
	}
	return out
}

// wantRange checks that err is OutOfRangeQueryParameterValue naming the parameter, the
// value and the bounds the client may use.
func wantRange(t *testing.T, err error, name, value, lo, hi string) {
	t.Helper()
	wantCode(t, err, azerr.OutOfRangeQueryParameterValue)
	d := details(t, err)
	if d["QueryParameterName"] != name || d["QueryParameterValue"] != value || d["MinimumAllowed"] != lo || d["MaximumAllowed"] != hi {
		t.Errorf("%s=%s: details %v, want bounds %s…%s", name, value, d, lo, hi)
	}
}

// Every range error names the parameter, the value sent and the range allowed; the text
// limit names its size.
func TestRangeErrorDetails(t *testing.T) {
	s, _ := newService(t, true)
	mustCreate(t, s, "details")
	_, err := s.PutMessage(ctx, acct, "details", "x", 0, 0)
	wantRange(t, err, "messagettl", "0", "-1", "2147483647")
	_, err = s.PutMessage(ctx, acct, "details", "x", 0, -2)
	wantRange(t, err, "messagettl", "-2", "-1", "2147483647")
	_, err = s.PutMessage(ctx, acct, "details", "x", 60, 60)
	wantRange(t, err, "visibilitytimeout", "60", "0", "59")
	_, err = s.PutMessage(ctx, acct, "details", "x", MaxVisibilityTimeout+1, -1)
	wantRange(t, err, "visibilitytimeout", "604801", "0", "604800")
	_, err = s.PutMessage(ctx, acct, "details", "x", MaxVisibilityTimeout+1, MaxVisibilityTimeout+5)
	wantRange(t, err, "visibilitytimeout", "604801", "0", "604800")
	_, err = s.PutMessage(ctx, acct, "details", "x", -1, DefaultTTL)
	wantRange(t, err, "visibilitytimeout", "-1", "0", "604799")
	_, err = s.GetMessages(ctx, acct, "details", 33, 30)
	wantRange(t, err, "numofmessages", "33", "1", "32")
	_, err = s.PeekMessages(ctx, acct, "details", 0)
	wantRange(t, err, "numofmessages", "0", "1", "32")
	_, err = s.GetMessages(ctx, acct, "details", 1, 0)
	wantRange(t, err, "visibilitytimeout", "0", "1", "604800")
	m, err := s.PutMessage(ctx, acct, "details", "x", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.UpdateMessage(ctx, acct, "details", m.ID, m.PopReceipt, nil, MaxVisibilityTimeout+1)
	wantRange(t, err, "visibilitytimeout", "604801", "0", "604800")
	_, err = s.UpdateMessage(ctx, acct, "details", m.ID, m.PopReceipt, nil, -1)
	wantRange(t, err, "visibilitytimeout", "-1", "0", "604800")
	big := strings.Repeat("x", MaxMessageBytes+1)
	_, err = s.PutMessage(ctx, acct, "details", big, 0, -1)
	wantCode(t, err, azerr.RequestBodyTooLarge)
	if d := details(t, err); d["MaxLimit"] != "65536" {
		t.Errorf("text too large: details %v", d)
	}
	_, err = s.UpdateMessage(ctx, acct, "details", m.ID, m.PopReceipt, &big, 0)
	wantCode(t, err, azerr.RequestBodyTooLarge)
}

// The head cache holds up to headBytes of text, exactly that much included, and always at
// least one message, however large.
func TestHeadCacheBounds(t *testing.T) {
	msg := func(seq uint64, size int) *message {
		return &message{seq: seq, visibleAt: int64(seq), text: strings.Repeat("x", size)}
	}
	end := position{at: 100}
	if h := newHead(nil, end); h != nil {
		t.Errorf("nothing to cache: %+v", h)
	}
	h := newHead([]*message{msg(1, headBytes/2), msg(2, headBytes/2)}, end)
	if h == nil || len(h.msgs) != 2 || h.end != end {
		t.Errorf("two halves of headBytes: %+v", h)
	}
	h = newHead([]*message{msg(1, headBytes/2), msg(2, headBytes/2), msg(3, 1)}, end)
	if h == nil || len(h.msgs) != 2 || h.end != (position{3, 3}) {
		t.Errorf("one byte past headBytes: %+v", h)
	}
	h = newHead([]*message{msg(1, headBytes+1), msg(2, 1)}, end)
	if h == nil || len(h.msgs) != 1 || h.end != (position{2, 2}) {
		t.Errorf("a first message past headBytes: %+v", h)
	}
	h = newHead([]*message{msg(1, 1), msg(2, 1), msg(3, 1)}, end)
	if h == nil || len(h.msgs) != 3 {
		t.Errorf("three small messages: %+v", h)
	}
}

// A queue written before counts were kept has no count key: Get Queue Metadata counts its
// messages once, and the next write stores the count from there. A malformed count key is
// treated the same way.
func TestCountOfQueueWithoutCountKey(t *testing.T) {
	s, _ := newService(t, true)
	mustCreate(t, s, "nocount")
	for range 3 {
		if _, err := s.PutMessage(ctx, acct, "nocount", "m", 0, -1); err != nil {
			t.Fatal(err)
		}
	}
	qid := mustID(t, s, "nocount")
	if err := s.st.Update(ctx, nil, func(tx store.Txn) error { return tx.Delete(keys.QueueCount(qid)) }); err != nil {
		t.Fatal(err)
	}
	s.DropCaches()
	wantCount(t, s, "nocount", 3)
	if _, err := s.PutMessage(ctx, acct, "nocount", "m", 0, -1); err != nil {
		t.Fatal(err)
	}
	wantCount(t, s, "nocount", 4)
	if v, err := s.st.Get(ctx, keys.QueueCount(qid)); err != nil || len(v) != 8 || v[7] != 4 {
		t.Errorf("count key after the put: %x %v", v, err)
	}
	// A count key that is not 8 bytes long is not a count either.
	if err := s.st.Update(ctx, nil, func(tx store.Txn) error { return tx.Set(keys.QueueCount(qid), []byte{0, 0, 9}) }); err != nil {
		t.Fatal(err)
	}
	s.DropCaches()
	wantCount(t, s, "nocount", 4)
}

// A TTL whose expiry would not fit in nanoseconds (2^62 ns from now and beyond) never
// expires; one second less expires when it says.
func TestHugeTTLNeverExpires(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "huge")
	const edge = int64(1<<62) / int64(time.Second)
	m, err := s.PutMessage(ctx, acct, "huge", "x", 0, edge-1)
	if err != nil {
		t.Fatal(err)
	}
	if want := clk.now().Add(time.Duration(edge-1) * time.Second).UTC(); !m.Expires.Equal(want) {
		t.Errorf("ttl %d: expires %v, want %v", edge-1, m.Expires, want)
	}
	m, err = s.PutMessage(ctx, acct, "huge", "x", 0, edge)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Expires.Equal(NeverExpires) {
		t.Errorf("ttl %d: expires %v, want never", edge, m.Expires)
	}
}

// A message is gone at its expiration time exactly: Peek and Get skip it, Delete and Update
// no longer find it.
func TestExpiredAtExpirationTime(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "exact")
	m, err := s.PutMessage(ctx, acct, "exact", "x", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	clk.ns.Store(m.Expires.UnixNano() - 1)
	if got, err := s.PeekMessages(ctx, acct, "exact", 1); err != nil || len(got) != 1 {
		t.Fatalf("peek 1 ns before expiry: %+v %v", got, err)
	}
	clk.ns.Store(m.Expires.UnixNano())
	if got, err := s.PeekMessages(ctx, acct, "exact", 1); err != nil || len(got) != 0 {
		t.Errorf("peek at expiry: %+v %v", got, err)
	}
	wantCode(t, s.DeleteMessage(ctx, acct, "exact", m.ID, m.PopReceipt), azerr.MessageNotFound)
	if got, err := s.GetMessages(ctx, acct, "exact", 1, 30); err != nil || len(got) != 0 {
		t.Errorf("get at expiry: %+v %v", got, err)
	}
}

// Every visibility timeout at its edge is accepted: a Get's 1 second and 7 days, an
// Update's 0 and 7 days; the message is hidden for exactly that long.
func TestVisibilityTimeoutEdgesAccepted(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "vt-edges")
	if _, err := s.PutMessage(ctx, acct, "vt-edges", "x", 0, -1); err != nil {
		t.Fatal(err)
	}
	for _, vt := range []int64{1, MaxVisibilityTimeout} {
		got, err := s.GetMessages(ctx, acct, "vt-edges", 1, vt)
		if err != nil || len(got) != 1 {
			t.Fatalf("get with visibilitytimeout %d: %+v %v", vt, got, err)
		}
		if d := got[0].NextVisible.Sub(clk.now()); d < time.Duration(vt)*time.Second || d > time.Duration(vt)*time.Second+time.Millisecond {
			t.Fatalf("get with visibilitytimeout %d: visible again in %v", vt, d)
		}
		clk.ns.Store(got[0].NextVisible.UnixNano())
	}
	for _, vt := range []int64{MaxVisibilityTimeout, 0} {
		got, err := s.GetMessages(ctx, acct, "vt-edges", 1, 30)
		if err != nil || len(got) != 1 {
			t.Fatalf("get: %+v %v", got, err)
		}
		up, err := s.UpdateMessage(ctx, acct, "vt-edges", got[0].ID, got[0].PopReceipt, nil, vt)
		if err != nil {
			t.Fatalf("update with visibilitytimeout %d: %v", vt, err)
		}
		if d := up.NextVisible.Sub(clk.now()); d < time.Duration(vt)*time.Second || d > time.Duration(vt)*time.Second+time.Millisecond {
			t.Fatalf("update with visibilitytimeout %d: visible again in %v", vt, d)
		}
		clk.ns.Store(up.NextVisible.UnixNano())
	}
}
