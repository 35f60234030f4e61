// Package postgres is a store.Store on PostgreSQL, written in the SQL that CockroachDB and
// YugabyteDB also accept, through pgx and its pool. Several Tablo processes can share one
// database: the engine reports store.Traits{Shared: true}.
//
// Layout: one table, tablo_kv (k BYTEA PRIMARY KEY, v BYTEA NOT NULL); bytea compares
// byte-wise, the order of package keys. Bulk bytes (extents) are chunk rows in two more
// tables (extents.go). The schema is versioned (tablo_schema) and migrated
// at Open (schema.go).
//
// Isolation: every Update is a SERIALIZABLE transaction, retried from the start when the
// database reports a serialization failure or deadlock (40001, 40P01). Serializability
// across all processes is what makes an Update's lock set hold between front ends: any two
// Updates whose read-check-write conflict are ordered by the database, whatever their lock
// names. The lock set is still taken, process-locally (package stripelock), so that one
// process's writers to one partition queue instead of aborting each other.
//
// Reads: Get is one statement, shared with concurrent point reads when the database is
// busy (coalesce.go). Scan and snapshots run in a REPEATABLE READ READ ONLY
// transaction (one snapshot) and read in keyset batches (ORDER BY k LIMIT n, growing to
// maxBatch), streaming each batch's rows to the callback; no result is held whole.
//
// Round trips: BEGIN travels with a transaction's first statement, and an Update's writes
// travel with its COMMIT (writes are buffered in the Txn and read back from there). Single
// guarded writes (InsertIf, WriteIf) and short scans (ScanLimit) are one statement each, in
// no explicit transaction.
package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/stripelock"
)

// Options configure the engine.
type Options struct {
	// URL is a postgres:// URL or a key=value DSN (pgx syntax; pool_max_conns and runtime
	// parameters such as search_path are accepted).
	URL string
	// MaxConns is the pool size (default max(16, 8 × GOMAXPROCS), unless the URL says): commits
	// wait for the WAL flush, not for CPU, and concurrent ones share a flush, so writes need
	// about as many connections as they have concurrent requests.
	MaxConns int32
	// StatementTimeout bounds each statement on the server (statement_timeout) and, with a
	// margin, each call on the client (default 10 s).
	StatementTimeout time.Duration
	// Logger receives the engine's warnings (default: discarded).
	Logger *slog.Logger
	// AbandonAfter is how long an extent being written may go without a chunk written before
	// any front end deletes it as abandoned (default DefaultAbandonAfter; extents.go).
	AbandonAfter time.Duration
	// ReclaimInterval is how often the engine looks for abandoned extents (default 1
	// minute; negative: never in the background, tests call ReclaimExtents).
	ReclaimInterval time.Duration
	// PointReads is how many point-read statements (Get, GetMany of a few keys) may be in
	// flight before further point reads gather into one statement (coalesce.go). Default:
	// max(1, GOMAXPROCS/2). On 2 cores, 1 gave the most gets per CPU-second.
	PointReads int
	// CheckNesting logs an Error, with the stack, whenever a goroutine that holds a pooled
	// connection asks for another (nesting.go). For tests: it costs a stack read per call.
	CheckNesting bool
}

// RangeDeleteChunk is how many keys the engine advises deleting per Update (store.Traits):
// a DELETE of 10,000 rows takes tens of milliseconds.
const RangeDeleteChunk = 10_000

// DB is a store.Store on a PostgreSQL-protocol database.
type DB struct {
	pool    *pgxpool.Pool
	locks   *stripelock.Table
	timeout time.Duration // per call, on the client
	log     *slog.Logger
	closed  atomic.Bool
	// abandonAfter: extents.go. stop ends the background reclaimer (background).
	abandonAfter time.Duration
	asyncChunks  bool      // extents.go: chunks before the last commit without a log flush
	chunkPool    sync.Pool // extents.go: *[]byte of chunkSize capacity
	stop         chan struct{}
	background   sync.WaitGroup
	// inflight lets Close wait for running calls.
	inflight  sync.RWMutex
	snapshots sync.WaitGroup
	nest      *nesting // nil unless Options.CheckNesting
	// reads gathers point reads (coalesce.go); lookup is their statement (lookupPositional).
	reads  gatherer[readBatch]
	lookup func(ctx context.Context, keys [][]byte, vals [][]byte, found []bool) error
}

// The statements, all of them (docs/postgres.md lists them as the compatibility promise).
const (
	stmtGet          = `SELECT v FROM tablo_kv WHERE k = $1`
	stmtScan         = `SELECT k, v FROM tablo_kv WHERE k >= $1 AND k < $2 ORDER BY k LIMIT $3`
	stmtScanFrom     = `SELECT k, v FROM tablo_kv WHERE k >= $1 ORDER BY k LIMIT $2`
	stmtScanKeys     = `SELECT k FROM tablo_kv WHERE k >= $1 AND k < $2 ORDER BY k LIMIT $3`
	stmtScanKeysFrom = `SELECT k FROM tablo_kv WHERE k >= $1 ORDER BY k LIMIT $2`
	stmtLookup       = `SELECT k, v FROM tablo_kv WHERE k = ANY($1)`
	stmtUpsert       = `INSERT INTO tablo_kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v`
	stmtUpsertMany   = `INSERT INTO tablo_kv (k, v) SELECT * FROM unnest($1::BYTEA[], $2::BYTEA[]) ON CONFLICT (k) DO UPDATE SET v = excluded.v`
	stmtInsertIf     = `INSERT INTO tablo_kv (k, v) SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM tablo_kv WHERE k = $1) AND EXISTS (SELECT 1 FROM tablo_kv WHERE k = $3 AND v = $4 FOR SHARE)`
	stmtUpdateIf     = `UPDATE tablo_kv SET v = $2 WHERE k = $1 AND v = $3 AND EXISTS (SELECT 1 FROM tablo_kv WHERE k = $4 AND v = $5)`
	stmtDeleteIf     = `DELETE FROM tablo_kv WHERE k = $1 AND v = $2 AND EXISTS (SELECT 1 FROM tablo_kv WHERE k = $3 AND v = $4)`
	stmtDelete       = `DELETE FROM tablo_kv WHERE k = ANY($1)`
	stmtDeleteRange  = `DELETE FROM tablo_kv WHERE k >= $1 AND k < $2`
	stmtDeleteFrom   = `DELETE FROM tablo_kv WHERE k >= $1`
	stmtBeginUpdate  = `BEGIN ISOLATION LEVEL SERIALIZABLE`
	stmtBeginRead    = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`
	stmtCommit       = `COMMIT`
	stmtRollback     = `ROLLBACK`
)

// Open connects, migrates the schema and returns the engine. The database must be reachable.
func Open(ctx context.Context, o Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(o.URL)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse URL: %w", err)
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	} else if !hasParam(o.URL, "pool_max_conns") {
		cfg.MaxConns = int32(max(16, 8*runtime.GOMAXPROCS(0)))
	}
	if o.StatementTimeout <= 0 {
		o.StatementTimeout = 10 * time.Second
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	params := cfg.ConnConfig.RuntimeParams
	if _, ok := params["statement_timeout"]; !ok {
		params["statement_timeout"] = strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10)
	}
	// Single statements outside a transaction (Get, GetMany, InsertIf) rely on this level:
	// each sees what committed before it started, and InsertIf's row lock does the rest.
	if _, ok := params["default_transaction_isolation"]; !ok {
		params["default_transaction_isolation"] = "read committed"
	}
	if _, ok := params["application_name"]; !ok {
		params["application_name"] = "tablo"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, wrap("open", err)
	}
	if o.AbandonAfter <= 0 {
		o.AbandonAfter = DefaultAbandonAfter
	}
	d := &DB{pool: pool, locks: stripelock.New(), timeout: o.StatementTimeout + 5*time.Second, log: o.Logger,
		abandonAfter: o.AbandonAfter, stop: make(chan struct{})}
	if o.CheckNesting {
		d.nest = newNesting(o.Logger)
	}
	if o.PointReads <= 0 {
		o.PointReads = max(1, runtime.GOMAXPROCS(0)/2)
	}
	d.reads.limit, d.reads.timeout, d.lookup = o.PointReads, d.timeout, d.lookupPositional
	d.asyncChunks = probeAsync(ctx, d)
	if o.ReclaimInterval == 0 {
		o.ReclaimInterval = reclaimEvery
	}
	if o.ReclaimInterval > 0 {
		d.background.Add(1)
		go d.reclaimLoop(o.ReclaimInterval)
	}
	return d, nil
}

// hasParam reports whether a URL or DSN sets name (pgxpool reads pool_* itself).
func hasParam(url, name string) bool {
	for i := 0; i+len(name) <= len(url); i++ {
		if url[i:i+len(name)] == name && (i == 0 || url[i-1] == '?' || url[i-1] == '&' || url[i-1] == ' ') {
			return true
		}
	}
	return false
}

// Traits implements store.Traits: shared by every front end, range deletes cost per key.
func (d *DB) Traits() store.Traits {
	return store.Traits{Shared: true, RangeDeleteChunk: RangeDeleteChunk}
}

// Ping reports whether the database answers (for readiness checks).
func (d *DB) Ping(ctx context.Context) error {
	if !d.enter() {
		return store.ErrClosed
	}
	defer d.inflight.RUnlock()
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	d.nest.check(d.nest.owner(), "ping")
	if err := d.pool.Ping(ctx); err != nil {
		return wrap("ping", err)
	}
	return nil
}

// Pool exposes the connection pool (tools that read the database directly: migrate).
func (d *DB) Pool() *pgxpool.Pool { return d.pool }

func (d *DB) enter() bool {
	d.inflight.RLock()
	if d.closed.Load() {
		d.inflight.RUnlock()
		return false
	}
	return true
}

// Close waits for in-flight calls and open snapshots, then closes the pool. Safe to call
// twice.
func (d *DB) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	close(d.stop)
	d.background.Wait()
	d.inflight.Lock()
	defer d.inflight.Unlock()
	d.snapshots.Wait()
	d.pool.Close()
	return nil
}

// readAttempts bounds retries of reads that failed on a dead connection (after a database
// restart every pooled connection is dead; the first failure resets the pool).
const readAttempts = 3

// retryRead runs a side-effect-free call, again on a fresh connection when the connection
// failed.
func (d *DB) retryRead(ctx context.Context, call func() error) error {
	var err error
	for attempt := range readAttempts {
		if err = call(); err == nil || classify(err) != kindUnavailable || ctx.Err() != nil {
			return err
		}
		d.connectionLost(err)
		if !sleep(ctx, backoff(attempt)) {
			return err
		}
	}
	return err
}

// connectionLost drops every pooled connection: after a restart of the database they are
// all dead, and each would fail one request.
func (d *DB) connectionLost(err error) {
	d.log.Warn("postgres connection lost; resetting the pool", "err", err)
	d.pool.Reset()
}

func backoff(attempt int) time.Duration {
	base := time.Millisecond << min(attempt, 6) // 1 ms .. 64 ms
	return base/2 + rand.N(base)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// nonNil maps nil to an empty slice: pgx sends a nil []byte as NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Get implements store.Store.
func (d *DB) Get(ctx context.Context, key []byte) ([]byte, error) {
	if !d.enter() {
		return nil, store.ErrClosed
	}
	defer d.inflight.RUnlock()
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	d.nest.check(d.nest.owner(), "get")
	var v [1][]byte
	var found [1]bool
	if err := d.pointRead(ctx, [][]byte{nonNil(key)}, v[:], found[:]); err != nil {
		return nil, wrap("get", err)
	}
	if !found[0] {
		return nil, store.ErrNotFound
	}
	return v[0], nil
}

// GetMany implements store.GetMany with one statement, which reads one snapshot. Up to
// maxPointLookup keys it is one primary-key lookup per key joined by UNION ALL, each row
// naming its key by position (lookupStmts); more keys are one k = ANY($1).
//
// Why not always ANY: whether PostgreSQL reuses a generic plan for a prepared k = ANY($1)
// depends on the table's statistics when a connection first runs it (the generic plan is
// costed for an array of unknown length): front ends started against a table of 220,000 rows
// re-planned 28% of their point gets, at about 26 µs of database CPU each, where a cached plan
// costs nothing. The UNION ALL form's generic plan (plain index scans) always costs what a
// custom one does, so it is always reused; with cached plans both forms cost the same.
func (d *DB) GetMany(ctx context.Context, keys [][]byte, fn func(i int, value []byte, found bool) error) error {
	if !d.enter() {
		return store.ErrClosed
	}
	defer d.inflight.RUnlock()
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	vals := make([][]byte, len(keys))
	found := make([]bool, len(keys))
	d.nest.check(d.nest.owner(), "get many")
	var err error
	if len(keys) <= maxPointLookup {
		err = d.pointRead(ctx, keys, vals, found)
	} else {
		err = d.lookupAny(ctx, keys, vals, found)
	}
	if err != nil {
		return wrap("get", err)
	}
	for i := range keys {
		if err := fn(i, vals[i], found[i]); err != nil {
			return err
		}
	}
	return nil
}

// maxPointLookup is the most keys GetMany reads with one UNION ALL of point lookups.
const maxPointLookup = 8

// lookupStmts[n] reads n keys ($1..$n), each row (i, v) naming its key by position i. Reads
// gathered from several calls (coalesce.go) use up to maxBatchKeys.
var lookupStmts = func() [maxBatchKeys + 1]string {
	var st [maxBatchKeys + 1]string
	for n := 1; n <= maxBatchKeys; n++ {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(" UNION ALL ")
			}
			fmt.Fprintf(&b, "SELECT %d::INT4, v FROM tablo_kv WHERE k = $%d", i, i+1)
		}
		st[n] = b.String()
	}
	return st
}()

// lookupPositional reads at most maxBatchKeys keys with one statement (lookupStmts).
func (d *DB) lookupPositional(ctx context.Context, keys [][]byte, vals [][]byte, found []bool) error {
	if len(keys) == 0 {
		return nil
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = nonNil(k)
	}
	return d.retryRead(ctx, func() error {
		clear(vals)
		clear(found)
		rows, err := d.pool.Query(ctx, lookupStmts[len(keys)], args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			raw := rows.RawValues()
			if len(raw[0]) != 4 {
				rows.Close()
				return fmt.Errorf("postgres: lookup: position of %d bytes", len(raw[0]))
			}
			i := int(binary.BigEndian.Uint32(raw[0]))
			if i >= len(keys) {
				rows.Close()
				return fmt.Errorf("postgres: lookup: position %d of %d keys", i, len(keys))
			}
			vals[i], found[i] = bytes.Clone(nonNil(raw[1])), true
		}
		return rows.Err()
	})
}

// lookupAny is GetMany's read of more than maxPointLookup keys: one k = ANY($1), the rows
// matched to the keys through a map.
func (d *DB) lookupAny(ctx context.Context, keys [][]byte, vals [][]byte, found []bool) error {
	ask := make([][]byte, len(keys))
	index := make(map[string]int, len(keys))
	for i, k := range keys {
		ask[i] = nonNil(k)
		index[string(k)] = i
	}
	return d.retryRead(ctx, func() error {
		clear(vals)
		clear(found)
		rows, err := d.pool.Query(ctx, stmtLookup, ask)
		if err != nil {
			return err
		}
		for rows.Next() {
			raw := rows.RawValues()
			if i, ok := index[string(raw[0])]; ok {
				vals[i], found[i] = bytes.Clone(nonNil(raw[1])), true
			}
		}
		return rows.Err()
	})
}

// Scan implements store.Store: a snapshot that begins with its first batch. A scan that
// failed on a dead connection before calling fn is retried on a fresh one.
func (d *DB) Scan(ctx context.Context, start, end []byte, fn func(key, value []byte) (bool, error)) error {
	return d.scan(ctx, start, end, false, 0, fn)
}

// ScanLimit implements store.ScanLimit. Up to maxBatch rows it is one statement outside any
// transaction (one round trip, no BEGIN or COMMIT): a single statement reads one snapshot.
// Larger limits scan in a snapshot, in batches no larger than what is left.
func (d *DB) ScanLimit(ctx context.Context, start, end []byte, limit int, fn func(key, value []byte) (bool, error)) error {
	if limit > maxBatch {
		return d.scan(ctx, start, end, false, limit, fn)
	}
	if !d.enter() {
		return store.ErrClosed
	}
	defer d.inflight.RUnlock()
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	called := false
	var ferr error
	// The rows stream to fn on the connection: it is held until they end.
	owner := d.nest.owner()
	d.nest.acquire(owner, "scan")
	defer d.nest.release(owner)
	err := d.retryRead(ctx, func() error {
		var rows pgx.Rows
		var err error
		if end == nil {
			rows, err = d.pool.Query(ctx, stmtScanFrom, nonNil(start), limit)
		} else {
			rows, err = d.pool.Query(ctx, stmtScan, nonNil(start), nonNil(end), limit)
		}
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			called = true
			raw := rows.RawValues()
			more, err := fn(raw[0], nonNil(raw[1]))
			if err != nil || !more {
				ferr = err
				return nil
			}
		}
		if err := rows.Err(); err != nil && called {
			// Rows were delivered: not retried (the caller saw part of the result).
			ferr = wrap("scan", err)
			return nil
		}
		return rows.Err()
	})
	if ferr != nil {
		return ferr
	}
	if err != nil {
		return wrap("scan", err)
	}
	return nil
}

// ScanKeys is Scan without the values (store.ScanKeys): only the keys cross the network.
func (d *DB) ScanKeys(ctx context.Context, start, end []byte, fn func(key []byte) (bool, error)) error {
	return d.scan(ctx, start, end, true, 0, func(k, _ []byte) (bool, error) { return fn(k) })
}

func (d *DB) scan(ctx context.Context, start, end []byte, keysOnly bool, limit int, fn func(key, value []byte) (bool, error)) error {
	if !d.enter() {
		return store.ErrClosed
	}
	defer d.inflight.RUnlock()
	for attempt := 0; ; attempt++ {
		called := false
		err := d.scanOnce(ctx, start, end, keysOnly, limit, func(k, v []byte) (bool, error) {
			called = true
			return fn(k, v)
		})
		if err == nil || called || attempt+1 >= readAttempts || classify(err) != kindUnavailable || ctx.Err() != nil {
			return err
		}
		d.connectionLost(err)
		if !sleep(ctx, backoff(attempt)) {
			return err
		}
	}
}

func (d *DB) scanOnce(ctx context.Context, start, end []byte, keysOnly bool, limit int, fn func(key, value []byte) (bool, error)) error {
	s, err := d.openSnapshot(ctx, false)
	if err != nil {
		return err
	}
	err = s.scan(ctx, start, end, keysOnly, limit, fn)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}
