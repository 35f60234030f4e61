package postgres

import (
	"bytes"
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tablo/tablo/internal/store"
)

// Scan batches: the first is small (most scans stop early: a page, a partition), later ones
// grow so that a table scan costs few round trips. Rows stream to the callback as they
// arrive; a callback that stops early leaves at most the rest of one batch to drain.
const (
	firstBatch = 128
	maxBatch   = 4096
)

// snapshot is a store.Snapshot: one connection in a REPEATABLE READ READ ONLY transaction,
// or, while it is a Txn's snapshot and the Txn's function runs, the Txn's own transaction.
type snapshot struct {
	d      *DB
	tx     *txn // set: reads go through the Txn (txn.Snapshot); conn is nil
	conn   *pgxpool.Conn
	begun  bool // BEGIN was sent (with the first statement)
	public bool // counted in d.snapshots
	closed bool
	val    []byte // Lookup's last value
	owner  uint64 // the goroutine that acquired conn (nesting.go)
}

// openSnapshot takes a connection. With pin, the snapshot is taken now (a statement runs);
// otherwise it is taken by the first statement, which carries the BEGIN.
func (d *DB) openSnapshot(ctx context.Context, pin bool) (*snapshot, error) {
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	owner := d.nest.owner()
	d.nest.acquire(owner, "snapshot")
	conn, err := d.pool.Acquire(cctx)
	if err != nil {
		d.nest.release(owner)
		return nil, wrap("snapshot", err)
	}
	s := &snapshot{d: d, conn: conn, owner: owner}
	if pin {
		// PostgreSQL takes a transaction's snapshot at its first statement, not at BEGIN.
		if _, err := s.query(cctx, stmtGet, func(pgx.Rows) error { return nil }, []byte{}); err != nil {
			conn.Release()
			d.nest.release(owner)
			return nil, err
		}
	}
	return s, nil
}

// Snapshot implements store.Store.
func (d *DB) Snapshot(ctx context.Context) (store.Snapshot, error) {
	if !d.enter() {
		return nil, store.ErrClosed
	}
	defer d.inflight.RUnlock()
	var s *snapshot
	err := d.retryRead(ctx, func() error {
		var err error
		s, err = d.openSnapshot(ctx, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.public = true
	d.snapshots.Add(1)
	return s, nil
}

// query runs one statement in the snapshot's transaction (beginning it if needed) and hands
// its rows to read; it returns how many rows read saw.
func (s *snapshot) query(ctx context.Context, sql string, read func(pgx.Rows) error, args ...any) (int, error) {
	if s.tx != nil {
		if err := s.tx.check(); err != nil {
			return 0, err // its Update failed or returned without it: nothing to read in
		}
		n := 0
		err := s.tx.query(sql, func(rows pgx.Rows) error { n++; return read(rows) }, args...)
		return n, err
	}
	var rows pgx.Rows
	var br pgx.BatchResults
	if !s.begun {
		b := &pgx.Batch{}
		b.Queue(stmtBeginRead)
		b.Queue(sql, args...)
		br = s.conn.SendBatch(ctx, b)
		if _, err := br.Exec(); err != nil {
			br.Close()
			return 0, wrap("begin snapshot", err)
		}
		s.begun = true
		var err error
		if rows, err = br.Query(); err != nil {
			br.Close()
			return 0, wrap("query", err)
		}
	} else {
		var err error
		if rows, err = s.conn.Query(ctx, sql, args...); err != nil {
			return 0, wrap("query", err)
		}
	}
	n := 0
	var rerr error
	for rows.Next() {
		n++
		if rerr = read(rows); rerr != nil {
			break
		}
	}
	rows.Close()
	err := rows.Err()
	if br != nil {
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}
	if rerr != nil {
		return n, rerr // the caller's own error, as it is
	}
	if err != nil {
		return n, wrap("query", err)
	}
	return n, nil
}

// Scan implements store.Snapshot.
func (s *snapshot) Scan(ctx context.Context, start, end []byte, fn func(key, value []byte) (bool, error)) error {
	return s.scan(ctx, start, end, false, 0, fn)
}

// scan is Scan; with limit > 0 it reads at most limit rows (batches sized to what is left);
// with keysOnly the statements select only the keys, and fn gets nil values.
func (s *snapshot) scan(ctx context.Context, start, end []byte, keysOnly bool, limit int, fn func(key, value []byte) (bool, error)) error {
	if s.closed {
		return store.ErrClosed
	}
	from := nonNil(start)
	var next []byte // the key after the last one seen
	stopped := false
	batch := firstBatch
	if limit > 0 {
		batch = min(limit, maxBatch)
	}
	for ; ; batch = min(batch*4, maxBatch) {
		if limit > 0 {
			batch = min(batch, limit)
		}
		cctx, cancel := context.WithTimeout(ctx, s.d.timeout)
		read := func(rows pgx.Rows) error {
			raw := rows.RawValues()
			var v []byte
			if !keysOnly {
				v = raw[1]
			}
			more, err := fn(raw[0], v)
			if err != nil {
				return err
			}
			next = append(append(next[:0], raw[0]...), 0) // k || 0x00: the next key in byte order
			if !more {
				stopped = true
				return errStop
			}
			return nil
		}
		var n int
		var err error
		sqlFrom, sqlRange := stmtScanFrom, stmtScan
		if keysOnly {
			sqlFrom, sqlRange = stmtScanKeysFrom, stmtScanKeys
		}
		if end == nil {
			n, err = s.query(cctx, sqlFrom, read, from, batch)
		} else {
			n, err = s.query(cctx, sqlRange, read, from, nonNil(end), batch)
		}
		cancel()
		if errors.Is(err, errStop) || (err == nil && stopped) {
			return nil
		}
		if err != nil {
			return err
		}
		if n < batch {
			return nil
		}
		if limit > 0 {
			if limit -= n; limit == 0 {
				return nil
			}
		}
		from = bytes.Clone(next)
	}
}

// errStop ends a scan's row loop when the callback asks to stop.
var errStop = errors.New("postgres: stop")

// Lookup implements store.Snapshot.
func (s *snapshot) Lookup(key []byte) ([]byte, error) {
	if s.closed {
		return nil, store.ErrClosed
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.d.timeout)
	defer cancel()
	n, err := s.query(ctx, stmtGet, func(rows pgx.Rows) error {
		s.val = append(s.val[:0], rows.RawValues()[0]...)
		return nil
	}, nonNil(key))
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, store.ErrNotFound
	}
	return s.val, nil
}

// Close implements store.Snapshot: ends the transaction and returns the connection.
func (s *snapshot) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	defer func() {
		if s.public {
			s.d.snapshots.Done()
		}
	}()
	if s.tx != nil {
		return nil // the Txn's transaction is the Update's to end
	}
	var err error
	if s.begun {
		ctx, cancel := context.WithTimeout(context.Background(), s.d.timeout)
		_, err = s.conn.Exec(ctx, stmtCommit)
		cancel()
	}
	// A connection left inside a transaction (the COMMIT failed) is closed by the pool.
	s.conn.Release()
	s.d.nest.release(s.owner)
	if err != nil {
		return wrap("end snapshot", err)
	}
	return nil
}
