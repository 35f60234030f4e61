package queue

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// nextIDLock serializes queue id allocation.
var nextIDLock = store.Lock{Name: "q/next-id"}

// CreateQueue creates a queue with metadata md. created is false when the queue already
// exists with the same metadata (Azure's 204); other metadata is 409 QueueAlreadyExists.
func (s *Service) CreateQueue(ctx context.Context, account, name string, md []Meta) (created bool, err error) {
	if err := ValidateName(name); err != nil {
		return false, err
	}
	if err := ValidateMetadata(md); err != nil {
		return false, err
	}
	err = s.st.Update(ctx, []store.Lock{nameLock(account, name), nextIDLock}, func(tx store.Txn) error {
		cur, err := lookup(tx.Get, account, name)
		if err != nil {
			return err
		}
		if cur != nil {
			if sameMetadata(cur.md, md) {
				return nil
			}
			return azerr.New(azerr.QueueAlreadyExists)
		}
		var id uint64 = 1
		if v, err := tx.Get(keys.QueueNextID()); err == nil && len(v) == 8 {
			id = binary.BigEndian.Uint64(v)
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := tx.Set(keys.QueueNextID(), binary.BigEndian.AppendUint64(nil, id+1)); err != nil {
			return err
		}
		created = true
		r := &queueRecord{id: id, name: name, md: md}
		if err := s.setCount(tx, id, 0); err != nil {
			return err
		}
		return tx.Set(keys.QueueCatalog(account, name), r.encode())
	})
	return created, err
}

// DeleteQueue deletes a queue and all its messages (one range delete).
func (s *Service) DeleteQueue(ctx context.Context, account, name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		q, err := lookup(func(k []byte) ([]byte, error) { return s.st.Get(ctx, k) }, account, name)
		if err != nil {
			return err
		}
		if q == nil {
			return errQueueNotFound
		}
		moved := false
		err = s.st.Update(ctx, []store.Lock{nameLock(account, name), queueLock(q.id)}, func(tx store.Txn) error {
			cur, err := lookup(tx.Get, account, name)
			if err != nil {
				return err
			}
			if cur == nil || cur.id != q.id {
				moved = true
				return errQueueNotFound
			}
			if err := tx.DeleteRange(keys.QueueData(q.id), keys.PrefixEnd(keys.QueueData(q.id))); err != nil {
				return err
			}
			if err := tx.Delete(keys.QueueCatalog(account, name)); err != nil {
				return err
			}
			// Under the queue's lock: operations waiting for it see the queue gone.
			if v, ok := s.catalog.Load(account + "\x00" + name); ok && v.(*qentry).id == q.id {
				v.(*qentry).dead.Store(true)
			}
			return nil
		})
		if err == nil {
			s.states.Delete(q.id)
		}
		if !moved || attempt == 2 {
			return err
		}
	}
}

// Properties are what Get Queue Metadata returns.
type Properties struct {
	Metadata []Meta
	// ApproximateCount counts the queue's messages, visible or not (expired ones the reaper
	// has not deleted yet included, as on Azure).
	ApproximateCount int
}

// GetProperties returns a queue's metadata and message count.
func (s *Service) GetProperties(ctx context.Context, account, name string) (Properties, error) {
	if err := ValidateName(name); err != nil {
		return Properties{}, err
	}
	q, err := lookup(func(k []byte) ([]byte, error) { return s.st.Get(ctx, k) }, account, name)
	if err != nil {
		return Properties{}, err
	}
	if q == nil {
		return Properties{}, errQueueNotFound
	}
	n, err := s.readCount(ctx, func(k []byte) ([]byte, error) { return s.st.Get(ctx, k) }, s.st.Scan, q.id)
	return Properties{Metadata: q.md, ApproximateCount: int(n)}, err
}

// SetMetadata replaces a queue's metadata.
func (s *Service) SetMetadata(ctx context.Context, account, name string, md []Meta) error {
	if err := ValidateMetadata(md); err != nil {
		return err
	}
	return s.updateRecord(ctx, account, name, func(r *queueRecord) { r.md = md })
}

// ACL returns the queue's stored access policies as rendered XML (nil: none).
func (s *Service) ACL(ctx context.Context, account, name string) ([]byte, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	q, err := lookup(func(k []byte) ([]byte, error) { return s.st.Get(ctx, k) }, account, name)
	if err != nil {
		return nil, err
	}
	if q == nil {
		return nil, errQueueNotFound
	}
	return q.acl, nil
}

// SetACL replaces the queue's stored access policies (doc nil: none).
func (s *Service) SetACL(ctx context.Context, account, name string, doc []byte) error {
	return s.updateRecord(ctx, account, name, func(r *queueRecord) { r.acl = doc })
}

func (s *Service) updateRecord(ctx context.Context, account, name string, change func(*queueRecord)) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	return s.st.Update(ctx, []store.Lock{nameLock(account, name)}, func(tx store.Txn) error {
		q, err := lookup(tx.Get, account, name)
		if err != nil {
			return err
		}
		if q == nil {
			return errQueueNotFound
		}
		change(q)
		return tx.Set(keys.QueueCatalog(account, name), q.encode())
	})
}

// QueueItem is one queue of a listing.
type QueueItem struct {
	Name     string
	Metadata []Meta
}

// ListQueues returns up to max queues whose names start with prefix, from marker on, in
// name order, and the marker of the next page ("" on the last page). Markers have Azure's
// form "/{account}/{next queue name}".
func (s *Service) ListQueues(ctx context.Context, account, prefix, marker string, max int) ([]QueueItem, string, error) {
	if max <= 0 || max > MaxListResults {
		max = MaxListResults
	}
	from := prefix
	if marker != "" {
		m, ok := strings.CutPrefix(marker, "/"+account+"/")
		if !ok {
			return nil, "", azerr.New(azerr.InvalidMarker)
		}
		if m > from {
			from = m
		}
	}
	base := keys.QueueCatalogPrefix(account)
	start := keys.QueueCatalog(account, from)
	var out []QueueItem
	next := ""
	err := s.st.Scan(ctx, start, keys.PrefixEnd(base), func(k, v []byte) (bool, error) {
		name := string(k[len(base):])
		if !strings.HasPrefix(name, prefix) {
			return false, nil
		}
		if len(out) == max {
			next = "/" + account + "/" + name
			return false, nil
		}
		r, err := decodeQueueRecord(v)
		if err != nil {
			return false, err
		}
		out = append(out, QueueItem{Name: name, Metadata: r.md})
		return true, nil
	})
	return out, next, err
}

// AccountSetting returns a per-account Queue service document (nil when never set).
func (s *Service) AccountSetting(ctx context.Context, account, name string) ([]byte, error) {
	v, err := s.st.Get(ctx, keys.QueueSetting(account, name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// UpdateAccountSetting replaces a per-account document with fn(old), atomically.
func (s *Service) UpdateAccountSetting(ctx context.Context, account, name string, fn func(old []byte) ([]byte, error)) error {
	return s.st.Update(ctx, []store.Lock{{Name: "qs/" + account + "/" + name}}, func(tx store.Txn) error {
		old, err := tx.Get(keys.QueueSetting(account, name))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		next, err := fn(old)
		if err != nil {
			return err
		}
		return tx.Set(keys.QueueSetting(account, name), next)
	})
}

// DeleteAccount deletes every queue of account with its messages, and the account's Queue
// service settings, in one write. Expiry-index entries of the deleted messages stay for the
// reaper, which skips entries whose message is gone (as after Delete Queue). The caller must
// keep every other call out meanwhile and drop the caches afterwards (DropCaches).
func (s *Service) DeleteAccount(ctx context.Context, account string) error {
	var ids []uint64
	cat := keys.QueueCatalogPrefix(account)
	err := s.st.Scan(ctx, cat, keys.PrefixEnd(cat), func(_, v []byte) (bool, error) {
		q, err := decodeQueueRecord(v)
		if err != nil {
			return false, err
		}
		ids = append(ids, q.id)
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("list queues of %s: %w", account, err)
	}
	locks := make([]store.Lock, 0, len(ids))
	for _, id := range ids {
		locks = append(locks, queueLock(id))
	}
	return s.st.Update(ctx, locks, func(tx store.Txn) error {
		for _, id := range ids {
			if err := tx.DeleteRange(keys.QueueData(id), keys.PrefixEnd(keys.QueueData(id))); err != nil {
				return err
			}
		}
		if err := tx.DeleteRange(cat, keys.PrefixEnd(cat)); err != nil {
			return err
		}
		set := keys.QueueSetting(account, "")
		return tx.DeleteRange(set, keys.PrefixEnd(set))
	})
}
