package table

import (
	"context"

	"github.com/tablo/tablo/internal/colcache"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Stats are the Service's counters for monitoring.
type Stats struct {
	// ColumnCacheHits and ColumnCacheMisses count filtered-scan pages served from the
	// column cache, or from the store because the cache did not hold the filter's columns.
	ColumnCacheHits, ColumnCacheMisses uint64
	// ColumnCacheBytes and ColumnCacheTables are the cache's current size.
	ColumnCacheBytes  int64
	ColumnCacheTables int
}

// Stats returns the current counters.
func (s *Service) Stats() Stats {
	st := Stats{ColumnCacheHits: s.colHits.Load(), ColumnCacheMisses: s.colMisses.Load()}
	if s.cols != nil {
		cs := s.cols.Stats()
		st.ColumnCacheBytes, st.ColumnCacheTables = cs.Bytes, cs.Tables
	}
	return st
}

func (s *Service) countColumnPage(served bool) {
	if served {
		s.colHits.Add(1)
	} else {
		s.colMisses.Add(1)
	}
}

// DropCaches forgets everything the Service caches about the store's contents (the table
// catalog and the column cache, whose builds in progress hold store snapshots), for when
// the store's contents are replaced underneath it (a snapshot restore or a reset). The
// caller must keep every other call out meanwhile.
func (s *Service) DropCaches() {
	s.catalogMu.Lock()
	s.catalog = map[string]Table{}
	s.dead = map[uint64]struct{}{}
	clear(s.hints)
	s.catalogMu.Unlock()
	if s.cols != nil {
		s.cols.Close()
		s.cols = colcache.New(s.colOpts, s.freezeTable)
	}
}

// DeleteAccount deletes every table of account with its entities and metadata, and the
// account's service data (service properties), in one write. The caller must keep every
// other call out meanwhile and drop the caches afterwards (DropCaches).
func (s *Service) DeleteAccount(ctx context.Context, account string) error {
	var ids []uint64
	prefix := keys.TableCatalogPrefix(account)
	err := s.st.Scan(ctx, prefix, keys.PrefixEnd(prefix), func(_, v []byte) (bool, error) {
		t, err := decodeTable(v)
		if err != nil {
			return false, err
		}
		ids = append(ids, t.ID)
		return true, nil
	})
	if err != nil {
		return err
	}
	return s.st.Update(ctx, []store.Lock{{Name: catalogLock}}, func(tx store.Txn) error {
		for _, id := range ids {
			if err := tx.DeleteRange(keys.TablePrefix(id), keys.TableEnd(id)); err != nil {
				return err
			}
			if err := tx.DeleteRange(keys.TableMetaPrefix(id), keys.PrefixEnd(keys.TableMetaPrefix(id))); err != nil {
				return err
			}
		}
		if err := tx.DeleteRange(prefix, keys.PrefixEnd(prefix)); err != nil {
			return err
		}
		ap := keys.Account(account, "")
		return tx.DeleteRange(ap, keys.PrefixEnd(ap))
	})
}
