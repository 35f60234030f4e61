// Package store defines the engine interface every storage engine implements: an ordered
// byte-key/byte-value map with snapshot reads and one atomic, durable Update primitive.
// The Table service builds tables, entities and metadata on top of it with the key layout of
// package keys. The conformance suite in storetest is the contract; every engine passes it.
package store

import (
	"context"
	"errors"
)

// Sentinel errors. Engines wrap their own failures with %w; callers test with errors.Is.
var (
	ErrNotFound = errors.New("store: not found")
	ErrClosed   = errors.New("store: closed")
	// ErrUnavailable: the engine cannot be reached now (a database outage or restart);
	// nothing was written unless the error says the outcome is unknown. Retrying later is
	// the remedy; the server answers 503 ServerBusy.
	ErrUnavailable = errors.New("store: unavailable")
	// ErrTimeout: the engine did not answer in time; the server answers 500
	// OperationTimedOut, which clients retry.
	ErrTimeout = errors.New("store: timed out")
	// ErrNotSupported: the engine lacks the feature (an engine without extents answers it);
	// the server answers 501 NotImplemented.
	ErrNotSupported = errors.New("store: not supported by this engine")
)

// Lock names a unit of isolation for Update. Updates whose lock sets conflict (same Name,
// at least one not Shared) never run concurrently; others may.
type Lock struct {
	Name   string
	Shared bool
}

// Store is an ordered key-value engine.
//
// Keys are compared byte-wise. Byte slices passed in are not retained after a call returns;
// byte slices handed to callbacks are valid only during the callback.
type Store interface {
	// Get returns a copy of the value at key, or ErrNotFound.
	Get(ctx context.Context, key []byte) ([]byte, error)

	// Scan calls fn for each key in [start, end) in ascending order, from one consistent
	// snapshot, until fn returns false or an error (which Scan returns). A nil end means no
	// upper bound. key and value are only valid during the call.
	Scan(ctx context.Context, start, end []byte, fn func(key, value []byte) (more bool, err error)) error

	// Update runs fn in a transaction holding locks and commits its writes atomically and
	// durably (synced) when fn returns nil; nothing is written when fn returns an error. Reads
	// through the Txn see the latest committed data plus the Txn's own writes. Lock
	// conflicts are the only isolation the Pebble engine provides: callers lock every unit
	// whose read-check-write must be serializable. A shared engine (Traits) serializes
	// Updates across processes by itself and may run fn more than once (after a
	// serialization conflict), so fn's effects outside tx must be safe to repeat.
	Update(ctx context.Context, locks []Lock, fn func(tx Txn) error) error

	// Snapshot pins a consistent read-only view of the store as of now. It must be closed;
	// Close waits for open snapshots.
	Snapshot(ctx context.Context) (Snapshot, error)

	// Close flushes and releases the engine. It is safe to call twice.
	Close() error

	// Extents is the engine's store of bulk bytes (extents.go).
	Extents() Extents
}

// Expect is what a caller of Txn.Lookup expects to find, so that an engine can choose the
// cheaper way to look.
type Expect uint8

const (
	// ExpectPresent: the keys probably exist (replace, merge, delete, upsert).
	ExpectPresent Expect = iota
	// ExpectAbsent: the keys probably do not exist (insert). An engine may then answer from
	// filters that prove absence cheaply, at some extra cost when a key does exist.
	ExpectAbsent
)

// Txn is the read-write view inside Update. It must not be used after fn returns.
type Txn interface {
	// Get returns a copy of the value at key as this Txn sees it, or ErrNotFound.
	Get(key []byte) ([]byte, error)
	// Lookup is Get for many keys at once (a batch reads every key it writes): it calls fn
	// for each of keys, which must be distinct and in ascending order, with its value as this
	// Txn sees it and whether it exists. value is not copied: it is valid only during that
	// call, and fn must not write through the Txn. Engines walk the keys in one pass. expect
	// only chooses how the engine looks: the answers are the same either way.
	Lookup(keys [][]byte, expect Expect, fn func(i int, value []byte, found bool) error) error
	Set(key, value []byte) error
	Delete(key []byte) error
	// DeleteRange deletes every key in [start, end). Engines may reclaim space lazily.
	DeleteRange(start, end []byte) error
	// Snapshot pins the committed data as of now, without the Txn's own writes. Taken while
	// the Update's locks are held, it is a point no conflicting writer straddles: every
	// conflicting write either committed before it or starts after the Update ends.
	Snapshot() (Snapshot, error)
}

// Snapshot is a consistent read-only view. It is not safe for concurrent use.
type Snapshot interface {
	// Scan is Store.Scan over the snapshot.
	Scan(ctx context.Context, start, end []byte, fn func(key, value []byte) (more bool, err error)) error
	// Lookup returns the value at key or ErrNotFound. The value is valid until the next call
	// or Close. Successive lookups of ascending keys are cheap: engines walk forward.
	Lookup(key []byte) ([]byte, error)
	// Close releases the snapshot. It is safe to call twice.
	Close() error
}

// Traits describe an engine to the services above it. Engines that several processes share
// report them through an optional Traits() method; TraitsOf gives the zero value (one
// process, cheap range deletes) for the others.
type Traits struct {
	// Shared: other processes read and write the same data. Update's locks then only
	// order this process's Updates (the engine serializes conflicting Updates across
	// processes itself), and a process-local cache of stored data is correct only if every
	// use validates it against the engine.
	Shared bool
	// RangeDeleteChunk, when positive, says DeleteRange costs time in proportion to the keys
	// it removes: a caller removing a range that may be large deletes it in Updates of about
	// this many keys each, so that no transaction runs for minutes.
	RangeDeleteChunk int
}

// TraitsOf returns s's traits.
func TraitsOf(s Store) Traits {
	if t, ok := s.(interface{ Traits() Traits }); ok {
		return t.Traits()
	}
	return Traits{}
}

// GuardedInserter is implemented by engines where an Update costs round trips to a database
// (PostgreSQL): InsertIf writes key = value in one atomic, durable and serializable step (one
// round trip), and only if key does not exist and guardKey holds exactly guardValue (a
// catalog record naming the table the key belongs to). It reports whether it wrote. When it did
// not, nothing was written, and the caller takes the general path (Update), which finds out
// why. locks are taken as Update takes them.
type GuardedInserter interface {
	InsertIf(ctx context.Context, locks []Lock, key, value, guardKey, guardValue []byte) (inserted bool, err error)
}

// GuardedWriter generalizes GuardedInserter to every single-key write, for engines where an
// Update costs round trips to a database: WriteIf applies w in one atomic, durable step (one
// round trip, no transaction around it), only if w.Key holds exactly w.Old (is absent, when
// !w.Exists) and w.GuardKey holds exactly w.GuardValue. It reports whether it wrote; when it
// did not, nothing was written, and the caller reads again and decides anew. A caller that
// read Old (with the guard) and computed the new value from it thereby gets a serializable
// read-modify-write: the write lands only if nothing changed in between. locks are taken as
// Update takes them.
//
// The guard of a write to an existing key (w.Exists) is checked when the step starts and is
// not held against a concurrent deletion: a deletion of the guard that commits while the
// step runs does not wait for it, and the write may land after the deletion (a write of an
// absent key, like InsertIf, is ordered before it). That is enough for a guard that names the
// keys' table: such a write cannot create a key, a step that starts after the deletion
// writes nothing, and an Update that then deletes the keys (the table's purge) conflicts
// with a write landing meanwhile and runs again, so no key outlives the purge.
type GuardedWriter interface {
	WriteIf(ctx context.Context, locks []Lock, w CondWrite) (written bool, err error)
}

// CondWrite is one conditional write of a GuardedWriter.
type CondWrite struct {
	Key []byte
	// Exists: Key must hold exactly Old; otherwise Key must be absent.
	Exists bool
	Old    []byte
	// Value is the new value, unless Delete. Deleting an absent key is not a write.
	Value  []byte
	Delete bool
	// GuardKey must hold exactly GuardValue.
	GuardKey, GuardValue []byte
}

// ScanLimit is Scan for callers that stop after at most limit keys: fn is called for at most
// limit of them (with more==true or not). Engines that read over a network then read no more
// rows than that, and one that reads them in one statement needs no transaction around it
// (method ScanLimit with this signature); for the others it is Scan, stopped after limit
// keys.
func ScanLimit(ctx context.Context, s Store, start, end []byte, limit int, fn func(key, value []byte) (more bool, err error)) error {
	if limit <= 0 {
		return nil
	}
	if sl, ok := s.(interface {
		ScanLimit(context.Context, []byte, []byte, int, func([]byte, []byte) (bool, error)) error
	}); ok {
		return sl.ScanLimit(ctx, start, end, limit, fn)
	}
	n := 0
	return s.Scan(ctx, start, end, func(k, v []byte) (bool, error) {
		n++
		more, err := fn(k, v)
		return more && n < limit, err
	})
}

// ScanKeys is Scan without the values, for callers that need only keys (purging a deleted
// table): engines where values travel over a network skip them (method ScanKeys with this
// signature); for the others it is Scan.
func ScanKeys(ctx context.Context, s Store, start, end []byte, fn func(key []byte) (more bool, err error)) error {
	if ks, ok := s.(interface {
		ScanKeys(context.Context, []byte, []byte, func([]byte) (bool, error)) error
	}); ok {
		return ks.ScanKeys(ctx, start, end, fn)
	}
	return s.Scan(ctx, start, end, func(k, _ []byte) (bool, error) { return fn(k) })
}

// GetMany reads several distinct keys from one consistent view, calling fn for each in
// order with its value (valid only during the call) and whether it exists. Engines where a
// read is a round trip implement it as one (method GetMany with this signature); for the
// others it is a snapshot and a lookup per key.
func GetMany(ctx context.Context, s Store, keys [][]byte, fn func(i int, value []byte, found bool) error) error {
	if g, ok := s.(interface {
		GetMany(context.Context, [][]byte, func(int, []byte, bool) error) error
	}); ok {
		return g.GetMany(ctx, keys, fn)
	}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return err
	}
	defer snap.Close()
	for i, k := range keys {
		v, err := snap.Lookup(k)
		found := err == nil
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if err := fn(i, v, found); err != nil {
			return err
		}
	}
	return nil
}
