package colcache

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Options configure a Cache.
type Options struct {
	// MaxBytes is the memory budget of all tables' bases together. A table whose base
	// would not fit alone is not cached; others are evicted least recently used first.
	MaxBytes int64
	// BuildAfter is how many entities uncached filtered scans of a table must examine
	// before its columns are built (default 20,000): a table queried once is not copied.
	BuildAfter int64
	// MaxProps bounds the columns of one table (default 8); the least recently requested
	// go first.
	MaxProps int
	// NoValues keeps keys and columns only, never copies of the entities or of their JSON:
	// matches are then always read from the store and encoded (less memory, slower pages).
	NoValues bool
	// ValuesMaxBytes caps one table's copy of all its entities (default MaxBytes). A table
	// whose entities do not fit keeps copies of the rows its scans matched instead, while the
	// budget has room.
	ValuesMaxBytes int64
	Logger         *slog.Logger
}

// FreezeFunc runs fn while no write to the table is in progress (the table service takes the
// table's lock exclusively), passing the transaction so that fn can take a snapshot then.
type FreezeFunc func(ctx context.Context, tableID uint64, fn func(tx store.Txn) error) error

// Cache holds the column bases of many tables. It is safe for concurrent use.
type Cache struct {
	o      Options
	freeze FreezeFunc
	ctx    context.Context
	cancel context.CancelFunc
	builds sync.WaitGroup
	// one build at a time: a build is a full scan, and the cache should not compete with
	// the requests it serves for more than one core.
	buildSem chan struct{}
	// maxOffset, lowered by tests to reach the offset limits with small tables.
	offsetLimit int64

	mu     sync.Mutex
	tables map[uint64]*tableState
	used   int64  // bytes of installed bases
	clock  int64  // for least-recently-used eviction
	gens   uint64 // bases installed so far: the last one's Gen
}

// tableState is one table's cache state. Its fields are guarded by Cache.mu: writes touch
// it once per transaction, which is cheap next to the transaction's own fsync.
type tableState struct {
	id     uint64
	prefix []byte
	base   *base
	// dirty holds the key suffixes written since base's snapshot; sorted memoizes it in
	// order (nil when stale).
	dirty  map[string]struct{}
	sorted []string
	// next collects the keys written since the snapshot of the build in progress, which
	// becomes dirty when that build is installed.
	next map[string]struct{}
	// building is set while a build runs, with the properties it builds, and closed when it
	// ends (installed or not): scans that find it wait for the build instead of scanning the
	// store (AwaitBuild).
	building      chan struct{}
	buildingProps []string
	awaiting      int      // scans in AwaitBuild on the running build (tests wait on it)
	props         []string // wanted properties, most recently requested last
	work          int64    // entities examined by uncached filtered scans since the last build
	lastUse       int64
	// retryAfter is the scan work after which a build that did not fit is tried again.
	retryAfter int64
}

// New returns a cache that builds through freeze. Close stops its builds.
func New(o Options, freeze FreezeFunc) *Cache {
	if o.BuildAfter <= 0 {
		o.BuildAfter = 20_000
	}
	if o.MaxProps <= 0 {
		o.MaxProps = 8
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Cache{o: o, freeze: freeze, ctx: ctx, cancel: cancel, buildSem: make(chan struct{}, 1), tables: map[uint64]*tableState{},
		offsetLimit: maxOffset}
}

// Close cancels builds in progress, waits for them and frees every base not held by a View.
func (c *Cache) Close() {
	c.cancel()
	c.builds.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, ts := range c.tables {
		c.dropLocked(ts)
		delete(c.tables, id)
	}
}

// NoteWrites records that the keys (full encoded entity keys of one table) are being written.
// The caller must hold the table's lock shared and call it before the write commits.
func (c *Cache) NoteWrites(tableID uint64, keys [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.tables[tableID]
	if ts == nil || (ts.base == nil && ts.next == nil) {
		return
	}
	for _, k := range keys {
		s := string(k[len(ts.prefix):])
		if ts.base != nil {
			if _, ok := ts.dirty[s]; !ok {
				ts.dirty[s] = struct{}{}
				ts.sorted = nil
			}
		}
		if ts.next != nil {
			ts.next[s] = struct{}{}
		}
	}
	if ts.base != nil && len(ts.dirty) > maxDirty(ts.base.rows) && ts.building == nil {
		// Heavily rewritten and not rebuilt (no scans lately): stop tracking rather than
		// let the set grow; the next scans start over.
		c.dropLocked(ts)
	}
}

// rebuildDirty is how many written keys make a View schedule a rebuild; maxDirty is how many
// make the cache drop a base outright.
func rebuildDirty(rows int) int { return 256 + rows/16 }
func maxDirty(rows int) int     { return 4096 + rows }

// Drop forgets a table (it was deleted).
func (c *Cache) Drop(tableID uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ts := c.tables[tableID]; ts != nil {
		c.dropLocked(ts)
		delete(c.tables, tableID)
	}
}

// dropLocked releases the table's base and stops tracking its writes.
func (c *Cache) dropLocked(ts *tableState) {
	if ts.base != nil {
		c.used -= ts.base.size
		ts.base.release()
		ts.base = nil
	}
	ts.dirty, ts.sorted, ts.work = nil, nil, 0
}

// Gen identifies one installed base of one table. A rebuilt or re-created base has a new Gen.
type Gen uint64

// Ready reports whether View would currently find the table's columns for props, and the
// generation of the base it would find. A reader calls Ready, then takes its store snapshot,
// then View with that generation (see the package comment for why the order matters).
func (c *Cache) Ready(tableID uint64, props []string) (Gen, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.tables[tableID]
	if ts == nil || ts.base == nil || !ts.base.hasAll(props) {
		return 0, false
	}
	return ts.base.gen, true
}

// View returns the table's columns for props (sorted, distinct), or nil when they are not
// cached or the installed base is no longer gen, the one Ready reported before the caller
// took its store snapshot: a base installed since may hold writes newer than that snapshot.
// With nil, the caller scans the store and reports the work with NoteScan.
func (c *Cache) View(tableID uint64, props []string, gen Gen) *View {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.tables[tableID]
	if ts == nil || ts.base == nil || ts.base.gen != gen || !ts.base.hasAll(props) {
		return nil
	}
	c.clock++
	ts.lastUse = c.clock
	if ts.sorted == nil && len(ts.dirty) > 0 {
		ts.sorted = make([]string, 0, len(ts.dirty))
		for k := range ts.dirty {
			ts.sorted = append(ts.sorted, k)
		}
		slices.Sort(ts.sorted)
	}
	if len(ts.dirty) > rebuildDirty(ts.base.rows) {
		c.startBuildLocked(ts)
	}
	ts.base.refs.Add(1)
	return &View{c: c, b: ts.base, prefix: ts.prefix, dirty: ts.sorted}
}

// NoteScan records that an uncached scan of the table examined n entities to evaluate a
// filter reading props; enough such work starts a build in the background.
func (c *Cache) NoteScan(tableID uint64, props []string, n int) {
	if c.o.MaxBytes <= 0 || len(props) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.wantLocked(tableID, props)
	ts.work += int64(n)
	if ts.work >= c.o.BuildAfter && ts.work >= ts.retryAfter {
		c.startBuildLocked(ts)
	}
}

// Build builds the table's columns for props (and those requested before) now and returns
// when they are installed or the build failed. Background builds do the same.
func (c *Cache) Build(tableID uint64, props []string) error {
	c.mu.Lock()
	ts := c.wantLocked(tableID, props)
	if ts.building != nil {
		c.mu.Unlock()
		return errors.New("colcache: a build of this table is in progress")
	}
	props = c.beginBuildLocked(ts)
	c.mu.Unlock()
	return c.build(ts, props)
}

// beginBuildLocked marks a build of ts's wanted properties as running and returns them.
func (c *Cache) beginBuildLocked(ts *tableState) []string {
	ts.building = make(chan struct{})
	ts.buildingProps = slices.Sorted(slices.Values(ts.props))
	return ts.buildingProps
}

// AwaitBuild waits, at most until ctx ends or the deadline passes, for a build of the table
// running now that covers props to end, and reports whether it ended: the caller then asks
// Ready again instead of scanning the store while the build does. It holds no lock while
// waiting, so writers are never held up; a failed build just makes Ready say no again.
func (c *Cache) AwaitBuild(ctx context.Context, tableID uint64, props []string, deadline time.Time) bool {
	c.mu.Lock()
	ts := c.tables[tableID]
	if ts == nil || ts.building == nil || !isSubset(props, ts.buildingProps) {
		c.mu.Unlock()
		return false
	}
	done := ts.building
	ts.awaiting++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		ts.awaiting--
		c.mu.Unlock()
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-ctx.Done():
	case <-timer.C:
	}
	return false
}

// isSubset reports whether every element of sub is in set (both sorted).
func isSubset(sub, set []string) bool {
	for _, s := range sub {
		if _, ok := slices.BinarySearch(set, s); !ok {
			return false
		}
	}
	return true
}

// wantLocked returns the table's state, created if needed, with props requested most recently.
func (c *Cache) wantLocked(tableID uint64, props []string) *tableState {
	ts := c.tables[tableID]
	if ts == nil {
		ts = &tableState{id: tableID, prefix: keys.TablePrefix(tableID)}
		c.tables[tableID] = ts
	}
	for _, p := range props {
		ts.props = slices.DeleteFunc(ts.props, func(q string) bool { return q == p })
		ts.props = append(ts.props, p)
	}
	if len(ts.props) > c.o.MaxProps {
		ts.props = slices.Delete(ts.props, 0, len(ts.props)-c.o.MaxProps)
	}
	return ts
}

// startBuildLocked starts a background build of ts unless one is running.
func (c *Cache) startBuildLocked(ts *tableState) {
	if ts.building != nil || c.ctx.Err() != nil {
		return
	}
	props := c.beginBuildLocked(ts)
	c.builds.Go(func() { _ = c.build(ts, props) })
}

// build takes a snapshot with the table's writers excluded, starts collecting the keys
// written after it, scans the snapshot into a new base and installs it. The caller has set
// begun it with beginBuildLocked.
func (c *Cache) build(ts *tableState, props []string) error {
	start := time.Now()
	b, err := c.runBuild(ts, props)
	c.mu.Lock()
	defer c.mu.Unlock()
	close(ts.building)
	ts.building, ts.buildingProps = nil, nil
	next := ts.next
	ts.next = nil
	if c.tables[ts.id] != ts {
		// Dropped meanwhile (table deleted, or Close).
		if b != nil {
			b.release()
		}
		return errors.New("colcache: table dropped during the build")
	}
	if err != nil {
		if errors.Is(err, errTooBig) {
			// Retry only after twice as much scanning as this attempt followed.
			ts.retryAfter = 2 * max(ts.work, c.o.BuildAfter)
		} else if c.ctx.Err() == nil {
			c.o.Logger.Warn("column cache build failed", "table_id", ts.id, "err", err)
		}
		ts.work = 0
		return err
	}
	c.dropLocked(ts)
	c.evictLocked(b.size, ts)
	if c.used+b.size > c.o.MaxBytes {
		ts.retryAfter = 2 * max(ts.work, c.o.BuildAfter)
		b.release()
		return errTooBig
	}
	c.gens++
	b.gen, b.table = Gen(c.gens), ts.id
	if !b.hasValues && !c.o.NoValues {
		b.matched = &matchedRows{}
	}
	if !c.o.NoValues {
		b.elements = &matchedRows{}
	}
	ts.base, ts.dirty, ts.sorted, ts.retryAfter = b, next, nil, 0
	c.used += b.size
	c.clock++
	ts.lastUse = c.clock
	c.o.Logger.Debug("column cache built", "table_id", ts.id, "rows", b.rows, "props", props,
		"bytes", b.size, "took", time.Since(start))
	return nil
}

func (c *Cache) runBuild(ts *tableState, props []string) (*base, error) {
	select {
	case c.buildSem <- struct{}{}:
		defer func() { <-c.buildSem }()
	case <-c.ctx.Done():
		return nil, c.ctx.Err()
	}
	var snap store.Snapshot
	err := c.freeze(c.ctx, ts.id, func(tx store.Txn) error {
		s, err := tx.Snapshot()
		if err != nil {
			return err
		}
		snap = s
		c.mu.Lock()
		ts.next = map[string]struct{}{}
		c.mu.Unlock()
		return nil
	})
	if err != nil {
		if snap != nil {
			snap.Close()
		}
		return nil, err
	}
	defer snap.Close()
	valuesBudget := c.o.MaxBytes
	if c.o.ValuesMaxBytes > 0 {
		valuesBudget = min(valuesBudget, c.o.ValuesMaxBytes)
	}
	if c.o.NoValues {
		valuesBudget = 0
	}
	return buildBase(c.ctx, snap, ts.prefix, keys.TableEnd(ts.id), props, c.o.MaxBytes, valuesBudget, c.offsetLimit)
}

// reserveMatched grants n more bytes of the budget to b's matched-row or element copies if b is still
// its table's base and the budget has room (other tables are not evicted for it).
func (c *Cache) reserveMatched(b *base, n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.tables[b.table]
	if ts == nil || ts.base != b || c.used+n > c.o.MaxBytes {
		return false
	}
	b.size += n // given back with the base by dropLocked
	c.used += n
	return true
}

// evictLocked frees least recently used bases of other tables until need more bytes fit.
func (c *Cache) evictLocked(need int64, keep *tableState) {
	for c.used+need > c.o.MaxBytes {
		var victim *tableState
		for _, ts := range c.tables {
			if ts != keep && ts.base != nil && (victim == nil || ts.lastUse < victim.lastUse) {
				victim = ts
			}
		}
		if victim == nil {
			return
		}
		c.dropLocked(victim)
	}
}

// Stats describes the cache for diagnostics and tests.
type Stats struct {
	Tables int   // tables with a base
	Bytes  int64 // memory of all bases
}

// Stats returns the cache's current size.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s Stats
	for _, ts := range c.tables {
		if ts.base != nil {
			s.Tables++
		}
	}
	s.Bytes = c.used
	return s
}
