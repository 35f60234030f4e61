package queue

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// reapSlack is how far behind "now" the next pass starts again: a put reads the clock
// before it commits, so an entry may land slightly below a finished pass's end.
const reapSlack = 5 * time.Second

func (s *Service) reapLoop(every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if _, err := s.Reap(context.Background()); err != nil && !errors.Is(err, store.ErrClosed) {
				s.log.Warn("queue: reaping expired messages", "err", err)
			}
		}
	}
}

// Reap deletes messages whose expiry has passed, in expiry order from the expiry index (it
// never scans queues), and returns how many entries it removed.
func (s *Service) Reap(ctx context.Context) (int, error) {
	now := s.clock()
	from := s.reapFrom.Load()
	total := 0
	for {
		type entry struct {
			at       int64
			qid, seq uint64
		}
		var batch []entry
		err := s.st.Scan(ctx, keys.QueueExpiry(from, 0, 0), keys.QueueExpiry(now+1, 0, 0), func(k, _ []byte) (bool, error) {
			at, qid, seq, err := keys.DecodeQueueExpiry(k)
			if err != nil {
				return false, err
			}
			batch = append(batch, entry{at, qid, seq})
			return len(batch) < deleteBatch, nil
		})
		if err != nil {
			return total, err
		}
		if len(batch) == 0 {
			break
		}
		// One Update per queue in the batch, under the queue's lock.
		for i := 0; i < len(batch); {
			j := i
			for j < len(batch) && batch[j].qid == batch[i].qid {
				j++
			}
			group := batch[i:j]
			qid := group[0].qid
			if err := s.upgradeQueue(ctx, qid); err != nil {
				return total, err
			}
			err := s.st.Update(ctx, []store.Lock{queueLock(qid)}, func(tx store.Txn) error {
				s.state(qid).dropHead() // it may hold the messages deleted here
				var deleted int64
				for _, e := range group {
					// The entry's value is the message's deadline, read under the lock: a
					// get may have moved the message since the scan.
					xk := keys.QueueExpiry(e.at, e.qid, e.seq)
					xv, err := tx.Get(xk)
					if errors.Is(err, store.ErrNotFound) {
						continue
					}
					if err != nil {
						return err
					}
					if len(xv) == 8 {
						at := int64(binary.BigEndian.Uint64(xv))
						v, err := tx.Get(keys.QueueVisible(e.qid, at, e.seq))
						if err == nil {
							m, derr := decodeMessage(e.seq, v)
							if derr == nil && m.expires == e.at {
								m.visibleAt = at
								if err := deleteMessage(tx, e.qid, m); err != nil {
									return err
								}
								deleted++
								continue
							}
						} else if !errors.Is(err, store.ErrNotFound) {
							return err
						}
					}
					// The message is gone (deleted, or its queue dropped): drop the entry.
					if err := tx.Delete(xk); err != nil {
						return err
					}
				}
				return s.addCount(ctx, tx, qid, -deleted)
			})
			if err != nil {
				s.forgetCount(qid)
				return total, err
			}
			total += len(group)
			i = j
		}
		from = batch[len(batch)-1].at
	}
	raise(&s.reapFrom, now-int64(reapSlack))
	return total, nil
}
