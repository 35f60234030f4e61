package queue

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// countKeys counts the keys under prefix.
func countKeys(t *testing.T, s *Service, prefix []byte) int {
	t.Helper()
	n := 0
	if err := s.st.Scan(ctx, prefix, keys.PrefixEnd(prefix), func(_, _ []byte) (bool, error) {
		n++
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// writeEarlierLayout writes messages of queue qid in the earlier layout (a key per message,
// empty index and expiry entries), then runs also in the same transaction.
func writeEarlierLayout(t *testing.T, s *Service, qid uint64, ms []*message, also func(store.Txn) error) {
	t.Helper()
	if err := s.st.Update(ctx, nil, func(tx store.Txn) error {
		for _, m := range ms {
			if err := tx.Set(keys.QueueMessage(qid, m.seq), m.encode()); err != nil {
				return err
			}
			if err := tx.Set(keys.QueueVisible(qid, m.visibleAt, m.seq), nil); err != nil {
				return err
			}
			if m.expires != neverExpires {
				if err := tx.Set(keys.QueueExpiry(m.expires, qid, m.seq), nil); err != nil {
					return err
				}
			}
		}
		return also(tx)
	}); err != nil {
		t.Fatal(err)
	}
}

// Messages written in the earlier layout (a key per message, empty index entries, empty
// expiry entries) are moved to the current one when the queue is first met, and then
// behave as any: peek, get in order, expiry by the reaper, count.
func TestEarlierLayoutUpgraded(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "old")
	e, _ := s.resolve(ctx, acct, "old")
	now := s.clock()
	old := []*message{
		{seq: 10, inserted: now, expires: now + int64(time.Hour), visibleAt: now, receipt: 1, text: "first"},
		{seq: 11, inserted: now, expires: now + int64(time.Second), visibleAt: now, receipt: 2, text: "expiring"},
		{seq: 12, inserted: now, expires: neverExpires, visibleAt: now, receipt: 3, text: "forever"},
		{seq: 13, inserted: now, expires: now + int64(time.Hour), visibleAt: now + int64(time.Minute), receipt: 4, text: "hidden"},
	}
	writeEarlierLayout(t, s, e.id, old, func(tx store.Txn) error { return s.setCount(tx, e.id, int64(len(old))) })
	s.DropCaches() // as a process that starts on this data

	peek, err := s.PeekMessages(ctx, acct, "old", 32)
	if err != nil || len(peek) != 3 || peek[0].Text != "first" || peek[1].Text != "expiring" || peek[2].Text != "forever" {
		t.Fatalf("peek: %+v %v", peek, err)
	}
	if n := countKeys(t, s, keys.QueueMessagePrefix(e.id)); n != 0 {
		t.Fatalf("%d message keys of the earlier layout remain", n)
	}
	// A receipt the earlier version issued (8 bytes, no deadline) names no message.
	oldReceipt := receiptLead + base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, old[0].receipt))
	wantCode(t, s.DeleteMessage(ctx, acct, "old", messageID(e.id, old[0].seq), oldReceipt), azerr.MessageNotFound)
	got, err := s.GetMessages(ctx, acct, "old", 1, 30)
	if err != nil || len(got) != 1 || got[0].Text != "first" {
		t.Fatalf("get: %+v %v", got, err)
	}
	wantCode(t, s.DeleteMessage(ctx, acct, "old", got[0].ID, got[0].PopReceipt), "")
	clk.advance(2 * time.Second)
	if n, err := s.Reap(ctx); err != nil || n != 1 {
		t.Fatalf("reaped %d %v", n, err)
	}
	wantCount(t, s, "old", 2)
	clk.advance(time.Minute)
	got, err = s.GetMessages(ctx, acct, "old", 32, 30)
	if err != nil || len(got) != 2 || got[0].Text != "forever" || got[1].Text != "hidden" {
		t.Fatalf("get after the minute: %+v %v", got, err)
	}
}

// A message that expires after a get moved it (while invisible) is deleted by the reaper,
// index entry and all: the expiry entry follows the message to its new place.
func TestExpiryFollowsMovedMessage(t *testing.T) {
	s, clk := newService(t, true)
	mustCreate(t, s, "moved")
	e, _ := s.resolve(ctx, acct, "moved")
	if _, err := s.PutMessage(ctx, acct, "moved", "m", 0, 10); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMessages(ctx, acct, "moved", 1, 5)
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	if _, err := s.UpdateMessage(ctx, acct, "moved", got[0].ID, got[0].PopReceipt, nil, 3600); err != nil {
		t.Fatal(err)
	}
	clk.advance(11 * time.Second)
	if _, err := s.Reap(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countKeys(t, s, keys.QueueVisiblePrefix(e.id)); n != 0 {
		t.Fatalf("%d index entries left after the message expired", n)
	}
	if n := countKeys(t, s, keys.QueueExpiryPrefix()); n != 0 {
		t.Fatalf("%d expiry entries left", n)
	}
	wantCount(t, s, "moved", 0)
}

// A queue of more messages than one upgrade transaction moves is moved whole.
func TestEarlierLayoutUpgradedInBatches(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	c := &updateCounter{Store: db}
	s, _ := newServiceOn(t, c)
	mustCreate(t, s, "big")
	e, _ := s.resolve(ctx, acct, "big")
	now := s.clock()
	const n = 2*upgradeBatch + 1 // one message more than two full transactions
	if err := s.st.Update(ctx, nil, func(tx store.Txn) error {
		for i := range uint64(n) {
			m := &message{seq: 100 + i, inserted: now, expires: neverExpires, visibleAt: now, text: "m"}
			if err := tx.Set(keys.QueueMessage(e.id, m.seq), m.encode()); err != nil {
				return err
			}
			if err := tx.Set(keys.QueueVisible(e.id, m.visibleAt, m.seq), nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.DropCaches()
	c.updates.Store(0)
	if _, err := s.PeekMessages(ctx, acct, "big", 1); err != nil {
		t.Fatal(err)
	}
	// One transaction per upgradeBatch messages.
	if got := c.updates.Load(); got != (n+upgradeBatch-1)/upgradeBatch {
		t.Fatalf("moved in %d transactions, want %d", got, (n+upgradeBatch-1)/upgradeBatch)
	}
	if got := countKeys(t, s, keys.QueueMessagePrefix(e.id)); got != 0 {
		t.Fatalf("%d message keys of the earlier layout remain", got)
	}
	if got := countKeys(t, s, keys.QueueVisiblePrefix(e.id)); got != n {
		t.Fatalf("%d messages after the upgrade, want %d", got, n)
	}
}

// updateCounter is a real store that counts its transactions.
type updateCounter struct {
	store.Store
	updates atomic.Int64
}

func (c *updateCounter) Update(ctx context.Context, locks []store.Lock, fn func(store.Txn) error) error {
	c.updates.Add(1)
	return c.Store.Update(ctx, locks, fn)
}
