// Package table holds the Table service's rules without HTTP: tables and their catalog, entity
// operations with ETag/If-Match semantics, entity group transactions and paged queries, all
// on top of a store.Store with the key layout of package keys.
//
// Invariants:
//   - Every entity write (single or batch) runs in one store.Update holding the table's lock
//     shared and the partition's lock exclusively, so the ETag check and the write are one
//     atomic step and Delete Table (which holds the table lock exclusively) never races a write.
//   - Every write gives the entity a Timestamp strictly greater than its previous one, so
//     ETags always change.
//   - A single write is a batch of one: both go through applyOp.
package table

import (
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablo/tablo/internal/colcache"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/store"
)

// Options configure a Service.
type Options struct {
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
	// Logger (default: discard).
	Logger *slog.Logger
	// QueryBudget bounds the work of one query page (default 5 s, Azure's limit).
	QueryBudget time.Duration
	// ColumnCacheBytes is the memory budget of the column cache that serves filtered scans
	// (0 disables it). ColumnCacheBuildAfter is how many entities uncached filtered scans of
	// a table examine before its columns are built (default 20,000).
	ColumnCacheBytes      int64
	ColumnCacheBuildAfter int64
}

// Service implements the Table service over a store.
type Service struct {
	st     store.Store
	now    func() time.Time
	log    *slog.Logger
	budget time.Duration
	// lastTicks makes Timestamps strictly increasing within this process.
	lastTicks atomic.Int64
	// catalog caches table lookups; dead holds the ids of tables deleted by this process.
	// Table ids are never reused, and Delete Table marks its id dead while it holds the
	// table's lock exclusively, so a writer that checks under the shared lock never trusts a
	// stale entry. Every catalog change goes through this Service.
	catalogMu sync.RWMutex
	catalog   map[string]Table
	dead      map[uint64]struct{}
	// hints, on a shared store only, remember name → table id as a guess that every use
	// checks against the catalog record read with it (one statement, or the write's own
	// transaction), never as an answer: see tableHint.
	hints map[string]Table
	// cols is the column cache of filtered scans (nil when disabled). Entity writes note
	// their keys in it inside their transaction (see Batch); it is process-local, like the
	// catalog cache.
	cols *colcache.Cache
	// shared is set when other processes share the store (store.Traits): the catalog
	// cache is then off, every write re-reads its table's catalog record inside its
	// serializable transaction, and the column cache is off (docs/postgres.md).
	shared bool
	// drops purges the entities of deleted tables in the background (drop.go).
	drops *dropper
}

// New returns a Service over st. The caller keeps ownership of st.
func New(st store.Store, o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.QueryBudget <= 0 {
		o.QueryBudget = 5 * time.Second
	}
	s := &Service{st: st, now: o.Now, log: o.Logger, budget: o.QueryBudget, catalog: map[string]Table{}, dead: map[uint64]struct{}{}, hints: map[string]Table{}}
	traits := store.TraitsOf(st)
	s.shared = traits.Shared
	s.drops = startDropper(s, traits.RangeDeleteChunk)
	if s.shared && o.ColumnCacheBytes > 0 {
		// Its exactness rests on every write of the table passing through this process.
		o.Logger.Info("column cache off: the store is shared with other processes")
		o.ColumnCacheBytes = 0
	}
	if o.ColumnCacheBytes > 0 {
		s.cols = colcache.New(colcache.Options{MaxBytes: o.ColumnCacheBytes, BuildAfter: o.ColumnCacheBuildAfter, Logger: o.Logger}, s.freezeTable)
	}
	return s
}

// Close stops the Service's background work (column cache builds) and frees its caches.
// Call it before closing the store.
func (s *Service) Close() {
	if s.cols != nil {
		s.cols.Close()
	}
	s.drops.close()
}

// Shared reports whether other processes share the store, so that callers keep no
// unvalidated cache of what it holds.
func (s *Service) Shared() bool { return s != nil && s.shared }

// nextTicks returns a DateTime tick value greater than any returned before.
func (s *Service) nextTicks() int64 {
	now := entity.Ticks(s.now())
	for {
		last := s.lastTicks.Load()
		next := max(now, last+1)
		if s.lastTicks.CompareAndSwap(last, next) {
			return next
		}
	}
}

func catalogKey(account, name string) string { return account + "\x00" + strings.ToLower(name) }

func (s *Service) cachedTable(account, name string) (Table, bool) {
	if s.shared {
		return Table{}, false
	}
	s.catalogMu.RLock()
	defer s.catalogMu.RUnlock()
	t, ok := s.catalog[catalogKey(account, name)]
	if _, dead := s.dead[t.ID]; !ok || dead {
		return Table{}, false
	}
	return t, true
}

func (s *Service) cacheTable(account string, t Table) {
	if s.shared {
		return
	}
	s.catalogMu.Lock()
	defer s.catalogMu.Unlock()
	if _, dead := s.dead[t.ID]; !dead {
		s.catalog[catalogKey(account, t.Name)] = t
	}
}

// markDead records that table t is being deleted; undo reverses it if the delete failed.
func (s *Service) markDead(account string, t Table) (undo func()) {
	s.catalogMu.Lock()
	defer s.catalogMu.Unlock()
	s.dead[t.ID] = struct{}{}
	delete(s.catalog, catalogKey(account, t.Name))
	return func() {
		s.catalogMu.Lock()
		delete(s.dead, t.ID)
		s.catalogMu.Unlock()
	}
}

// tableHint returns the id this process last saw for a table on a shared store. It may be
// stale (the table deleted or re-created by another process): callers validate it.
func (s *Service) tableHint(account, name string) (Table, bool) {
	s.catalogMu.RLock()
	defer s.catalogMu.RUnlock()
	t, ok := s.hints[catalogKey(account, name)]
	return t, ok
}

// setHint records (ok) or forgets (!ok) a table's id guess.
func (s *Service) setHint(account, name string, t Table, ok bool) {
	s.catalogMu.Lock()
	defer s.catalogMu.Unlock()
	if !ok {
		delete(s.hints, catalogKey(account, name))
		return
	}
	if len(s.hints) > 100_000 {
		clear(s.hints) // a guess cache: bounded, forgetting costs one read
	}
	s.hints[catalogKey(account, name)] = t
}
