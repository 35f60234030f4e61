package queue

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// A queue's message count is a key written in the same transaction as every put and delete,
// so Get Queue Metadata reads one key instead of counting a queue of any depth. Every
// writer of a queue's messages holds the queue's lock, so the count is read-modify-written
// without races; qstate caches it (guarded by that lock) so writers do not read the key.
// On a shared store that lock orders this process's writers only, so the cache is off and
// every writer reads the key in its serializable transaction.

// countUnknown marks a cached count that must be read from the store first.
const countUnknown = -1

// addCount adds delta to queue qid's count inside tx (the caller holds the queue's lock).
// It must be the last thing fn does before returning nil: the cache then only runs ahead of
// the store if the commit itself fails, and withQueue forgets it then.
func (s *Service) addCount(ctx context.Context, tx store.Txn, qid uint64, delta int64) error {
	if delta == 0 {
		return nil
	}
	st := s.state(qid)
	c := st.count.Load()
	if c == countUnknown || s.shared {
		// On a shared store other processes change the count: it is read inside the
		// transaction every time (a serializable read-modify-write).
		var err error
		scan := func(ctx context.Context, start, end []byte, fn func(k, v []byte) (bool, error)) error {
			return txnScan(ctx, tx, start, end, fn)
		}
		if c, err = s.readCount(ctx, tx.Get, scan, qid); err != nil {
			return err
		}
	}
	c = max(c+delta, 0)
	if err := tx.Set(keys.QueueCount(qid), binary.BigEndian.AppendUint64(nil, uint64(c))); err != nil {
		return err
	}
	st.count.Store(c)
	return nil
}

// readCount reads queue qid's committed count through get. A queue written before counts
// were kept has no count key: its messages are counted once through scan (the next write
// stores it); inside an Update both read through the Txn.
func (s *Service) readCount(ctx context.Context, get func([]byte) ([]byte, error),
	scan func(ctx context.Context, start, end []byte, fn func(k, v []byte) (bool, error)) error, qid uint64) (int64, error) {
	v, err := get(keys.QueueCount(qid))
	if err == nil && len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v)), nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	var n int64
	prefix := keys.QueueVisiblePrefix(qid)
	err = scan(ctx, prefix, keys.PrefixEnd(prefix), func(_, _ []byte) (bool, error) {
		n++
		return true, nil
	})
	return n, err
}

// setCount stores a known count (a new or cleared queue).
func (s *Service) setCount(tx store.Txn, qid uint64, c int64) error {
	if err := tx.Set(keys.QueueCount(qid), binary.BigEndian.AppendUint64(nil, uint64(c))); err != nil {
		return err
	}
	s.state(qid).count.Store(c)
	return nil
}

// forgetCount drops the cached count after a failed Update (its writes, the count's among
// them, may not have been committed).
func (s *Service) forgetCount(qid uint64) { s.state(qid).count.Store(countUnknown) }
