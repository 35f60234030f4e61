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
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablo/tablo/internal/colcache"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
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
	// RecentValueBytes bounds the memory of the entity values remembered as guesses for
	// conditional writes on a shared engine (recentValues; default DefaultRecentValueBytes,
	// negative: none).
	RecentValueBytes int
}

// DefaultRecentValueBytes is the default of Options.RecentValueBytes.
const DefaultRecentValueBytes = 16 << 20

// Service implements the Table service over a store.
type Service struct {
	st     store.Store
	now    func() time.Time
	log    *slog.Logger
	budget time.Duration
	// lastTicks makes Timestamps strictly increasing within this process.
	lastTicks atomic.Int64
	// floor is a tick value stored in the engine (keys.Meta(clockFloorKey)) that is above
	// every Timestamp handed out, so that after a restart Timestamps continue above those
	// of the previous run even when the clock went back (a deleted and re-inserted entity
	// must not get an ETag it had before). 0 until loaded; floorMu serialises raising it.
	floorMu sync.Mutex
	floor   atomic.Int64
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
	// inserter, on a shared engine that offers it, writes a single Insert in one round trip
	// (insertFast).
	inserter store.GuardedInserter
	// writer, on a shared engine that offers it, writes other single-entity operations as
	// one read and one conditional write (writeFast).
	writer store.GuardedWriter
	// recent remembers entity values as guesses for writeFast's conditional writes (nil
	// without writer).
	recent *recentValues
	// drops purges the entities of deleted tables in the background (drop.go).
	drops *dropper
	// colOpts rebuilds cols when DropCaches empties it.
	colOpts colcache.Options
	// colHits and colMisses count filtered-scan pages the column cache served or not.
	colHits, colMisses atomic.Uint64
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
	if gi, ok := st.(store.GuardedInserter); ok && s.shared {
		s.inserter = gi
	}
	if gw, ok := st.(store.GuardedWriter); ok && s.shared {
		s.writer = gw
		if o.RecentValueBytes == 0 {
			o.RecentValueBytes = DefaultRecentValueBytes
		}
		if o.RecentValueBytes > 0 {
			s.recent = newRecentValues(o.RecentValueBytes)
		}
	}
	s.drops = startDropper(s, traits.RangeDeleteChunk)
	if s.shared && o.ColumnCacheBytes > 0 {
		// Its exactness rests on every write of the table passing through this process.
		o.Logger.Info("column cache off: the store is shared with other processes")
		o.ColumnCacheBytes = 0
	}
	if o.ColumnCacheBytes > 0 {
		s.colOpts = colcache.Options{MaxBytes: o.ColumnCacheBytes, BuildAfter: o.ColumnCacheBuildAfter, Logger: o.Logger}
		s.cols = colcache.New(s.colOpts, s.freezeTable)
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

// nextTicks returns a DateTime tick value greater than any returned before, by this process
// or (through the stored floor) an earlier one. ok is false when the value would pass the
// stored floor: the caller must call reserveTicks outside its transaction and try again.
func (s *Service) nextTicks() (ticks int64, ok bool) {
	now := entity.Ticks(s.now())
	for {
		last := s.lastTicks.Load()
		next := max(now, last+1)
		if next > s.floor.Load() {
			return 0, false
		}
		if s.lastTicks.CompareAndSwap(last, next) {
			return next, true
		}
	}
}

const (
	clockFloorKey = "clock-floor"
	// floorReserve is how far ahead of the clock the stored floor is raised: it is written
	// about once per floorReserve/2 under steady writes, and after a restart Timestamps may
	// run up to floorReserve ahead of the clock until it catches up.
	floorReserve = int64(2 * time.Second / 100) // DateTime ticks are 100 ns
)

// errPastFloor makes Batch reserve further ahead and retry (the write waited for its locks
// longer than the reserve lasted).
var errPastFloor = errors.New("table: timestamp past the stored floor")

// reserveTicks makes sure the stored floor is at least ahead/2 past the next Timestamp,
// raising it to ahead past it when not. It is called outside any transaction (it may run
// its own Update); the first call loads the floor of the previous run.
func (s *Service) reserveTicks(ctx context.Context, ahead int64) error {
	want := func() int64 { return max(entity.Ticks(s.now()), s.lastTicks.Load()+1) + ahead/2 }
	if want() <= s.floor.Load() {
		return nil
	}
	s.floorMu.Lock()
	defer s.floorMu.Unlock()
	if s.floor.Load() == 0 {
		v, err := s.st.Get(ctx, keys.Meta(clockFloorKey))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("table: load clock floor: %w", err)
		}
		if len(v) == 8 {
			// Every Timestamp of the previous run is at most the floor it stored.
			stored := int64(binary.BigEndian.Uint64(v))
			for {
				last := s.lastTicks.Load()
				if last >= stored || s.lastTicks.CompareAndSwap(last, stored) {
					break
				}
			}
		}
	}
	w := want()
	if w <= s.floor.Load() {
		return nil
	}
	f := w + ahead/2
	err := s.st.Update(ctx, []store.Lock{{Name: clockFloorKey}}, func(tx store.Txn) error {
		// Processes sharing the store share the floor: one whose clock is behind must not
		// lower what another stored (a later run of that one would start below its Timestamps).
		v, err := tx.Get(keys.Meta(clockFloorKey))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if len(v) == 8 {
			if stored := int64(binary.BigEndian.Uint64(v)); stored >= f {
				f = stored
				return nil
			}
		}
		return tx.Set(keys.Meta(clockFloorKey), binary.BigEndian.AppendUint64(nil, uint64(f)))
	})
	if err != nil {
		return fmt.Errorf("table: store clock floor: %w", err)
	}
	s.floor.Store(f)
	return nil
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
