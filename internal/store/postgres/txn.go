package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tablo/tablo/internal/store"
)

// Retry budget of an Update (and of a guarded write, whose one statement is its commit):
// serialization failures are normal under contention and retried until the call's deadline
// (at most conflictAttempts times); a connection lost or never had before the COMMIT was
// sent is retried a few times on fresh connections (nothing was committed).
const (
	conflictAttempts = 100
	connAttempts     = 3
)

// Update implements store.Store.
func (d *DB) Update(ctx context.Context, locks []store.Lock, fn func(tx store.Txn) error) error {
	if !d.enter() {
		return store.ErrClosed
	}
	defer d.inflight.RUnlock()
	release := d.locks.Acquire(locks)
	defer release()
	ctx, cancel := context.WithTimeout(ctx, 2*d.timeout)
	defer cancel()
	lost := 0
	for attempt := 0; ; attempt++ {
		err := d.updateOnce(ctx, fn)
		if err == nil {
			return nil
		}
		var r *retry
		if !errors.As(err, &r) {
			return err
		}
		switch {
		case r.lost && lost < connAttempts:
			lost++
			d.connectionLost(r.err)
		case !r.lost && attempt < conflictAttempts:
		default:
			return r.err
		}
		if !sleep(ctx, backoff(attempt)) {
			return r.err
		}
	}
}

// InsertIf implements store.GuardedInserter with one statement in its own READ COMMITTED
// transaction (one round trip, committed durably at its end):
//
//	INSERT INTO tablo_kv (k, v) SELECT $1, $2
//	WHERE NOT EXISTS (SELECT 1 FROM tablo_kv WHERE k = $1)
//	AND EXISTS (SELECT 1 FROM tablo_kv WHERE k = $3 AND v = $4 FOR SHARE)
//
// Why this is as safe as a serializable Update: the statement reads only the guard, and locks
// it. A transaction that deletes or changes the guard (Delete Table, in a serializable Update)
// either committed before the statement looked (the guard is gone: nothing is inserted) or
// waits for the lock until the insert has committed (the insert comes first, and the deleter's
// later work, such as purging the table, sees it). Two writers of the key are ordered by the
// primary key: the later INSERT finds the row (NOT EXISTS), or, when both looked before
// either committed, fails on the unique index (23505: reported as not inserted), and a
// serializable Update that read the key as absent and then writes it fails with a
// serialization error and re-runs. No predicate locks are taken, so concurrent inserts next
// to each other never abort each other, as serializable transactions reading neighbouring
// keys would.
//
// Why not ON CONFLICT DO NOTHING: its speculative insertion writes one more WAL record per
// insert and cost the database about a tenth more CPU per insert; the NOT EXISTS probe keeps
// an insert of an existing key (a 409 answer, which applications use as a normal outcome)
// from becoming an error in the database's log. Only two inserts of one key racing each other
// reach the unique index.
func (d *DB) InsertIf(ctx context.Context, locks []store.Lock, key, value, guardKey, guardValue []byte) (bool, error) {
	return d.execGuarded(ctx, locks, "insert", stmtInsertIf, nonNil(key), nonNil(value), nonNil(guardKey), nonNil(guardValue))
}

// WriteIf implements store.GuardedWriter: one statement in its own READ COMMITTED
// transaction (one round trip); an absent key is InsertIf, an existing one
//
//	UPDATE tablo_kv SET v = $2 WHERE k = $1 AND v = $3
//	AND EXISTS (SELECT 1 FROM tablo_kv WHERE k = $4 AND v = $5)
//	DELETE FROM tablo_kv WHERE k = $1 AND v = $2
//	AND EXISTS (SELECT 1 FROM tablo_kv WHERE k = $3 AND v = $4)
//
// Why a caller's read-modify-write is then serializable: the statement locks the key's row
// and evaluates v = old on its latest committed version (PostgreSQL re-checks the condition
// after waiting for a concurrent writer of the row), so it writes only if no write of the
// key committed since the caller read old, and any later writer waits for it. The value is
// compared whole, not a version in it: a key deleted and written again with another value
// never passes for the one the caller read. A serializable Update that read the key before
// this statement committed and then writes it fails with a serialization error and re-runs
// (PostgreSQL's first-updater-wins).
//
// The guard is read as of the statement's start and, unlike InsertIf's, not locked
// (store.GuardedWriter says why that is enough): a lock taken by every write of a table on
// its one catalog row cost each update two more WAL records (a row lock, and a multixact
// when writers overlap): 4.6-5.0 records per upsert with it, 2.6-3.0 without.
func (d *DB) WriteIf(ctx context.Context, locks []store.Lock, w store.CondWrite) (bool, error) {
	k, gk, gv := nonNil(w.Key), nonNil(w.GuardKey), nonNil(w.GuardValue)
	switch {
	case !w.Exists && w.Delete:
		return false, errors.New("postgres: WriteIf: deleting an absent key")
	case !w.Exists:
		return d.execGuarded(ctx, locks, "insert", stmtInsertIf, k, nonNil(w.Value), gk, gv)
	case w.Delete:
		return d.execGuarded(ctx, locks, "delete", stmtDeleteIf, k, nonNil(w.Old), gk, gv)
	}
	return d.execGuarded(ctx, locks, "update", stmtUpdateIf, k, nonNil(w.Value), nonNil(w.Old), gk, gv)
}

// execGuarded runs one guarded write statement (InsertIf, WriteIf) in its own transaction
// and reports whether it changed a row, retrying deadlocks and connections lost before the
// statement was sent: a connection that could not be had (the database down or
// restarting) sent nothing, like an Update's.
func (d *DB) execGuarded(ctx context.Context, locks []store.Lock, op, sql string, args ...any) (bool, error) {
	if !d.enter() {
		return false, store.ErrClosed
	}
	defer d.inflight.RUnlock()
	release := d.locks.Acquire(locks)
	defer release()
	ctx, cancel := context.WithTimeout(ctx, 2*d.timeout)
	defer cancel()
	owner := d.nest.owner()
	lost := 0
	for attempt := 0; ; attempt++ {
		changed, sent, err := d.guardedOnce(ctx, owner, op, sql, args)
		if err == nil {
			return changed, nil
		}
		if sqlState(err) == "23505" {
			return false, nil // unique_violation: a racing insert of the key won
		}
		// A statement the server refused committed nothing. A lost connection may have
		// committed it, unless it was never sent: no connection, or pgx knows no byte left.
		lostConn := sqlState(err) == "" && classify(err) == kindUnavailable
		unsent := !sent || pgconn.SafeToRetry(err)
		switch {
		case serializationFailure(err) && attempt < conflictAttempts: // a deadlock
		case lostConn && unsent && lost < connAttempts:
			lost++
			d.connectionLost(err)
		case lostConn && !unsent:
			return false, fmt.Errorf("postgres: commit outcome unknown: %w", wrap(op, err))
		default:
			return false, wrap(op, err)
		}
		if !sleep(ctx, backoff(attempt)) {
			return false, wrap(op, err)
		}
	}
}

// guardedOnce is one attempt of execGuarded; sent reports whether the statement was given
// to a connection (false: acquiring one failed).
func (d *DB) guardedOnce(ctx context.Context, owner uint64, op, sql string, args []any) (changed, sent bool, err error) {
	d.nest.acquire(owner, op)
	defer d.nest.release(owner)
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return false, false, err
	}
	defer conn.Release()
	tag, err := conn.Exec(ctx, sql, args...)
	return tag.RowsAffected() == 1, true, err
}

// retry marks a failed attempt that may run again: nothing of it was committed.
type retry struct {
	err  error
	lost bool // the connection failed (else: a serialization failure)
}

func (r *retry) Error() string { return r.err.Error() }

// retryable wraps err as a retry if it is a serialization failure or a lost connection
// known not to have committed.
func retryable(err error, notCommitted bool) error {
	switch {
	case serializationFailure(err):
		return &retry{err: err}
	case classify(err) == kindUnavailable && (notCommitted || pgconn.SafeToRetry(err)):
		return &retry{err: err, lost: true}
	}
	return err
}

func (d *DB) updateOnce(ctx context.Context, fn func(tx store.Txn) error) error {
	owner := d.nest.owner()
	d.nest.acquire(owner, "update")
	defer d.nest.release(owner)
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return retryable(wrap("update", err), true)
	}
	t := &txn{d: d, ctx: ctx, conn: conn, over: map[string]*[]byte{}}
	defer conn.Release() // a connection left inside a transaction is closed by the pool
	ferr := fn(t)
	t.done = true
	if t.err != nil {
		// The transaction failed under fn (which may have returned anything): nothing was
		// committed, and a conflict or lost connection means another attempt.
		if ferr == nil {
			ferr = t.err
		}
		t.rollback()
		if r := retryable(t.err, true); r != t.err {
			return r
		}
		return ferr
	}
	if ferr != nil {
		t.rollback()
		return ferr
	}
	if err := t.detachSnapshots(); err != nil {
		t.rollback()
		return err
	}
	return t.commit()
}

// rollback ends a transaction that will not commit, keeping its connection: a connection
// released inside a transaction (even an aborted one) is closed by the pool, and every
// serialization failure would then cost the database a new backend process.
func (t *txn) rollback() {
	pc := t.conn.Conn().PgConn()
	if !t.begun || pc.IsClosed() || pc.TxStatus() == 'I' {
		return
	}
	if _, err := t.conn.Exec(t.ctx, stmtRollback); err != nil {
		t.conn.Conn().Close(t.ctx) // unknown state: do not reuse
	}
}

// txn buffers writes and reads through them; the database sees them at commit, with the
// COMMIT, in one round trip.
type txn struct {
	d     *DB
	ctx   context.Context
	conn  *pgxpool.Conn
	begun bool  // BEGIN was sent
	done  bool  // fn returned; the Txn must not be used
	err   error // first failure of the transaction; it is doomed
	// over holds the writes since the last range deletion covering them: a value, or nil
	// for a deletion. ranges are the range deletions, in order.
	over   map[string]*[]byte
	ranges []keyRange
	snaps  []*snapshot // from Snapshot, read in this transaction until detached
}

type keyRange struct{ start, end []byte } // end nil: unbounded

func (r keyRange) contains(k []byte) bool {
	return bytes.Compare(k, r.start) >= 0 && (r.end == nil || bytes.Compare(k, r.end) < 0)
}

func (t *txn) check() error {
	if t.done {
		return errors.New("postgres: Txn used after its Update returned")
	}
	return t.err
}

// fail records the transaction's first failure and returns it.
func (t *txn) fail(op string, err error) error {
	if t.err == nil {
		t.err = wrap(op, err)
	}
	return t.err
}

// local answers key from the Txn's own writes: (value, found, known).
func (t *txn) local(key []byte) ([]byte, bool, bool) {
	if p, ok := t.over[string(key)]; ok {
		if *p == nil {
			return nil, false, true
		}
		return *p, true, true
	}
	for _, r := range t.ranges {
		if r.contains(key) {
			return nil, false, true
		}
	}
	return nil, false, false
}

// query runs a statement in the transaction, sending BEGIN with the first one.
func (t *txn) query(sql string, read func(pgx.Rows) error, args ...any) error {
	var rows pgx.Rows
	var br pgx.BatchResults
	var err error
	if !t.begun {
		b := &pgx.Batch{}
		b.Queue(stmtBeginUpdate)
		b.Queue(sql, args...)
		br = t.conn.SendBatch(t.ctx, b)
		if _, err := br.Exec(); err != nil {
			br.Close()
			return t.fail("begin", err)
		}
		t.begun = true
		rows, err = br.Query()
	} else {
		rows, err = t.conn.Query(t.ctx, sql, args...)
	}
	var rerr error // the callback's own error, returned as it is: it does not doom the Txn
	if err == nil {
		for rows.Next() {
			if rerr = read(rows); rerr != nil {
				break
			}
		}
		rows.Close()
		err = rows.Err()
	}
	if br != nil {
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return t.fail("read", err)
	}
	return rerr
}

func (t *txn) Get(key []byte) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if v, found, known := t.local(key); known {
		if !found {
			return nil, store.ErrNotFound
		}
		return bytes.Clone(v), nil
	}
	var v []byte
	found := false
	err := t.query(stmtGet, func(rows pgx.Rows) error {
		found = true
		v = bytes.Clone(rows.RawValues()[0])
		return nil
	}, nonNil(key))
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, store.ErrNotFound
	}
	return nonNil(v), nil
}

func (t *txn) Lookup(keys [][]byte, expect store.Expect, fn func(i int, value []byte, found bool) error) error {
	if err := t.check(); err != nil {
		return err
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			return errors.New("postgres: lookup keys not ascending")
		}
	}
	var ask [][]byte
	for _, k := range keys {
		if _, _, known := t.local(k); !known {
			ask = append(ask, k)
		}
	}
	var got map[string][]byte
	if len(ask) > 0 {
		got = make(map[string][]byte, len(ask))
		read := func(rows pgx.Rows) error {
			raw := rows.RawValues()
			got[string(raw[0])] = bytes.Clone(raw[1])
			return nil
		}
		var err error
		if len(ask) == 1 {
			err = t.query(stmtGet, func(rows pgx.Rows) error {
				got[string(ask[0])] = nonNil(bytes.Clone(rows.RawValues()[0]))
				return nil
			}, nonNil(ask[0]))
		} else {
			err = t.query(stmtLookup, read, ask)
		}
		if err != nil {
			return err
		}
	}
	for i, k := range keys {
		v, found, known := t.local(k)
		if !known {
			v, found = got[string(k)]
		}
		if err := fn(i, v, found); err != nil {
			return err
		}
	}
	return nil
}

func (t *txn) Set(key, value []byte) error {
	if err := t.check(); err != nil {
		return err
	}
	v := append([]byte{}, value...)
	t.over[string(key)] = &v
	return nil
}

func (t *txn) Delete(key []byte) error {
	if err := t.check(); err != nil {
		return err
	}
	var none []byte
	t.over[string(key)] = &none
	return nil
}

func (t *txn) DeleteRange(start, end []byte) error {
	if err := t.check(); err != nil {
		return err
	}
	r := keyRange{start: bytes.Clone(nonNil(start)), end: bytes.Clone(end)}
	for k := range t.over {
		if r.contains([]byte(k)) {
			delete(t.over, k)
		}
	}
	t.ranges = append(t.ranges, r)
	return nil
}

// Snapshot implements store.Txn. While fn runs, the snapshot reads in the Txn's own
// transaction: it sees none of the Txn's writes (they are not sent before the commit), and
// it takes no second connection, which a pool's worth of concurrent Updates would otherwise
// wait for forever while each holds one. A snapshot still open when fn returns moves to a
// connection of its own before the commit (detach).
func (t *txn) Snapshot() (store.Snapshot, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	s := &snapshot{d: t.d, tx: t, public: true}
	t.snaps = append(t.snaps, s)
	t.d.snapshots.Add(1)
	return s, nil
}

// detachSnapshots gives each snapshot of the Txn still open a transaction of its own, taken
// before the commit and while the Update's locks are held, so that it outlives the Update
// as the store.Txn contract says. (Only the column cache keeps a Txn's snapshot, and it is
// off on shared stores; that acquisition is the one place an Update waits for a second
// connection.)
func (t *txn) detachSnapshots() error {
	for _, s := range t.snaps {
		if s.closed || s.tx == nil {
			continue
		}
		own, err := t.d.openSnapshot(t.ctx, true)
		if err != nil {
			return err
		}
		s.tx, s.conn, s.begun, s.owner = nil, own.conn, own.begun, own.owner
	}
	return nil
}

// commit sends the writes with the COMMIT (and the BEGIN, if no read sent it).
func (t *txn) commit() error {
	if len(t.over) == 0 && len(t.ranges) == 0 {
		if !t.begun {
			return nil
		}
		// A transaction that only read still commits: under SERIALIZABLE the commit is
		// where a read that was not serializable is refused.
		if _, err := t.conn.Exec(t.ctx, stmtCommit); err != nil {
			return retryable(wrap("commit", err), false)
		}
		return nil
	}
	b := &pgx.Batch{}
	if !t.begun {
		b.Queue(stmtBeginUpdate)
	}
	for _, r := range t.ranges {
		if r.end == nil {
			b.Queue(stmtDeleteFrom, r.start)
		} else {
			b.Queue(stmtDeleteRange, r.start, r.end)
		}
	}
	keys := make([]string, 0, len(t.over))
	for k := range t.over {
		keys = append(keys, k)
	}
	slices.Sort(keys) // a fixed order: concurrent writers of the same keys lock them alike
	var dels, setK, setV [][]byte
	for _, k := range keys {
		if v := *t.over[k]; v == nil {
			dels = append(dels, []byte(k))
		} else {
			setK = append(setK, []byte(k))
			setV = append(setV, v)
		}
	}
	if len(dels) > 0 {
		b.Queue(stmtDelete, dels)
	}
	switch len(setK) {
	case 0:
	case 1:
		b.Queue(stmtUpsert, setK[0], setV[0])
	default:
		b.Queue(stmtUpsertMany, setK, setV)
	}
	b.Queue(stmtCommit)
	err := t.conn.SendBatch(t.ctx, b).Close()
	if err == nil {
		return nil
	}
	if serializationFailure(err) || sqlState(err) != "" {
		// The server answered: the COMMIT did not run (a failed statement skips the rest
		// of the pipeline) or reported the failure itself.
		t.begun = true
		t.rollback()
		return retryable(wrap("commit", err), true)
	}
	// The connection failed after the COMMIT may have reached the server: the outcome is
	// unknown. Not retried; the client sees a retryable error, as with any timeout.
	return retryable(fmt.Errorf("postgres: commit outcome unknown: %w", wrap("commit", err)), false)
}
