package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// OpKind is an entity write operation.
type OpKind uint8

// The entity write operations.
const (
	Insert          OpKind = iota + 1
	Replace                // Update Entity: must exist
	Merge                  // Merge Entity: must exist
	InsertOrReplace        // PUT without If-Match
	InsertOrMerge          // MERGE/PATCH without If-Match
	Delete
)

func (k OpKind) String() string {
	switch k {
	case Insert:
		return "insert"
	case Replace:
		return "replace"
	case Merge:
		return "merge"
	case InsertOrReplace:
		return "insert-or-replace"
	case InsertOrMerge:
		return "insert-or-merge"
	case Delete:
		return "delete"
	}
	return "unknown"
}

// IfMatch is a parsed If-Match condition.
type IfMatch struct {
	// Any is If-Match: * (or no condition for Delete).
	Any bool
	// Ticks is the instant the ETag encodes; valid when !Any.
	Ticks int64
	// Never is set for a well-formed ETag that no Tablo entity can carry; it never matches.
	Never bool
}

// ParseIfMatch parses an If-Match header value: "*", or an ETag. A value that is not an
// ETag at all is InvalidInput, as Azure answers; a well-formed foreign ETag never matches.
func ParseIfMatch(v string) (IfMatch, error) {
	if v == "*" {
		return IfMatch{Any: true}, nil
	}
	if !entity.ValidETagSyntax(v) {
		return IfMatch{}, azerr.Newf(azerr.InvalidInput, "The etag value '%s' specified in one of the request headers is not valid. Please make sure only one etag value is specified and is valid.", v)
	}
	ticks, ok := entity.ParseETag(v)
	if !ok {
		return IfMatch{Never: true}, nil
	}
	return IfMatch{Ticks: ticks}, nil
}

func (m IfMatch) matches(ticks int64) bool {
	return m.Any || (!m.Never && m.Ticks == ticks)
}

// Op is one entity write.
type Op struct {
	Kind OpKind
	// Entity carries the keys (authoritative, from the URL or body) and, except for Delete,
	// the properties. Its Timestamp is ignored.
	Entity *entity.Entity
	// IfMatch applies to Replace, Merge and Delete.
	IfMatch IfMatch
}

// Result is the outcome of one write.
type Result struct {
	// Entity is the entity as stored (nil after Delete).
	Entity *entity.Entity
}

// BatchError reports which operation of a batch failed; Err carries the Azure code.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("operation %d: %v", e.Index, e.Err) }
func (e *BatchError) Unwrap() error { return e.Err }

// Write applies one entity write atomically.
func (s *Service) Write(ctx context.Context, account, tableName string, op Op) (Result, error) {
	if op.Kind == Insert && s.inserter != nil && s.cols == nil {
		if r, done, err := s.insertFast(ctx, account, tableName, op); done || err != nil {
			return r, err
		}
	}
	if op.Kind != Insert && s.writer != nil && s.cols == nil {
		if r, done, err := s.writeFast(ctx, account, tableName, op); done || err != nil {
			return r, err
		}
	}
	res, err := s.Batch(ctx, account, tableName, []Op{op})
	if err != nil {
		var be *BatchError
		if errors.As(err, &be) {
			return Result{}, be.Err
		}
		return Result{}, err
	}
	return res[0], nil
}

// Batch applies ops, which must all address one partition of one table, as one atomic and
// durable transaction: either all succeed or nothing is written. A failing operation is
// reported as a *BatchError with its index. All written entities share one Timestamp unless
// an entity's previous Timestamp forces a later one.
func (s *Service) Batch(ctx context.Context, account, tableName string, ops []Op) ([]Result, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	if err := CheckBatchShape(ops); err != nil {
		return nil, err
	}
	// A stale table id guess (another process re-created the table) is looked up afresh
	// and the write tried again, a few times at most.
	for range 4 {
		t, err := s.writeTarget(ctx, account, tableName)
		if err != nil {
			return nil, err
		}
		results, err := s.batch(ctx, account, tableName, t, ops)
		if errors.Is(err, errStaleHint) || azerr.Is(err, azerr.TableNotFound) {
			s.setHint(account, tableName, Table{}, false)
		}
		if !errors.Is(err, errStaleHint) {
			return results, err
		}
	}
	return nil, azerr.New(azerr.TableNotFound)
}

// insertFast is Write of one Insert on an engine with a one-round-trip guarded insert
// (store.GuardedInserter): the entity is written only if it is absent and the table's
// catalog record still names the guessed table id, both checked by the engine in the same
// serializable step. It reports done only when the entity was written; any other outcome
// (the entity exists, the table is gone or was re-created, no guess yet) leaves nothing
// written, and Write takes the general path, which answers why.
func (s *Service) insertFast(ctx context.Context, account, tableName string, op Op) (Result, bool, error) {
	t, ok := s.tableHint(account, tableName)
	if !ok {
		return Result{}, false, nil
	}
	pk := op.Entity.PartitionKey
	ticks, err := s.fastTicks(ctx)
	if err != nil {
		return Result{}, false, err
	}
	res, value, err := planOp(&op, nil, false, ticks)
	if err != nil {
		return Result{}, false, err
	}
	// No partition lock: inserts of distinct entities do not conflict in the database (the
	// statement reads only the catalog record), so they need not queue, and their commits
	// share WAL flushes; two inserts of one entity are ordered by its primary key.
	locks := []store.Lock{{Name: tableLock(t.ID), Shared: true}}
	ek := keys.Entity(t.ID, pk, op.Entity.RowKey)
	done, err := s.inserter.InsertIf(ctx, locks, ek, value, keys.Table(account, strings.ToLower(tableName)), encodeTable(t))
	if err != nil {
		return Result{}, false, fmt.Errorf("table: write %s: %w", tableName, err)
	}
	if done {
		s.recent.put(ek, value)
	}
	return res, done, nil
}

// fastTicks is nextTicks for a write outside Update: it reserves further ahead until the
// value is below the stored floor.
func (s *Service) fastTicks(ctx context.Context) (int64, error) {
	for attempt := 0; ; attempt++ {
		if err := s.reserveTicks(ctx, floorReserve<<min(attempt, 10)); err != nil {
			return 0, err
		}
		if ticks, ok := s.nextTicks(); ok {
			return ticks, nil
		}
	}
}

// fastAttempts bounds how often writeFast re-reads an entity that changed under it before
// leaving the write to the general path, whose partition lock queues this process's writers.
const fastAttempts = 8

// writeFast is Write of one Replace, Merge, Insert-or-Replace, Insert-or-Merge or Delete on an
// engine with a one-round-trip conditional write (store.GuardedWriter), without a
// transaction: it plans the write (planOp: If-Match, the merge, a Timestamp past the stored
// one) against a value the entity is believed to hold, and the engine writes it only if the
// entity holds exactly that value and the table's catalog record still names the guessed
// table. The belief is the value this process last wrote or read (recentValues: the write is
// then one round trip), else, or when that guess failed, the entity read together with the
// catalog record in one statement, as a point get does (two round trips). An answer other than
// success (404, 412, a merge too large) comes only from such a read: it is the answer as of
// that read, which a single statement sees whole.
//
// It reports done only when the write landed or a read refused it; when the table is not the
// guessed one (gone, re-created, no guess yet) or the entity keeps changing, nothing is
// written and Write takes the general path.
func (s *Service) writeFast(ctx context.Context, account, tableName string, op Op) (Result, bool, error) {
	t, ok := s.tableHint(account, tableName)
	if !ok {
		return Result{}, false, nil
	}
	ek := keys.Entity(t.ID, op.Entity.PartitionKey, op.Entity.RowKey)
	ck := keys.Table(account, strings.ToLower(tableName))
	// No partition lock, as for insertFast: writers of distinct entities do not conflict,
	// and writers of one entity are ordered by the conditional write.
	locks := []store.Lock{{Name: tableLock(t.ID), Shared: true}}
	write := func(old []byte, exists bool, record []byte, guess bool) (Result, bool, error) {
		ticks, err := s.fastTicks(ctx)
		if err != nil {
			return Result{}, false, err
		}
		res, value, err := planOp(&op, old, exists, ticks)
		if err != nil {
			if guess {
				return Result{}, false, nil // not an answer: read and plan again
			}
			return Result{}, true, err
		}
		done, err := s.writer.WriteIf(ctx, locks, store.CondWrite{Key: ek, Exists: exists, Old: old,
			Value: value, Delete: value == nil, GuardKey: ck, GuardValue: record})
		if err != nil {
			s.recent.drop(ek)
			return Result{}, false, fmt.Errorf("table: write %s: %w", tableName, err)
		}
		if done {
			if value == nil {
				s.recent.drop(ek)
			} else {
				s.recent.put(ek, value)
			}
		}
		return res, done, nil
	}
	if old, ok := s.recent.get(ek); ok {
		if res, done, err := write(old, true, encodeTable(t), true); done || err != nil {
			return res, done, err
		}
		s.recent.drop(ek)
	}
	for range fastAttempts {
		var old, record []byte
		var exists, live bool
		err := store.GetMany(ctx, s.st, [][]byte{ek, ck}, func(i int, v []byte, found bool) error {
			if i == 0 {
				old, exists = bytes.Clone(v), found
			} else {
				record, live = bytes.Clone(v), found
			}
			return nil
		})
		if err != nil {
			return Result{}, false, fmt.Errorf("table: write %s: %w", tableName, err)
		}
		if !live {
			return Result{}, false, nil
		}
		if cur, err := decodeTable(record); err != nil || cur.ID != t.ID {
			return Result{}, false, nil
		}
		if res, done, err := write(old, exists, record, false); done || err != nil {
			return res, done, err
		}
	}
	return Result{}, false, nil
}

// errStaleHint: on a shared store, the table id a write guessed from tableHint is no longer
// the table's (deleted and re-created by another process); Batch looks the table up again.
var errStaleHint = errors.New("table: stale table id")

// writeTarget is the table a write goes to: on a shared store the id guess, which the
// write's transaction validates (checkTableLive), else the (cached) lookup.
func (s *Service) writeTarget(ctx context.Context, account, tableName string) (Table, error) {
	if s.shared {
		if t, ok := s.tableHint(account, tableName); ok {
			return t, nil
		}
	}
	return s.lookupTable(ctx, account, tableName)
}

// batch is Batch's transaction on table t.
func (s *Service) batch(ctx context.Context, account, tableName string, t Table, ops []Op) ([]Result, error) {
	pk := ops[0].Entity.PartitionKey
	locks := []store.Lock{{Name: tableLock(t.ID), Shared: true}, {Name: partitionLock(t.ID, pk)}}
	results := make([]Result, len(ops))
	var written, values [][]byte // of the last run of update
	update := func(tx store.Txn) error {
		// The table may have been deleted between the lookup and taking its lock. On a
		// shared store the catalog record is read with the entities, in one lookup (one
		// round trip), and checked before anything else the lookup found.
		var withCatalog *catalogLookup
		if s.shared {
			withCatalog = &catalogLookup{Txn: tx, key: keys.Table(account, strings.ToLower(tableName))}
		} else if err := s.checkTableLive(tx, account, tableName, t.ID); err != nil {
			return err
		}
		ticks, ok := s.nextTicks()
		if !ok {
			return errPastFloor
		}
		written = make([][]byte, len(ops))
		for i := range ops {
			written[i] = keys.Entity(t.ID, pk, ops[i].Entity.RowKey)
		}
		var err error
		if withCatalog != nil {
			values, err = planOps(withCatalog, ops, written, ticks, results)
			if cerr := withCatalog.check(t.ID); cerr != nil {
				return cerr
			}
		} else {
			values, err = planOps(tx, ops, written, ticks, results)
		}
		if err != nil {
			return err
		}
		for i, key := range written {
			var err error
			if values[i] == nil {
				err = tx.Delete(key)
			} else {
				err = tx.Set(key, values[i])
			}
			if err != nil {
				return &BatchError{Index: i, Err: err}
			}
		}
		if s.cols != nil {
			// Before the commit, under the table's shared lock: the column cache's
			// consistency rests on it (package colcache).
			s.cols.NoteWrites(t.ID, written)
		}
		return nil
	}
	var err error
	for attempt := 0; ; attempt++ {
		if err := s.reserveTicks(ctx, floorReserve<<min(attempt, 10)); err != nil {
			return nil, err
		}
		if err = s.st.Update(ctx, locks, update); !errors.Is(err, errPastFloor) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("table: write %s: %w", tableName, err)
	}
	for i, k := range written {
		if values[i] == nil {
			s.recent.drop(k)
		} else {
			s.recent.put(k, values[i])
		}
	}
	return results, nil
}

// catalogLookup is a Txn whose Lookup also reads one catalog record, for writes on a shared
// store: the record decides whether the write may land (check), in the same round trip as
// the entities it reads.
type catalogLookup struct {
	store.Txn
	key   []byte
	seen  bool // the lookup delivered the record (it stops early when fn fails)
	value []byte
	found bool
}

func (c *catalogLookup) Lookup(ks [][]byte, expect store.Expect, fn func(i int, value []byte, found bool) error) error {
	at, _ := slices.BinarySearchFunc(ks, c.key, bytes.Compare)
	all := slices.Insert(slices.Clone(ks), at, c.key)
	return c.Txn.Lookup(all, store.ExpectPresent, func(i int, v []byte, found bool) error {
		switch {
		case i == at:
			c.value, c.found, c.seen = bytes.Clone(v), found, true
			return nil
		case i > at:
			i--
		}
		return fn(i, v, found)
	})
}

// check is checkTableLive's verdict from the record the lookup read (read now if the
// lookup did not deliver it).
func (c *catalogLookup) check(id uint64) error {
	if !c.seen {
		v, err := c.Txn.Get(c.key)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		c.value, c.found = v, err == nil
	}
	if !c.found {
		return azerr.New(azerr.TableNotFound)
	}
	if t, err := decodeTable(c.value); err != nil || t.ID != id {
		if err == nil {
			return errStaleHint
		}
		return azerr.New(azerr.TableNotFound)
	}
	return nil
}

// MaxBatchOps is Azure's limit on operations in one entity group transaction.
const MaxBatchOps = 100

// CheckBatchShape applies the batch rules that need no data (Batch applies them too; the
// server calls it early to report the lowest failing index): size, one partition, each
// entity at most once. Indexes follow Azure: the first op in another partition, the second
// occurrence of an entity.
func CheckBatchShape(ops []Op) error {
	if len(ops) > MaxBatchOps {
		return &BatchError{Index: MaxBatchOps - 1, Err: azerr.Newf(azerr.InvalidInput,
			"The batch request operation exceeds the maximum %d changes per change set.", MaxBatchOps)}
	}
	pk := ops[0].Entity.PartitionKey
	seen := make(map[string]struct{}, len(ops))
	for i := range ops {
		e := ops[i].Entity
		if e.PartitionKey != pk {
			return &BatchError{Index: i, Err: azerr.New(azerr.CommandsInBatchActOnDifferentPartitions)}
		}
		if _, dup := seen[e.RowKey]; dup {
			return &BatchError{Index: i, Err: azerr.New(azerr.InvalidDuplicateRow)}
		}
		seen[e.RowKey] = struct{}{}
	}
	return nil
}

// checkTableLive verifies, under the table's lock, that the table still exists with the id
// the caller looked up (it may have been deleted, or deleted and re-created, meanwhile).
//
// On a shared store the catalog record is always read here, inside the serializable
// transaction: a Delete Table committed by another process either precedes this read (the
// write fails with TableNotFound) or conflicts with it (the engine retries the write).
func (s *Service) checkTableLive(tx store.Txn, account, name string, id uint64) error {
	s.catalogMu.RLock()
	_, dead := s.dead[id]
	s.catalogMu.RUnlock()
	if dead {
		return azerr.New(azerr.TableNotFound)
	}
	if t, ok := s.cachedTable(account, name); ok && t.ID == id {
		return nil
	}
	v, err := tx.Get(keys.Table(account, strings.ToLower(name)))
	if errors.Is(err, store.ErrNotFound) {
		return azerr.New(azerr.TableNotFound)
	} else if err != nil {
		return err
	}
	if t, err := decodeTable(v); err != nil || t.ID != id {
		if s.shared && err == nil {
			return errStaleHint
		}
		return azerr.New(azerr.TableNotFound)
	}
	return nil
}

// planOps checks every op of a batch against what tx holds before any is written, filling
// results and returning the values to store (nil for a delete). The keys are distinct
// (CheckBatchShape), so no op reads another's write, and the engine reads them all in one
// ordered walk. The ops are checked in key order, but the failure reported is the lowest
// index, as if they were checked in request order.
func planOps(tx store.Txn, ops []Op, written [][]byte, ticks int64, results []Result) ([][]byte, error) {
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(written[a], written[b]) })
	sorted := make([][]byte, len(ops))
	for j, i := range order {
		sorted[j] = written[i]
	}
	values := make([][]byte, len(ops))
	failed := &BatchError{Index: len(ops)}
	// Inserts expect their keys absent, which the engine can prove from filters.
	expect := store.ExpectAbsent
	for i := range ops {
		if ops[i].Kind != Insert {
			expect = store.ExpectPresent
			break
		}
	}
	err := tx.Lookup(sorted, expect, func(j int, raw []byte, found bool) error {
		i := order[j]
		r, v, err := planOp(&ops[i], raw, found, ticks)
		if err != nil && i < failed.Index {
			failed.Index, failed.Err = i, err
		}
		results[i], values[i] = r, v
		return nil
	})
	if err != nil {
		return nil, err
	}
	if failed.Err != nil {
		return nil, failed
	}
	return values, nil
}

// planOp checks one write against the stored entity (raw, when exists) and returns its
// result and the value to store (nil for a delete). raw is the engine's memory, valid only
// during the call: what is needed from it is copied (the Timestamp, a decoded copy for merges).
func planOp(op *Op, raw []byte, exists bool, ticks int64) (Result, []byte, error) {
	in := op.Entity
	var oldTicks int64
	if exists {
		r, err := entity.NewRaw(raw, in.PartitionKey, in.RowKey)
		if err != nil {
			return Result{}, nil, fmt.Errorf("table: stored entity: %w", err)
		}
		oldTicks = r.Timestamp()
	}
	switch op.Kind {
	case Insert:
		if exists {
			return Result{}, nil, azerr.New(azerr.EntityAlreadyExists)
		}
	case Replace, Merge, Delete:
		if !exists {
			return Result{}, nil, azerr.New(azerr.ResourceNotFound)
		}
		if !op.IfMatch.matches(oldTicks) {
			return Result{}, nil, azerr.New(azerr.UpdateConditionNotSatisfied)
		}
	case InsertOrReplace, InsertOrMerge:
	default:
		return Result{}, nil, azerr.New(azerr.NotImplemented)
	}
	if op.Kind == Delete {
		return Result{}, nil, nil
	}
	next := &entity.Entity{PartitionKey: in.PartitionKey, RowKey: in.RowKey, Timestamp: ticks}
	if exists && (op.Kind == Merge || op.Kind == InsertOrMerge) {
		old, err := entity.DecodeBinary(raw, in.PartitionKey, in.RowKey)
		if err != nil {
			return Result{}, nil, fmt.Errorf("table: stored entity: %w", err)
		}
		next.Props = old.Props // a fresh copy: Merge may update it in place
		next.Merge(in.Props)
		if err := entity.CheckLimits(next); err != nil {
			return Result{}, nil, err
		}
	} else {
		next.Props = in.Props
	}
	if exists && next.Timestamp <= oldTicks {
		// The wall clock went back (e.g. across a restart): the ETag must still change.
		next.Timestamp = oldTicks + 1
	}
	return Result{Entity: next}, entity.AppendBinary(nil, next), nil
}

// GetEntity reads one entity (point query). Missing → ResourceNotFound.
func (s *Service) GetEntity(ctx context.Context, account, tableName, pk, rk string) (*entity.Entity, error) {
	raw, err := s.GetEntityRaw(ctx, account, tableName, pk, rk)
	if err != nil {
		return nil, err
	}
	e, err := raw.Decode()
	if err != nil {
		return nil, fmt.Errorf("table: stored entity: %w", err)
	}
	return e, nil
}

func partitionLock(tableID uint64, pk string) string {
	return string(keys.PartitionPrefix(tableID, pk))
}

// GetEntityRaw reads one entity (point query) without decoding it, for
// entity.AppendJSONRaw; Raw.Decode turns it into an Entity. Missing → ResourceNotFound.
// The Raw owns its buffer, so it stays valid.
func (s *Service) GetEntityRaw(ctx context.Context, account, tableName, pk, rk string) (entity.Raw, error) {
	if s.shared {
		return s.getEntityShared(ctx, account, tableName, pk, rk)
	}
	t, err := s.lookupTable(ctx, account, tableName)
	if err != nil {
		return entity.Raw{}, err
	}
	v, err := s.st.Get(ctx, keys.Entity(t.ID, pk, rk))
	if errors.Is(err, store.ErrNotFound) {
		return entity.Raw{}, azerr.New(azerr.ResourceNotFound)
	} else if err != nil {
		return entity.Raw{}, fmt.Errorf("table: get entity: %w", err)
	}
	raw, err := entity.NewRaw(v, pk, rk)
	if err != nil {
		return entity.Raw{}, fmt.Errorf("table: stored entity: %w", err)
	}
	return raw, nil
}

// getEntityShared is GetEntityRaw on a shared store: the entity at the guessed table id and
// the table's catalog record, read together from one view (store.GetMany), so the answer is
// valid exactly when the record still names that id. A read that starts after another
// process deleted the table sees the record gone.
func (s *Service) getEntityShared(ctx context.Context, account, tableName, pk, rk string) (entity.Raw, error) {
	ck := keys.Table(account, strings.ToLower(tableName))
	t, known := s.tableHint(account, tableName)
	for range 4 {
		if !known {
			var err error
			if t, err = s.lookupTable(ctx, account, tableName); err != nil {
				s.setHint(account, tableName, Table{}, false)
				return entity.Raw{}, err
			}
		}
		var cur Table
		var live bool
		var raw entity.Raw
		var found bool
		var stored []byte // raw's buffer, read-only: recentValues keeps it too
		ek := keys.Entity(t.ID, pk, rk)
		err := store.GetMany(ctx, s.st, [][]byte{ek, ck}, func(i int, v []byte, ok bool) error {
			if !ok {
				return nil
			}
			if i == 1 {
				var err error
				cur, err = decodeTable(v)
				live = err == nil
				return err
			}
			var err error
			stored = bytes.Clone(v)
			raw, err = entity.NewRaw(stored, pk, rk)
			found = true
			return err
		})
		if err != nil {
			return entity.Raw{}, fmt.Errorf("table: get entity: %w", err)
		}
		switch {
		case !live:
			s.setHint(account, tableName, Table{}, false)
			return entity.Raw{}, azerr.New(azerr.TableNotFound)
		case cur.ID != t.ID:
			known = false // re-created since the guess: look again
			continue
		case !found:
			s.recent.drop(ek)
			return entity.Raw{}, azerr.New(azerr.ResourceNotFound)
		}
		s.recent.put(ek, stored)
		return raw, nil
	}
	return entity.Raw{}, azerr.New(azerr.TableNotFound)
}
