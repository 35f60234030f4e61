package postgres_test

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/postgres"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
	"github.com/tablo/tablo/internal/store/storetest"
)

func openAbandon(t *testing.T, url string, age time.Duration) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(ctx, postgres.Options{URL: url, AbandonAfter: age, ReclaimInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// count returns the rows of a table in the test's schema.
func count(t *testing.T, url, table string) int {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// pattern returns n bytes that differ from chunk to chunk (the i>>20 term), so that a read of
// the wrong 1 MiB chunk never passes for the right one.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31+i>>9+(i>>20)*7) ^ seed
	}
	return b
}

// TestExtentsAcrossFrontEnds: an extent written through one engine is read, ranged, through
// another on the same database; ids from both never collide and increase on each.
func TestExtentsAcrossFrontEnds(t *testing.T) {
	url := pgtest.URL(t)
	a, b := openAbandon(t, url, 0), openAbandon(t, url, 0)
	data := pattern(3<<20+12345, 7) // spans four chunks, the last one short
	w, err := a.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := b.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w.ID() == wb.ID() {
		t.Fatalf("two front ends got extent id %d", w.ID())
	}
	wb.Abort()
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	id, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ off, n int64 }{{0, -1}, {1<<20 - 3, 10}, {2 << 20, 1 << 20}, {3 << 20, 12345}, {5, 3 << 20}} {
		r, err := b.Extents().ReadExtent(ctx, id, c.off, c.n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		end := int64(len(data))
		if c.n >= 0 {
			end = c.off + c.n
		}
		if err != nil || !bytes.Equal(got, data[c.off:end]) {
			t.Fatalf("read %+v through the other front end: %d bytes, %v", c, len(got), err)
		}
	}
	// A reader closed half way reads no more.
	r, err := a.Extents().ReadExtent(ctx, id, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(r, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if n, err := r.Read(make([]byte, 10)); n != 0 || err == nil {
		t.Fatalf("read after Close: %d, %v", n, err)
	}
	w2, err := b.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Abort()
	if w2.ID() <= id {
		t.Fatalf("id %d after %d", w2.ID(), id)
	}
	// Deleted through one, gone for the other; its rows are gone too.
	if err := b.Extents().DeleteExtents(ctx, []uint64{id}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Extents().ReadExtent(ctx, id, 0, -1); !errors.Is(err, store.ErrExtentNotFound) {
		t.Fatalf("read after delete: %v", err)
	}
	if n := count(t, url, "tablo_extent_chunks"); n != 0 {
		t.Fatalf("%d chunk rows left after delete and abort", n)
	}
}

// TestAbandonedExtentReclaimed: an extent whose writer stopped (a killed front end) is deleted
// by another front end's reclaimer once untouched for the abandon age, while one still being
// written is not; a writer whose extent was reclaimed fails instead of committing a hole.
func TestAbandonedExtentReclaimed(t *testing.T) {
	url := pgtest.URL(t)
	writer := openAbandon(t, url, time.Hour)
	w, err := writer.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(pattern(2<<20, 1)); err != nil {
		t.Fatal(err)
	}
	// A front end with the default-sized age leaves a live writer alone.
	patient := openAbandon(t, url, time.Hour)
	if n, err := patient.ReclaimExtents(ctx); err != nil || n != 0 {
		t.Fatalf("reclaim with a live writer: %d, %v", n, err)
	}
	if _, err := w.Write(pattern(1<<20, 2)); err != nil {
		t.Fatalf("the live writer was disturbed: %v", err)
	}
	// One whose age has passed (here: at once) reclaims it and its chunks.
	time.Sleep(10 * time.Millisecond)
	eager := openAbandon(t, url, time.Millisecond)
	if n, err := eager.ReclaimExtents(ctx); err != nil || n != 1 {
		t.Fatalf("reclaim of an abandoned extent: %d, %v", n, err)
	}
	if n := count(t, url, "tablo_extent_chunks"); n != 0 {
		t.Fatalf("%d chunk rows left after reclaiming", n)
	}
	// The writer, had it been alive after all, cannot commit it.
	if _, err := w.Write(pattern(1<<20, 3)); err == nil {
		if _, err := w.Commit(); err == nil {
			t.Fatal("a reclaimed extent committed")
		}
	}
	if n := count(t, url, "tablo_extents"); n != 0 {
		t.Fatalf("%d extent rows left", n)
	}
}

// TestHalfDeletedExtentFinished: a deletion cut short (the row marked deleting, some chunks
// left: a front end killed mid-way) is finished by the reclaimer of any front end.
func TestHalfDeletedExtentFinished(t *testing.T) {
	url := pgtest.URL(t)
	db := openAbandon(t, url, 0)
	w, err := db.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(pattern(3<<20, 4))
	id, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// What DeleteExtents leaves when killed after marking and one batch.
	if _, err := conn.Exec(ctx, `UPDATE tablo_extents SET state = 2, touched = now() - INTERVAL '1 hour' WHERE id = $1`, int64(id)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM tablo_extent_chunks WHERE id = $1 AND n = 0`, int64(id)); err != nil {
		t.Fatal(err)
	}
	if m := listAll(t, db); len(m) != 0 {
		t.Fatalf("an extent being deleted is listed: %v", m)
	}
	if n, err := db.ReclaimExtents(ctx); err != nil || n != 1 {
		t.Fatalf("reclaim: %d, %v", n, err)
	}
	if n := count(t, url, "tablo_extent_chunks") + count(t, url, "tablo_extents"); n != 0 {
		t.Fatalf("%d rows left", n)
	}
}

func listAll(t *testing.T, db *postgres.DB) map[uint64]int64 {
	t.Helper()
	m := map[uint64]int64{}
	if err := db.Extents().ListExtents(ctx, func(id uint64, size int64) error { m[id] = size; return nil }); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMigratesVersion1: a database created by a build without extents (schema version 1,
// data in tablo_kv) is brought to the current version at Open, keeping its data, and then
// stores extents; opening again changes nothing.
func TestMigratesVersion1(t *testing.T) {
	url := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{
		`CREATE TABLE tablo_schema (id INT PRIMARY KEY, version INT NOT NULL)`,
		`INSERT INTO tablo_schema VALUES (1, 1)`,
		`CREATE TABLE tablo_kv (k BYTEA PRIMARY KEY, v BYTEA NOT NULL)`,
		`INSERT INTO tablo_kv VALUES ('\x6b', '\x76')`,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	db := openAbandon(t, url, 0)
	if v, err := db.Get(ctx, []byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("data after the migration: %q, %v", v, err)
	}
	storetest.PutExtent(t, db.Extents(), []byte("bulk"))
	db.Close()
	openAbandon(t, url, 0).Close()
	var version int
	if err := conn.QueryRow(ctx, `SELECT version FROM tablo_schema WHERE id = 1`).Scan(&version); err != nil || version != postgres.SchemaVersion {
		t.Fatalf("schema version %d (%v), want %d", version, err, postgres.SchemaVersion)
	}
	if n := count(t, url, "tablo_extent_chunks"); n != 1 {
		t.Fatalf("%d chunk rows, want 1", n)
	}
}

// TestExtentWriteCountsAndAbort: Write reports every byte it took, and Abort deletes the
// chunks already written at once (not only once the reclaimer comes by).
func TestExtentWriteCountsAndAbort(t *testing.T) {
	url := pgtest.URL(t)
	db := openAbandon(t, url, time.Hour)
	w, err := db.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{10, 1 << 20, 1<<20 + 5} { // the last one flushes two chunks behind
		if n, err := w.Write(pattern(size, 9)); n != size || err != nil {
			t.Fatalf("Write of %d bytes: %d, %v", size, n, err)
		}
	}
	if n := count(t, url, "tablo_extent_chunks"); n == 0 {
		t.Fatal("no chunk written before Abort")
	}
	w.Abort()
	if n := count(t, url, "tablo_extent_chunks") + count(t, url, "tablo_extents"); n != 0 {
		t.Fatalf("%d rows left after Abort", n)
	}
}

// TestDeleteLargeExtent: an extent of more chunks than one DELETE removes (64) loses every
// chunk. The rows are made by hand (65 tiny chunks under a size of 64 MiB and one byte).
func TestDeleteLargeExtent(t *testing.T) {
	url := pgtest.URL(t)
	db := openAbandon(t, url, time.Hour)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const id = 424242
	if _, err := conn.Exec(ctx, `INSERT INTO tablo_extents (id, state, size, touched) VALUES ($1, 1, $2, now())`, id, int64(64<<20+1)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO tablo_extent_chunks (id, n, data) SELECT $1, n, 'x'::BYTEA FROM generate_series(0, 64) AS n`, id); err != nil {
		t.Fatal(err)
	}
	if err := db.Extents().DeleteExtents(ctx, []uint64{id}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, url, "tablo_extent_chunks") + count(t, url, "tablo_extents"); n != 0 {
		t.Fatalf("%d rows left after deleting an extent of 65 chunks", n)
	}
}

// TestExtentChunkFailureFailsUpload: a chunk whose statement fails (here: stuck behind
// another session's uncommitted row past the statement timeout) fails the upload, even though
// the chunks after it and the commit would go through; the extent is then not listed. Had
// the failure been dropped, the extent would commit with a chunk missing.
func TestExtentChunkFailureFailsUpload(t *testing.T) {
	url := pgtest.URL(t)
	db, err := postgres.Open(ctx, postgres.Options{URL: url, StatementTimeout: time.Second, ReclaimInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, err := db.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	blocker, endSession := otherSession(t, url)
	defer endSession()
	// The writer's insert of chunk 1 waits for this transaction, which outlives the upload.
	if _, err := blocker.Exec(ctx, `INSERT INTO tablo_extent_chunks (id, n, data) VALUES ($1, 1, 'x'::BYTEA)`, int64(w.ID())); err != nil {
		t.Fatal(err)
	}
	data := pattern(3<<20+5, 3) // chunks 0..3: chunk 1 fails, 2 and 3 do not
	var werr error
	for p := data; len(p) > 0 && werr == nil; p = p[min(len(p), 1<<20):] {
		_, werr = w.Write(p[:min(len(p), 1<<20)])
	}
	if werr == nil {
		_, werr = w.Commit()
	} else {
		w.Abort()
	}
	if !errors.Is(werr, store.ErrTimeout) {
		t.Fatalf("upload whose chunk 1 timed out: %v, want ErrTimeout", werr)
	}
	if err := blocker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, db); len(got) != 0 {
		t.Fatalf("extents listed after a failed upload: %v", got)
	}
}

// TestServerTimeoutFiresFirst: a statement stuck past the statement timeout is stopped by
// the server (SQLSTATE 57014), whose connection stays usable, not by the client's own
// deadline, which a call's wait for a pooled connection must not eat into: here the engine's
// only connection is held by an Update whose read waits behind a lock until its own statement
// timeout, and only then does the Delete's statement start (and wait behind a row lock).
func TestServerTimeoutFiresFirst(t *testing.T) {
	url := pgtest.URL(t)
	setup := openAbandon(t, url, time.Hour) // the default timeouts: set-up never times out
	db, err := postgres.Open(ctx, postgres.Options{URL: url, MaxConns: 1, StatementTimeout: time.Second, ReclaimInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, err := setup.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("bytes")); err != nil {
		t.Fatal(err)
	}
	id, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	locker, endSession := otherSession(t, url)
	defer endSession()
	if _, err := locker.Exec(ctx, `LOCK TABLE tablo_kv IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	if _, err := locker.Exec(ctx, `SELECT 1 FROM tablo_extents WHERE id = $1 FOR UPDATE`, int64(id)); err != nil {
		t.Fatal(err)
	}
	holding, held := make(chan struct{}), make(chan error, 1)
	var once sync.Once
	go func() {
		held <- db.Update(ctx, nil, func(tx store.Txn) error {
			once.Do(func() { close(holding) })
			_, err := tx.Get([]byte("k"))
			return err
		})
	}()
	<-holding
	err = db.Extents().DeleteExtents(ctx, []uint64{id})
	var pe *pgconn.PgError
	if !errors.Is(err, store.ErrTimeout) || !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("delete behind a row lock: %v, want ErrTimeout from the server's statement timeout (57014)", err)
	}
	if err := <-held; !errors.Is(err, store.ErrTimeout) {
		t.Fatalf("Update reading behind a table lock: %v, want ErrTimeout", err)
	}
	if err := locker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Extents().DeleteExtents(ctx, []uint64{id}); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, setup); len(got) != 0 {
		t.Fatalf("extents listed after the delete: %v", got)
	}
}

// TestDeleteExtentsRemovesEveryRow: deleting several extents in one call removes the rows of
// each of them at once, not only the first (the rest would wait for the reclaimer).
func TestDeleteExtentsRemovesEveryRow(t *testing.T) {
	url := pgtest.URL(t)
	db := openAbandon(t, url, time.Hour)
	var ids []uint64
	for i := range 3 {
		w, err := db.Extents().NewExtent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(pattern(1000*(i+1), byte(i))); err != nil {
			t.Fatal(err)
		}
		id, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := db.Extents().DeleteExtents(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if n := count(t, url, "tablo_extent_chunks") + count(t, url, "tablo_extents"); n != 0 {
		t.Fatalf("%d rows left after deleting 3 extents", n)
	}
}

// TestListAndReclaimPastOneBatch: ListExtents and ReclaimExtents read the catalog 1000 rows
// per statement; past the first batch, every committed extent is still listed once, in
// order, and an unfinished one is still reclaimed. The rows are made by hand (empty extents).
func TestListAndReclaimPastOneBatch(t *testing.T) {
	url := pgtest.URL(t)
	db := openAbandon(t, url, time.Hour)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Committed extents 1..1001; extents 1002..3001 being written (fresh: left alone), and
	// 3002 marked deleting long ago, after two batches of the reclaimer's work list.
	if _, err := conn.Exec(ctx, `INSERT INTO tablo_extents (id, state, size, touched)
		SELECT i, CASE WHEN i <= 1001 THEN 1 WHEN i <= 3001 THEN 0 ELSE 2 END, 0,
		CASE WHEN i = 3002 THEN now() - INTERVAL '1 hour' ELSE now() END FROM generate_series(1, 3002) AS i`); err != nil {
		t.Fatal(err)
	}
	var listed []uint64
	if err := db.Extents().ListExtents(ctx, func(id uint64, size int64) error { listed = append(listed, id); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1001 {
		t.Fatalf("listed %d extents, want 1001", len(listed))
	}
	for i, id := range listed {
		if id != uint64(i+1) {
			t.Fatalf("listed extent %d at position %d", id, i)
		}
	}
	if got, err := db.ReclaimExtents(ctx); err != nil || got != 1 {
		t.Fatalf("reclaimed %d, %v; want the 1 marked deleting", got, err)
	}
	if left := count(t, url, "tablo_extents"); left != 3001 {
		t.Fatalf("%d catalog rows left after reclaiming, want 3001", left)
	}
}

// TestReadAfterCloseFails: a reader closed before the end of its range fails further reads
// with an error, never io.EOF, which would pass the bytes read so far for the whole range.
func TestReadAfterCloseFails(t *testing.T) {
	db := openAbandon(t, pgtest.URL(t), time.Hour)
	for _, size := range []int{100, 3<<20 + 5} { // in the first chunk; with chunks fetched ahead
		w, err := db.Extents().NewExtent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(pattern(size, 5)); err != nil {
			t.Fatal(err)
		}
		id, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		r, err := db.Extents().ReadExtent(ctx, id, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(r, make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if n, err := r.Read(make([]byte, 10)); n != 0 || err == nil || err == io.EOF {
			t.Fatalf("extent of %d bytes: read after Close: %d, %v; want an error", size, n, err)
		}
	}
}
