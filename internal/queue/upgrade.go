package queue

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Earlier versions kept each message under its own key ('Q' 'd' queueID 'm' seq) beside an
// empty visibility-index entry, so that every message a Get or Peek returned cost a second
// read. A message now is its index entry's value. upgradeQueue moves a queue's messages of
// the earlier layout to the current one; it runs the first time this process meets the
// queue (catalog lookups, the reaper), so data written by an earlier version keeps working.
// Pop receipts issued by an earlier version no longer match (see parseReceipt).

// upgradeBatch is how many messages one upgrade transaction moves.
const upgradeBatch = 1000

// upgradeQueue moves queue qid's messages of the earlier layout, if any, under the queue's
// lock. Once it has found none, the queue is remembered as current until DropCaches.
func (s *Service) upgradeQueue(ctx context.Context, qid uint64) error {
	if _, ok := s.upgraded.Load(qid); ok {
		return nil
	}
	prefix := keys.QueueMessagePrefix(qid)
	for {
		// Look first, outside any transaction: a queue of the current layout (nearly every
		// one) costs one seek and no Update.
		found := false
		if err := s.st.Scan(ctx, prefix, keys.PrefixEnd(prefix), func(_, _ []byte) (bool, error) {
			found = true
			return false, nil
		}); err != nil {
			return fmt.Errorf("queue: look for the earlier layout in queue %d: %w", qid, err)
		}
		if !found {
			s.upgraded.Store(qid, struct{}{})
			return nil
		}
		// Move a batch under the queue's lock, then look again.
		err := s.st.Update(ctx, []store.Lock{queueLock(qid)}, func(tx store.Txn) error {
			s.state(qid).dropHead() // the index gains entries anywhere
			var ms []*message
			// Read through the Txn's snapshot, not the store: a store that lends pooled
			// connections would be asked for a second one while the Update holds one.
			err := txnScan(ctx, tx, prefix, keys.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
				if len(k) != len(prefix)+8 {
					return false, errCorrupt
				}
				m, err := decodeMessage(0, v)
				if err != nil {
					return false, err
				}
				m.seq = binary.BigEndian.Uint64(k[len(prefix):])
				ms = append(ms, m)
				return len(ms) < upgradeBatch, nil
			})
			if err != nil {
				return err
			}
			for _, m := range ms {
				if err := tx.Delete(keys.QueueMessage(qid, m.seq)); err != nil {
					return err
				}
				// The empty index entry is replaced by the message; the expiry entry gets
				// the message's deadline as its value.
				if err := writeMessage(tx, qid, m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("queue: upgrade the layout of queue %d: %w", qid, err)
		}
	}
}

// txnScan scans [start, end) of the data committed before tx's snapshot (none of tx's own
// writes) inside an Update: unlike the store's Scan, it takes nothing the Update does not
// hold already (on a pooled engine, no second connection).
func txnScan(ctx context.Context, tx store.Txn, start, end []byte, fn func(k, v []byte) (bool, error)) error {
	snap, err := tx.Snapshot()
	if err != nil {
		return err
	}
	defer snap.Close()
	return snap.Scan(ctx, start, end, fn)
}
