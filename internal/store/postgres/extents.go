package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tablo/tablo/internal/store"
)

// Extents (bulk bytes: Blob data) as rows, in the same portable SQL as the key space.
//
// Layout (schema step 2):
//
//	tablo_extents       (id BIGINT PRIMARY KEY, state SMALLINT, size BIGINT, touched TIMESTAMPTZ)
//	tablo_extent_chunks (id BIGINT, n INT, data BYTEA, PRIMARY KEY (id, n))
//
// An extent's bytes are chunk rows of chunkSize bytes (the last one shorter), numbered from
// 0. Ids come from the sequence tablo_extent_ids, so they are unique across every front end
// and never reused. The catalog row says where the extent is in its life:
//
//	writing   → committed → deleting → (gone)
//	writing   → deleting  → (gone)        (aborted, or abandoned by a front end that died)
//
// Writing streams: a writer holds one chunk in memory and sends it as one autocommitted
// statement that also touches the catalog row (touched = now(), in the database's clock) and
// inserts the chunk only if the row is still "writing". Commit flips the row to committed with
// its size; every chunk was already durable, so the flip is the moment the extent exists.
// Only committed extents are read or listed.
//
// Deleting is cheap on the request path and never leaves orphans: the rows are first marked
// deleting (one statement: from then on the extent is gone for readers and lists), then the
// chunks are deleted in statements of deleteBatch chunks, then the catalog row. A front end
// killed half way leaves a row marked deleting, which the reclaimer finishes.
//
// The reclaimer (every reclaimEvery, on every front end, in the background) finishes rows
// marked deleting that nobody has touched for a while and deletes extents whose writer
// stopped touching them more than AbandonAfter ago (a killed front end). Claiming an
// abandoned extent is one conditional statement (state = writing AND touched < now() - age),
// and a live writer's chunk statement is conditional on state = writing: the database orders
// the two on the row, so either the writer touched it first (and the claim finds it fresh),
// or the claim won and the writer's next chunk or Commit fails. No front end deletes what
// another is still writing.
//
// Space: PostgreSQL keeps deleted rows until (auto)vacuum makes their space reusable by later
// writes to the same tables; CockroachDB and YugabyteDB drop them after their MVCC history
// retention. Neither needs a stop-the-world pass.

// chunkSize is the bytes of one chunk row: large enough that a statement per chunk costs
// little beside moving its bytes, small enough for a distributed database's row size advice.
const chunkSize = 1 << 20

// deleteBatch bounds the chunks one DELETE removes (64 MiB of rows: tens of milliseconds).
const deleteBatch = 64

// listBatch is the catalog rows ListExtents reads per statement.
const listBatch = 1000

// reclaimEvery is how often each front end looks for unfinished extents (by default); deletingAge is how
// long a row marked deleting is left to the front end that marked it before anyone else
// finishes the job.
const (
	reclaimEvery = time.Minute
	deletingAge  = time.Minute
)

// DefaultAbandonAfter is how long an extent being written may go untouched (no chunk written)
// before any front end may delete it as abandoned. Its writer, if it is still alive, then
// fails at its next chunk or at Commit: the upload fails rather than loses bytes.
const DefaultAbandonAfter = 15 * time.Minute

// Extent states.
const (
	stateWriting   = 0
	stateCommitted = 1
	stateDeleting  = 2
)

const (
	stmtExtentNew = `INSERT INTO tablo_extents (id, state, size, touched) VALUES (nextval('tablo_extent_ids'), 0, 0, now()) RETURNING id`
	// One statement, so one transaction: the touch and the chunk commit together, and the
	// chunk is written only while the extent is still being written.
	stmtExtentChunk = `WITH live AS (UPDATE tablo_extents SET touched = now(), size = $4 WHERE id = $1 AND state = 0 RETURNING id) ` +
		`INSERT INTO tablo_extent_chunks (id, n, data) SELECT id, $2::INT, $3::BYTEA FROM live ON CONFLICT (id, n) DO UPDATE SET data = excluded.data`
	stmtExtentCommit   = `UPDATE tablo_extents SET state = 1, size = $2, touched = now() WHERE id = $1 AND state = 0`
	stmtExtentState    = `SELECT state, size FROM tablo_extents WHERE id = $1`
	stmtExtentAbort    = `UPDATE tablo_extents SET state = 2, touched = now() WHERE id = $1 AND state = 0 RETURNING size`
	stmtExtentSize     = `SELECT size FROM tablo_extents WHERE id = $1 AND state = 1`
	stmtExtentRead     = `SELECT substring(data FROM $3::INT FOR $4::INT) FROM tablo_extent_chunks WHERE id = $1 AND n = $2`
	stmtExtentList     = `SELECT id, size FROM tablo_extents WHERE id > $1 AND state = 1 ORDER BY id LIMIT $2`
	stmtExtentMark     = `UPDATE tablo_extents SET state = 2, touched = now() WHERE id = ANY($1) AND state = 1 RETURNING id, size`
	stmtExtentChunkDel = `DELETE FROM tablo_extent_chunks WHERE id = $1 AND n < $2`
	stmtExtentDrop     = `DELETE FROM tablo_extents WHERE id = $1 AND state = 2`
	stmtExtentTodo     = `SELECT id FROM tablo_extents WHERE state <> 1 AND id > $1 ORDER BY id LIMIT $2`
	stmtExtentClaim    = `UPDATE tablo_extents SET state = 2, touched = now() WHERE id = $1 AND ` +
		`((state = 0 AND touched < now() - $2::INTERVAL) OR (state = 2 AND touched < now() - $3::INTERVAL)) RETURNING size`
)

// Extents implements store.Store.
func (d *DB) Extents() store.Extents { return extents{d} }

type extents struct{ d *DB }

// exec runs one statement on a pooled connection within the call timeout.
func (d *DB) exec(ctx context.Context, op, sql string, args ...any) (int64, error) {
	if !d.enter() {
		return 0, store.ErrClosed
	}
	defer d.inflight.RUnlock()
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	tag, err := d.pool.Exec(ctx, sql, args...)
	if err != nil {
		return 0, wrap(op, err)
	}
	return tag.RowsAffected(), nil
}

// idempotent runs a statement that may safely run twice, again on a fresh connection when
// the connection failed (its outcome was then unknown).
func (d *DB) idempotent(ctx context.Context, op, sql string, args ...any) (int64, error) {
	var n int64
	err := d.retryRead(ctx, func() error {
		var err error
		n, err = d.exec(ctx, op, sql, args...)
		return err
	})
	return n, err
}

func (e extents) NewExtent(ctx context.Context) (store.ExtentWriter, error) {
	d := e.d
	if !d.enter() {
		return nil, store.ErrClosed
	}
	defer d.inflight.RUnlock()
	qctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	var id int64
	if err := d.pool.QueryRow(qctx, stmtExtentNew).Scan(&id); err != nil {
		return nil, wrap("new extent", err)
	}
	return &extentWriter{d: d, ctx: context.WithoutCancel(ctx), id: uint64(id), buf: make([]byte, 0, chunkSize)}, nil
}

// extentWriter buffers one chunk and writes each full one as it fills.
type extentWriter struct {
	d    *DB
	ctx  context.Context // the caller's values, not its cancellation (Abort must still run)
	id   uint64
	buf  []byte
	n    int32 // the next chunk's number
	size int64 // bytes in written chunks
	err  error
	done bool
}

func (w *extentWriter) ID() uint64 { return w.id }

func (w *extentWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.done {
		return 0, errors.New("postgres: write to a finished extent")
	}
	written := 0
	for len(p) > 0 {
		k := min(len(p), chunkSize-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p, written = p[k:], written+k
		if len(w.buf) == chunkSize {
			if err := w.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// flush writes the buffered chunk (idempotent: a retry after a lost connection rewrites the
// same row).
func (w *extentWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	size := w.size + int64(len(w.buf))
	n, err := w.d.idempotent(w.ctx, "write extent", stmtExtentChunk, int64(w.id), w.n, w.buf, size)
	if err == nil && n == 0 {
		err = fmt.Errorf("postgres: extent %d was reclaimed while being written (untouched longer than the abandon age)", w.id)
	}
	if err != nil {
		w.err = err
		return err
	}
	w.n++
	w.size = size
	w.buf = w.buf[:0]
	return nil
}

// Commit writes the last chunk and marks the extent committed: every chunk statement was
// committed before, so the extent is durable once this one is.
func (w *extentWriter) Commit() (uint64, error) {
	if w.done {
		return 0, errors.New("postgres: extent already finished")
	}
	if err := w.flush(); err != nil {
		w.Abort()
		return 0, err
	}
	w.done = true
	n, err := w.d.idempotent(w.ctx, "commit extent", stmtExtentCommit, int64(w.id), w.size)
	if err == nil && n == 0 {
		// Either a retry of a commit whose answer was lost (then it is committed with our
		// size), or the extent was reclaimed as abandoned.
		var state int16
		var size int64
		qerr := w.d.retryRead(w.ctx, func() error {
			return w.d.pool.QueryRow(w.ctx, stmtExtentState, int64(w.id)).Scan(&state, &size)
		})
		if qerr != nil || state != stateCommitted || size != w.size {
			err = fmt.Errorf("postgres: extent %d was reclaimed before its commit", w.id)
		}
	}
	if err != nil {
		w.done = false
		w.Abort()
		return 0, err
	}
	w.buf = nil
	return w.id, nil
}

// Abort discards the extent now; whatever it cannot delete (the database is unreachable) the
// reclaimer deletes once the extent's touch is older than the abandon age.
func (w *extentWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.buf = nil
	ctx, cancel := context.WithTimeout(w.ctx, w.d.timeout)
	defer cancel()
	if !w.d.enter() {
		return
	}
	var size int64
	err := w.d.pool.QueryRow(ctx, stmtExtentAbort, int64(w.id)).Scan(&size)
	w.d.inflight.RUnlock()
	if err != nil {
		return
	}
	_ = w.d.dropExtent(ctx, w.id, size)
}

// dropExtent deletes the chunks of an extent marked deleting, a bounded batch per statement,
// then its row.
func (d *DB) dropExtent(ctx context.Context, id uint64, size int64) error {
	chunks := (size + chunkSize - 1) / chunkSize
	for upto := int64(deleteBatch); ; upto += deleteBatch {
		if _, err := d.idempotent(ctx, "delete extent", stmtExtentChunkDel, int64(id), upto); err != nil {
			return err
		}
		if upto >= chunks {
			break
		}
	}
	_, err := d.idempotent(ctx, "delete extent", stmtExtentDrop, int64(id))
	return err
}

func (e extents) ReadExtent(ctx context.Context, id uint64, off, n int64) (io.ReadCloser, error) {
	d := e.d
	var size int64
	err := d.retryRead(ctx, func() error {
		if !d.enter() {
			return store.ErrClosed
		}
		defer d.inflight.RUnlock()
		qctx, cancel := context.WithTimeout(ctx, d.timeout)
		defer cancel()
		return d.pool.QueryRow(qctx, stmtExtentSize, int64(id)).Scan(&size)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrExtentNotFound
	}
	if err != nil {
		return nil, wrap("read extent", err)
	}
	if off < 0 {
		return nil, fmt.Errorf("postgres: read extent: negative offset %d", off)
	}
	avail := max(0, size-off)
	want := n
	if n < 0 {
		want = avail
	}
	return &extentReader{d: d, ctx: ctx, id: id, pos: off, end: off + min(want, avail), short: want > avail}, nil
}

// extentReader reads a range chunk by chunk, one statement per chunk (no statement stays
// open while the caller consumes bytes, so a slow client never meets the statement timeout),
// holding one chunk in memory.
type extentReader struct {
	d     *DB
	ctx   context.Context
	id    uint64
	pos   int64 // offset in the extent of the next byte to fetch
	end   int64 // end of the bytes the extent has within the range
	short bool  // the range asked for more than the extent has
	buf   []byte
	rd    []byte // unread part of buf
}

func (r *extentReader) Read(p []byte) (int, error) {
	if len(r.rd) == 0 {
		if r.pos >= r.end {
			if r.short {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, io.EOF
		}
		if err := r.fetch(); err != nil {
			return 0, err
		}
	}
	k := copy(p, r.rd)
	r.rd = r.rd[k:]
	return k, nil
}

// fetch reads the part of the chunk at r.pos that the range covers.
func (r *extentReader) fetch() error {
	d := r.d
	chunk := r.pos / chunkSize
	in := r.pos % chunkSize
	length := min(chunkSize-in, r.end-r.pos)
	if r.buf == nil {
		r.buf = make([]byte, 0, min(chunkSize, length))
	}
	found := false
	err := d.retryRead(r.ctx, func() error {
		if !d.enter() {
			return store.ErrClosed
		}
		defer d.inflight.RUnlock()
		ctx, cancel := context.WithTimeout(r.ctx, d.timeout)
		defer cancel()
		rows, err := d.pool.Query(ctx, stmtExtentRead, int64(r.id), int32(chunk), int32(in+1), int32(length))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			found = true
			r.buf = append(r.buf[:0], rows.RawValues()[0]...)
		}
		return rows.Err()
	})
	if err != nil {
		return wrap("read extent", err)
	}
	if !found || int64(len(r.buf)) != length {
		// Deleted while being read (the sweep found it unreferenced meanwhile).
		return fmt.Errorf("postgres: extent %d chunk %d: %w", r.id, chunk, store.ErrExtentNotFound)
	}
	r.rd = r.buf
	r.pos += length
	return nil
}

func (r *extentReader) Close() error {
	r.buf, r.rd = nil, nil
	return nil
}

func (e extents) DeleteExtents(ctx context.Context, ids []uint64) error {
	d := e.d
	for len(ids) > 0 {
		batch := ids[:min(len(ids), listBatch)]
		ids = ids[len(batch):]
		ask := make([]int64, len(batch))
		for i, id := range batch {
			ask[i] = int64(id)
		}
		var marked []struct{ id, size int64 }
		err := d.retryRead(ctx, func() error {
			marked = marked[:0]
			if !d.enter() {
				return store.ErrClosed
			}
			defer d.inflight.RUnlock()
			qctx, cancel := context.WithTimeout(ctx, d.timeout)
			defer cancel()
			rows, err := d.pool.Query(qctx, stmtExtentMark, ask)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var m struct{ id, size int64 }
				if err := rows.Scan(&m.id, &m.size); err != nil {
					return err
				}
				marked = append(marked, m)
			}
			return rows.Err()
		})
		if err != nil {
			return wrap("delete extents", err)
		}
		// Marked: gone for readers and lists. A failure from here on leaves rows marked
		// deleting, which the reclaimer finishes.
		for _, m := range marked {
			if err := d.dropExtent(ctx, uint64(m.id), m.size); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e extents) ListExtents(ctx context.Context, fn func(id uint64, size int64) error) error {
	d := e.d
	type row struct{ id, size int64 }
	batch := make([]row, 0, listBatch)
	var after int64
	for {
		err := d.retryRead(ctx, func() error {
			batch = batch[:0]
			if !d.enter() {
				return store.ErrClosed
			}
			defer d.inflight.RUnlock()
			qctx, cancel := context.WithTimeout(ctx, d.timeout)
			defer cancel()
			rows, err := d.pool.Query(qctx, stmtExtentList, after, listBatch)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var r row
				if err := rows.Scan(&r.id, &r.size); err != nil {
					return err
				}
				batch = append(batch, r)
			}
			return rows.Err()
		})
		if err != nil {
			return wrap("list extents", err)
		}
		for _, r := range batch {
			if err := fn(uint64(r.id), r.size); err != nil {
				return err
			}
		}
		if len(batch) < listBatch {
			return nil
		}
		after = batch[len(batch)-1].id
	}
}

// ReclaimExtents deletes the extents that are unfinished and left alone: being written but
// untouched for longer than the abandon age (their front end died), or marked deleting but
// untouched for a minute (their front end died half way through the deletion). It returns how
// many it deleted. Each front end runs it in the background; running it on several at once is
// safe (each extent is claimed by one conditional statement).
func (d *DB) ReclaimExtents(ctx context.Context) (int, error) {
	var after int64
	deleted := 0
	for {
		var todo []int64
		err := d.retryRead(ctx, func() error {
			todo = todo[:0]
			if !d.enter() {
				return store.ErrClosed
			}
			defer d.inflight.RUnlock()
			qctx, cancel := context.WithTimeout(ctx, d.timeout)
			defer cancel()
			rows, err := d.pool.Query(qctx, stmtExtentTodo, after, listBatch)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					return err
				}
				todo = append(todo, id)
			}
			return rows.Err()
		})
		if err != nil {
			return deleted, wrap("reclaim extents", err)
		}
		for _, id := range todo {
			var size int64
			err := d.retryRead(ctx, func() error {
				if !d.enter() {
					return store.ErrClosed
				}
				defer d.inflight.RUnlock()
				qctx, cancel := context.WithTimeout(ctx, d.timeout)
				defer cancel()
				return d.pool.QueryRow(qctx, stmtExtentClaim, id, d.abandonAfter, deletingAge).Scan(&size)
			})
			if errors.Is(err, pgx.ErrNoRows) {
				continue // alive, or finished meanwhile
			}
			if err != nil {
				return deleted, wrap("reclaim extents", err)
			}
			if err := d.dropExtent(ctx, uint64(id), size); err != nil {
				return deleted, err
			}
			deleted++
		}
		if len(todo) < listBatch {
			return deleted, nil
		}
		after = todo[len(todo)-1]
	}
}

// reclaimLoop runs ReclaimExtents at start and every interval until Close.
func (d *DB) reclaimLoop(interval time.Duration) {
	defer d.background.Done()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-d.stop
		cancel()
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := d.ReclaimExtents(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("postgres: reclaiming unfinished extents", "err", err)
		} else if n > 0 {
			d.log.Info("postgres: reclaimed unfinished extents", "extents", n)
		}
		select {
		case <-d.stop:
			return
		case <-t.C:
		}
	}
}
