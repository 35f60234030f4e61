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
// lock. After it has looked once, the queue is remembered as current until DropCaches.
func (s *Service) upgradeQueue(ctx context.Context, qid uint64) error {
	if _, ok := s.upgraded.Load(qid); ok {
		return nil
	}
	prefix := keys.QueueMessagePrefix(qid)
	for {
		moved := 0
		err := s.st.Update(ctx, []store.Lock{queueLock(qid)}, func(tx store.Txn) error {
			moved = 0
			var ms []*message
			err := s.st.Scan(ctx, prefix, keys.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
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
			moved = len(ms)
			return nil
		})
		if err != nil {
			return fmt.Errorf("queue: upgrade the layout of queue %d: %w", qid, err)
		}
		if moved < upgradeBatch {
			s.upgraded.Store(qid, struct{}{})
			return nil
		}
	}
}
