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
// Writing streams: a writer fills one chunk while the previous one is being written, each as
// one autocommitted statement that also touches the catalog row (touched = now(), in the
// database's clock) and inserts the chunk only if the row is still "writing". The first chunk
// creates the row; the last one flips it to committed with its size, in the same statement,
// after every earlier chunk has committed, so that flip is the moment the extent exists,
// whole. Only committed extents are read or listed.
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

// reclaimEvery is how often each front end looks for unfinished extents (by default);
// deletingAge is how long a row marked deleting is left to the front end that marked it before
// anyone else finishes the job (finishing it twice is harmless).
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
	stmtExtentNew = `SELECT nextval('tablo_extent_ids')`
	// Each chunk is one statement, so one transaction: the catalog row's touch (and, with the
	// last chunk, its commit) and the chunk are written together, and a chunk is written only
	// while its extent is still being written. The first chunk creates the row; later ones
	// only update it, so that a row reclaimed meanwhile is never brought back with holes.
	stmtExtentFirst = `INSERT INTO tablo_extents (id, state, size, touched) VALUES ($1, $5::SMALLINT, $4, now()) ` +
		`ON CONFLICT (id) DO UPDATE SET state = excluded.state, size = excluded.size, touched = now() WHERE tablo_extents.state = 0 RETURNING id`
	stmtExtentNext = `UPDATE tablo_extents SET state = $5::SMALLINT, size = $4, touched = now() WHERE id = $1 AND state = 0 RETURNING id`
	chunkInsert    = `INSERT INTO tablo_extent_chunks (id, n, data) SELECT e.id, $2::INT, $3::BYTEA FROM e%s ON CONFLICT (id, n) DO UPDATE SET data = excluded.data`
	// A chunk that is not the last may commit without waiting for its WAL flush: the last
	// chunk's (or Commit's) synchronous commit flushes the log up to itself, so every earlier
	// chunk is durable before Commit returns; a crash before that loses only an uncommitted
	// extent. Used where the database accepts it (PostgreSQL; probed at Open).
	chunkAsync = `, (SELECT set_config('synchronous_commit', 'off', true)) AS cfg`
	// Commit of an empty extent (a non-empty one commits with its last chunk).
	stmtExtentEmpty = `INSERT INTO tablo_extents (id, state, size, touched) VALUES ($1, 1, 0, now()) ` +
		`ON CONFLICT (id) DO UPDATE SET state = 1, size = 0, touched = now() WHERE tablo_extents.state = 0`
	stmtProbeAsync     = `SELECT set_config('synchronous_commit', 'off', true)`
	stmtExtentState    = `SELECT state, size FROM tablo_extents WHERE id = $1`
	stmtExtentAbort    = `UPDATE tablo_extents SET state = 2, touched = now() WHERE id = $1 AND state = 0 RETURNING size`
	stmtExtentOpen     = `SELECT e.size, substring(c.data FROM $3::INT FOR $4::INT) FROM tablo_extents e LEFT JOIN tablo_extent_chunks c ON c.id = e.id AND c.n = $2::INT WHERE e.id = $1 AND e.state = 1`
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

// chunkStmt returns the statement writing chunk n (first: n == 0; async: not the last).
func chunkStmt(first, async bool) string {
	catalog, cfg := stmtExtentNext, ""
	if first {
		catalog = stmtExtentFirst
	}
	if async {
		cfg = chunkAsync
	}
	return "WITH e AS (" + catalog + ") " + fmt.Sprintf(chunkInsert, cfg)
}

var chunkStmts = [2][2]string{
	{chunkStmt(false, false), chunkStmt(false, true)},
	{chunkStmt(true, false), chunkStmt(true, true)},
}

// probeAsync reports whether the database lets a transaction commit without waiting for its
// log flush (PostgreSQL's synchronous_commit; other databases may refuse the setting).
func probeAsync(ctx context.Context, d *DB) bool {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	_, err := d.pool.Exec(ctx, stmtProbeAsync)
	return err == nil
}

func (e extents) NewExtent(ctx context.Context) (store.ExtentWriter, error) {
	d := e.d
	var id int64
	owner := d.nest.owner()
	d.nest.check(owner, "new extent")
	err := d.retryRead(ctx, func() error {
		if !d.enter() {
			return store.ErrClosed
		}
		defer d.inflight.RUnlock()
		qctx, cancel := context.WithTimeout(ctx, d.timeout)
		defer cancel()
		return d.pool.QueryRow(qctx, stmtExtentNew).Scan(&id)
	})
	if err != nil {
		return nil, wrap("new extent", err)
	}
	return &extentWriter{d: d, ctx: context.WithoutCancel(ctx), id: uint64(id), owner: owner}, nil
}

// extentWriter buffers one chunk and writes each full one as it fills, in the background
// while the caller fills the next one (so at most two chunks in memory and one statement in
// flight; chunks reach the database in order). Its catalog row is created with the first
// chunk, so an extent of one chunk costs one statement.
type extentWriter struct {
	d     *DB
	ctx   context.Context // the caller's values, not its cancellation (Abort must still run)
	id    uint64
	buf   []byte
	spare []byte     // the buffer of the chunk in flight, reused once it is written
	fly   chan error // the chunk in flight's outcome (nil: none in flight)
	n     int32      // the next chunk's number
	size  int64      // bytes in chunks handed to the database
	err   error
	done  bool
	owner uint64 // the goroutine that writes (nesting.go): chunk writes are its waits
}

func (w *extentWriter) ID() uint64 { return w.id }

func (w *extentWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.done {
		return 0, errors.New("postgres: write to a finished extent")
	}
	if w.buf == nil && len(p) > 0 {
		w.buf = w.d.chunkBuf()
	}
	written := 0
	for len(p) > 0 {
		// A full chunk is written only when more bytes follow it, so that the last chunk
		// can carry the commit.
		if len(w.buf) == chunkSize {
			if err := w.flushBehind(); err != nil {
				return written, err
			}
		}
		k := min(len(p), chunkSize-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p, written = p[k:], written+k
	}
	return written, nil
}

// wait waits for the chunk in flight and returns the writer's first failure.
func (w *extentWriter) wait() error {
	if w.fly != nil {
		if err := <-w.fly; err != nil && w.err == nil {
			w.err = err
		}
		w.fly = nil
	}
	return w.err
}

// flushBehind starts writing the buffered (full, not last) chunk and swaps buffers.
func (w *extentWriter) flushBehind() error {
	if err := w.wait(); err != nil {
		return err
	}
	buf, n, size := w.buf, w.n, w.size+int64(len(w.buf))
	w.n, w.size = n+1, size
	if w.spare == nil {
		w.spare = w.d.chunkBuf()
	}
	w.buf, w.spare = w.spare[:0], buf
	fly := make(chan error, 1)
	w.fly = fly
	go func() { fly <- w.writeChunk(n, buf, size, false) }()
	return nil
}

// writeChunk writes chunk n, committing the extent with it when last (idempotent: a retry
// after a lost connection rewrites the same row).
func (w *extentWriter) writeChunk(n int32, buf []byte, size int64, last bool) error {
	state := int16(stateWriting)
	if last {
		state = stateCommitted
	}
	stmt := chunkStmts[b2i(n == 0)][b2i(!last && w.d.asyncChunks)]
	w.d.nest.check(w.owner, "write extent")
	rows, err := w.d.idempotent(w.ctx, "write extent", stmt, int64(w.id), n, buf, size, state)
	if err == nil && rows == 0 {
		err = w.lost(last, size)
	}
	return err
}

// chunkBuf returns an empty buffer of chunkSize capacity: small bodies are common (a Put Block
// of a few KiB), and a fresh megabyte for each would be allocated and zeroed each time.
func (d *DB) chunkBuf() []byte {
	if b, ok := d.chunkPool.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, chunkSize)
}

// release gives the writer's buffers back (no chunk is in flight).
func (w *extentWriter) release() {
	for _, b := range [][]byte{w.buf, w.spare} {
		if cap(b) == chunkSize {
			w.d.chunkPool.Put(&b)
		}
	}
	w.buf, w.spare = nil, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lost explains a chunk or commit statement that changed no row: either a retry of a commit
// whose answer was lost (the extent is then committed with our size), or the extent was
// reclaimed as abandoned.
func (w *extentWriter) lost(last bool, size int64) error {
	if last {
		var state int16
		var got int64
		err := w.d.retryRead(w.ctx, func() error {
			return w.d.pool.QueryRow(w.ctx, stmtExtentState, int64(w.id)).Scan(&state, &got)
		})
		if err == nil && state == stateCommitted && got == size {
			return nil
		}
	}
	return fmt.Errorf("postgres: extent %d was reclaimed while being written (untouched longer than the abandon age)", w.id)
}

// Commit writes the last chunk together with the extent's commit: every earlier chunk was
// written before, so the extent is durable and whole once this statement has committed.
func (w *extentWriter) Commit() (uint64, error) {
	if w.done {
		return 0, errors.New("postgres: extent already finished")
	}
	err := w.wait()
	if err == nil && len(w.buf) > 0 {
		err = w.writeChunk(w.n, w.buf, w.size+int64(len(w.buf)), true)
	} else if err == nil {
		// No bytes at all: a full chunk is written only once a byte follows it, so the
		// buffer is empty at Commit only when nothing was written.
		var n int64
		w.d.nest.check(w.owner, "commit extent")
		n, err = w.d.idempotent(w.ctx, "commit extent", stmtExtentEmpty, int64(w.id))
		if err == nil && n == 0 {
			err = w.lost(true, 0)
		}
	}
	if err != nil {
		w.Abort()
		return 0, err
	}
	w.done = true
	w.release()
	return w.id, nil
}

// Abort discards the extent now; whatever it cannot delete (the database is unreachable) the
// reclaimer deletes once the extent's touch is older than the abandon age.
func (w *extentWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	_ = w.wait() // the chunk in flight may create the catalog row
	w.release()
	ctx, cancel := context.WithTimeout(w.ctx, w.d.timeout)
	defer cancel()
	if !w.d.enter() {
		return
	}
	var size int64
	w.d.nest.check(w.owner, "abort extent")
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
	if off < 0 {
		return nil, fmt.Errorf("postgres: read extent: negative offset %d", off)
	}
	// One statement finds the extent, its size and the first chunk of the range.
	in := off % chunkSize
	ask := chunkSize - in
	if n >= 0 {
		ask = min(ask, n)
	}
	var size int64
	var first []byte
	owner := d.nest.owner()
	d.nest.check(owner, "read extent")
	err := d.retryRead(ctx, func() error {
		if !d.enter() {
			return store.ErrClosed
		}
		defer d.inflight.RUnlock()
		qctx, cancel := context.WithTimeout(ctx, d.timeout)
		defer cancel()
		rows, err := d.pool.Query(qctx, stmtExtentOpen, int64(id), int32(off/chunkSize), int32(in+1), int32(ask))
		if err != nil {
			return err
		}
		defer rows.Close()
		found := false
		for rows.Next() {
			found = true
			raw := rows.RawValues()
			if err := rows.Scan(&size, nil); err != nil {
				return err
			}
			first = append(make([]byte, 0, min(chunkSize, max(ask, 1))), raw[1]...)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if !found {
			return pgx.ErrNoRows
		}
		return nil
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrExtentNotFound
	}
	if err != nil {
		return nil, wrap("read extent", err)
	}
	avail := max(0, size-off)
	want := n
	if n < 0 {
		want = avail
	}
	r := &extentReader{d: d, id: id, pos: off, end: off + min(want, avail), short: want > avail, owner: owner}
	if r.pos < r.end {
		length := min(chunkSize-in, r.end-r.pos)
		if int64(len(first)) < length {
			return nil, fmt.Errorf("postgres: extent %d chunk %d: %w", id, off/chunkSize, store.ErrExtentNotFound)
		}
		r.rd, r.cur = first[:length], first
		r.pos += length
	}
	if r.pos < r.end {
		// The rest is fetched ahead by one chunk while the caller consumes the current one.
		var fctx context.Context
		fctx, r.cancel = context.WithCancel(ctx)
		r.ch = make(chan fetched, 1)
		r.free = make(chan []byte, 1)
		r.done = make(chan struct{})
		go r.prefetch(fctx, r.pos)
	}
	return r, nil
}

// extentReader reads a range chunk by chunk, one statement per chunk, one chunk ahead of its
// caller: at most two chunks in memory. No statement stays open while the caller consumes
// bytes, so a slow client never meets the statement timeout.
type extentReader struct {
	d     *DB
	id    uint64
	pos   int64 // offset in the extent of the next byte to hand out
	end   int64 // end of the bytes the extent has within the range
	short bool  // the range asked for more than the extent has
	cur   []byte
	rd    []byte // unread part of cur
	err   error
	// The prefetcher (nil when the first chunk covered the range).
	cancel func()
	ch     chan fetched
	free   chan []byte
	done   chan struct{}
	owner  uint64 // the goroutine that reads (nesting.go): the read-ahead is its wait
}

type fetched struct {
	b   []byte
	err error
}

func (r *extentReader) Read(p []byte) (int, error) {
	for len(r.rd) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.pos >= r.end {
			if r.short {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, io.EOF
		}
		if r.cur != nil {
			select {
			case r.free <- r.cur:
			default:
			}
			r.cur = nil
		}
		f := <-r.ch
		if f.err != nil {
			r.err = f.err
			return 0, f.err
		}
		r.cur, r.rd = f.b, f.b
		r.pos += int64(len(f.b))
	}
	k := copy(p, r.rd)
	r.rd = r.rd[k:]
	return k, nil
}

// prefetch fetches the chunks of [pos, r.end) in order into r.ch.
func (r *extentReader) prefetch(ctx context.Context, pos int64) {
	defer close(r.done)
	for pos < r.end {
		var buf []byte
		select {
		case buf = <-r.free:
		default:
			buf = make([]byte, 0, chunkSize)
		}
		buf, err := r.fetch(ctx, pos, buf)
		select {
		case r.ch <- fetched{buf, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
		pos += int64(len(buf))
	}
}

// fetch reads into buf the part of the chunk at pos that the range covers.
func (r *extentReader) fetch(ctx context.Context, pos int64, buf []byte) ([]byte, error) {
	d := r.d
	chunk := pos / chunkSize
	in := pos % chunkSize
	length := min(chunkSize-in, r.end-pos)
	found := false
	d.nest.check(r.owner, "read extent")
	err := d.retryRead(ctx, func() error {
		if !d.enter() {
			return store.ErrClosed
		}
		defer d.inflight.RUnlock()
		qctx, cancel := context.WithTimeout(ctx, d.timeout)
		defer cancel()
		rows, err := d.pool.Query(qctx, stmtExtentRead, int64(r.id), int32(chunk), int32(in+1), int32(length))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			found = true
			buf = append(buf[:0], rows.RawValues()[0]...)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, wrap("read extent", err)
	}
	if !found || int64(len(buf)) != length {
		// Deleted while being read (the sweep found it unreferenced meanwhile).
		return nil, fmt.Errorf("postgres: extent %d chunk %d: %w", r.id, chunk, store.ErrExtentNotFound)
	}
	return buf, nil
}

// Close stops the prefetcher and waits for it.
func (r *extentReader) Close() error {
	if r.cancel != nil {
		r.cancel()
		<-r.done
		r.cancel = nil
	}
	r.cur, r.rd = nil, nil
	if r.err == nil {
		r.err = errors.New("postgres: read of a closed extent reader")
	}
	return nil
}

// queryRows runs one read statement under the engine's in-flight gate and statement timeout,
// retrying transient failures, and hands each row to scan; reset runs before every attempt, so
// a retried attempt starts from nothing.
func (d *DB) queryRows(ctx context.Context, reset func(), scan func(pgx.Rows) error, sql string, args ...any) error {
	return d.retryRead(ctx, func() error {
		reset()
		if !d.enter() {
			return store.ErrClosed
		}
		defer d.inflight.RUnlock()
		qctx, cancel := context.WithTimeout(ctx, d.timeout)
		defer cancel()
		rows, err := d.pool.Query(qctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

func (e extents) DeleteExtents(ctx context.Context, ids []uint64) error {
	d := e.d
	d.nest.check(d.nest.owner(), "delete extents")
	for len(ids) > 0 {
		batch := ids[:min(len(ids), listBatch)]
		ids = ids[len(batch):]
		ask := make([]int64, len(batch))
		for i, id := range batch {
			ask[i] = int64(id)
		}
		var marked []struct{ id, size int64 }
		err := d.queryRows(ctx, func() { marked = marked[:0] }, func(rows pgx.Rows) error {
			var m struct{ id, size int64 }
			err := rows.Scan(&m.id, &m.size)
			marked = append(marked, m)
			return err
		}, stmtExtentMark, ask)
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
	owner := d.nest.owner()
	type row struct{ id, size int64 }
	batch := make([]row, 0, listBatch)
	var after int64
	for {
		d.nest.check(owner, "list extents")
		err := d.queryRows(ctx, func() { batch = batch[:0] }, func(rows pgx.Rows) error {
			var r row
			err := rows.Scan(&r.id, &r.size)
			batch = append(batch, r)
			return err
		}, stmtExtentList, after, listBatch)
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
		err := d.queryRows(ctx, func() { todo = todo[:0] }, func(rows pgx.Rows) error {
			var id int64
			err := rows.Scan(&id)
			todo = append(todo, id)
			return err
		}, stmtExtentTodo, after, listBatch)
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
