// Package migrate copies a Tablo key space from one engine to another (tablo migrate): a
// Pebble data directory to a PostgreSQL database or the reverse, or between two of either.
// The source is read from one snapshot, the destination must be empty, and the copy is
// verified at the end by counting and hashing both sides in key order.
//
// Blob bytes are extents, whose ids each engine assigns itself: every extent a record names
// is streamed into the destination's extent store, where it gets a new id, and the records
// naming it are rewritten to that id (package blob knows which records name extents). An
// extent is durable in the destination before any record naming it is written, as on the
// Blob service's own write path.
package migrate

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tablo/tablo/internal/blob"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/store/postgres"
)

// Options say what to copy where.
type Options struct {
	// From and To are each a data directory or a PostgreSQL URL (postgres:// or
	// postgresql://, or a key=value DSN).
	From, To string
	// Progress receives a line every ProgressEvery (default 2 s) and a summary.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// Result is what was copied and verified.
type Result struct {
	// Keys and Bytes: every key of the engine and its bytes (key and value).
	Keys, Bytes int64
	// Blobs are blob records (base blobs and snapshots), Blocks uncommitted blocks.
	Blobs, Blocks int64
	// Extents and ExtentBytes: the blob data the records name, each extent counted once.
	Extents, ExtentBytes int64
}

// IsPostgres reports whether spec names a database rather than a data directory.
func IsPostgres(spec string) bool {
	return strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://") ||
		strings.Contains(spec, "host=") || strings.Contains(spec, "dbname=")
}

// batchKeys and batchBytes bound one destination Update.
const (
	batchKeys  = 1000
	batchBytes = 4 << 20
)

// unfinishedKey marks a destination being written. It is the first key written and the last
// removed, after verification: a copy that failed or was killed leaves it behind (unless the
// failure could empty the destination again), and Tablo refuses to serve such a store
// (Unfinished) rather than serve part of the data as if it were all.
var unfinishedKey = keys.Meta("migrate-unfinished")

// Unfinished reports an error when st is the destination of a tablo migrate that did not
// complete.
func Unfinished(ctx context.Context, st store.Store) error {
	_, err := st.Get(ctx, unfinishedKey)
	switch {
	case err == nil:
		return errors.New("this store is the destination of a tablo migrate that did not finish: it holds part of the data only; empty it and migrate again")
	case errors.Is(err, store.ErrNotFound):
		return nil
	}
	return err
}

// Run copies and verifies.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.From == "" || o.To == "" {
		return Result{}, errors.New("migrate: --from and --to are both required")
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 2 * time.Second
	}
	src, err := open(ctx, o.From, true)
	if err != nil {
		return Result{}, err
	}
	defer src.Close()
	dst, err := open(ctx, o.To, false)
	if err != nil {
		return Result{}, err
	}
	defer dst.Close()
	if err := checkEmpty(ctx, dst); err != nil {
		return Result{}, fmt.Errorf("migrate: destination %s %w", redact(o.To), err)
	}
	if err := dst.Update(ctx, nil, func(tx store.Txn) error { return tx.Set(unfinishedKey, nil) }); err != nil {
		return Result{}, fmt.Errorf("migrate: write destination: %w", err)
	}
	c := &copier{src: src, dst: dst, o: o, ext: map[uint64]copied{}}
	res, err := c.run(ctx)
	if err != nil {
		return res, c.fail(ctx, err)
	}
	if err := dst.Update(ctx, nil, func(tx store.Txn) error { return tx.Delete(unfinishedKey) }); err != nil {
		return res, fmt.Errorf("migrate: finish destination: %w", err)
	}
	return res, nil
}

// checkEmpty refuses a destination holding any key or extent.
func checkEmpty(ctx context.Context, dst store.Store) error {
	empty := true
	if err := dst.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) { empty = false; return false, nil }); err != nil {
		return fmt.Errorf("cannot be read: %w", err)
	}
	if err := dst.Extents().ListExtents(ctx, func(uint64, int64) error { empty = false; return errStop }); err != nil && !errors.Is(err, errStop) {
		return fmt.Errorf("cannot be read: %w", err)
	}
	if !empty {
		return errors.New("is not empty")
	}
	return nil
}

var errStop = errors.New("stop")

// copier is one run: what it copied so far, for verification and for undoing it.
type copier struct {
	src, dst store.Store
	o        Options
	// ext maps each copied source extent to its copy.
	ext     map[uint64]copied
	res     Result
	began   time.Time
	last    time.Time
	srcHash hash.Hash64
	buf     []byte // extents stream through it
}

// copied is a source extent's copy in the destination.
type copied struct {
	id   uint64
	size int64
	sum  uint64 // CRC-64 of the bytes
}

func (c *copier) run(ctx context.Context) (Result, error) {
	snap, err := c.src.Snapshot(ctx)
	if err != nil {
		return c.res, fmt.Errorf("migrate: snapshot source: %w", err)
	}
	defer snap.Close()
	fmt.Fprintf(c.o.Progress, "copying %s -> %s\n", redact(c.o.From), redact(c.o.To))
	c.srcHash = fnv.New64a()
	c.began, c.last = time.Now(), time.Now()
	// The snapshot is read a batch at a time and each batch is copied between two scans:
	// copying a batch's extents may take minutes, longer than an engine lets one scan
	// statement run (PostgreSQL's calls time out), so no scan waits for it.
	var from []byte
	for {
		var ks, vs [][]byte
		size, full := 0, false
		err := snap.Scan(ctx, from, nil, func(k, v []byte) (bool, error) {
			ks = append(ks, bytes.Clone(k))
			vs = append(vs, bytes.Clone(v))
			size += len(k) + len(v)
			full = len(ks) >= batchKeys || size >= batchBytes
			return !full, nil
		})
		if err == nil {
			err = c.copyBatch(ctx, ks, vs)
		}
		if err != nil {
			return c.res, fmt.Errorf("migrate: copy: %w", err)
		}
		if !full {
			break
		}
		from = append(ks[len(ks)-1], 0) // the next key in byte order
	}
	c.progress(true)
	return c.res, c.verify(ctx)
}

// copyBatch copies one batch of records, the extents they name first (each is durable in the
// destination before the record naming it is written), then the records, rewritten to the
// destination's extent ids, in one transaction.
func (c *copier) copyBatch(ctx context.Context, ks, vs [][]byte) error {
	for i, k := range ks {
		v, kind, err := blob.RewriteExtents(k, vs[i], func(id uint64, need int64) (uint64, error) {
			return c.copyExtent(ctx, k, id, need)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", describe(k), err)
		}
		switch kind {
		case blob.BlobRecord:
			c.res.Blobs++
		case blob.BlockRecord:
			c.res.Blocks++
		}
		vs[i] = v
		addHash(c.srcHash, k, v)
		c.res.Keys++
		c.res.Bytes += int64(len(k) + len(v))
		c.progress(false)
	}
	if len(ks) == 0 {
		return nil
	}
	err := c.dst.Update(ctx, nil, func(tx store.Txn) error {
		for i := range ks {
			if err := tx.Set(ks[i], vs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// progress prints a line every ProgressEvery, or now with final.
func (c *copier) progress(final bool) {
	if !final && time.Since(c.last) < c.o.ProgressEvery {
		return
	}
	c.last = time.Now()
	r := &c.res
	line := fmt.Sprintf("copied %d keys (%.1f MB), %d blobs, %d blob extents (%.1f MB) in %v",
		r.Keys, float64(r.Bytes)/1e6, r.Blobs, r.Extents, float64(r.ExtentBytes)/1e6, time.Since(c.began).Round(time.Second))
	if final {
		line = fmt.Sprintf("copied %d keys (%.1f MB), %d blobs, %d uncommitted blocks, %d blob extents (%.1f MB) in %v; verifying",
			r.Keys, float64(r.Bytes)/1e6, r.Blobs, r.Blocks, r.Extents, float64(r.ExtentBytes)/1e6, time.Since(c.began).Round(time.Millisecond))
	}
	fmt.Fprintln(c.o.Progress, line)
}

// verify counts and hashes the destination's keys in key order, checks that every extent a
// destination record names is there and long enough, and reads every copied extent back.
func (c *copier) verify(ctx context.Context) error {
	dstExt := map[uint64]int64{}
	var nExt, extBytes int64
	if err := c.dst.Extents().ListExtents(ctx, func(id uint64, size int64) error {
		dstExt[id] = size
		nExt++
		extBytes += size
		return nil
	}); err != nil {
		return fmt.Errorf("migrate: verify: %w", err)
	}
	dstHash := fnv.New64a()
	var n, blobs, blocks int64
	if err := c.dst.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) {
		if bytes.Equal(k, unfinishedKey) {
			return true, nil
		}
		addHash(dstHash, k, v)
		n++
		_, kind, err := blob.RewriteExtents(k, v, func(id uint64, need int64) (uint64, error) {
			if size, ok := dstExt[id]; !ok || size < need {
				return 0, fmt.Errorf("names extent %d (%d bytes needed), which the destination does not hold whole", id, need)
			}
			return id, nil
		})
		if err != nil {
			return false, fmt.Errorf("%s: %w", describe(k), err)
		}
		switch kind {
		case blob.BlobRecord:
			blobs++
		case blob.BlockRecord:
			blocks++
		}
		return true, nil
	}); err != nil {
		return fmt.Errorf("migrate: verification failed: %w", err)
	}
	r := &c.res
	if n != r.Keys || dstHash.Sum64() != c.srcHash.Sum64() || blobs != r.Blobs || blocks != r.Blocks {
		return fmt.Errorf("migrate: verification failed: source %d keys (hash %016x), %d blobs, %d uncommitted blocks; destination %d keys (hash %016x), %d blobs, %d uncommitted blocks",
			r.Keys, c.srcHash.Sum64(), r.Blobs, r.Blocks, n, dstHash.Sum64(), blobs, blocks)
	}
	if nExt != r.Extents || extBytes != r.ExtentBytes {
		return fmt.Errorf("migrate: verification failed: %d blob extents (%d bytes) copied, the destination holds %d (%d bytes)",
			r.Extents, r.ExtentBytes, nExt, extBytes)
	}
	if err := c.verifyExtents(ctx); err != nil {
		return err
	}
	fmt.Fprintf(c.o.Progress, "verified: %d keys on both sides, same content hash %016x; %d blobs, %d uncommitted blocks, %d blob extents (%d bytes), every extent read back with the same CRC-64\n",
		n, dstHash.Sum64(), blobs, blocks, nExt, extBytes)
	return nil
}

// addHash feeds one key/value pair, length-prefixed, to h.
func addHash(h hash.Hash64, k, v []byte) {
	var n [8]byte
	binary.BigEndian.PutUint32(n[:4], uint32(len(k)))
	binary.BigEndian.PutUint32(n[4:], uint32(len(v)))
	h.Write(n[:])
	h.Write(k)
	h.Write(v)
}

// sourceConns is the pool of a PostgreSQL source: its snapshot and one extent read.
const sourceConns = 2

// open opens spec; a source data directory must already hold a Pebble database (Pebble
// would create an empty one). Pebble refuses a directory a running Tablo holds.
func open(ctx context.Context, spec string, source bool) (store.Store, error) {
	if IsPostgres(spec) {
		o := postgres.Options{URL: spec}
		if source {
			// The copy holds the source's snapshot (one connection) from start to end, and
			// reads each extent the records name meanwhile (one more connection, one
			// statement at a time: the copy is sequential). Keeping the one snapshot is the
			// point, so the pool is sized for the second connection, whatever the URL says
			// (pool_max_conns=1 would otherwise wait for a connection only the copy frees).
			o.MaxConns = sourceConns
		}
		db, err := postgres.Open(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("migrate: %s: %w", redact(spec), err)
		}
		return db, nil
	}
	if source {
		if m, _ := filepath.Glob(filepath.Join(spec, "MANIFEST-*")); len(m) == 0 {
			if _, err := os.Stat(spec); err != nil {
				return nil, fmt.Errorf("migrate: source: %w", err)
			}
			return nil, fmt.Errorf("migrate: source %s holds no Tablo data", spec)
		}
	}
	db, err := pebblestore.Open(pebblestore.Options{Dir: spec})
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return db, nil
}

// redact hides a URL's password in messages.
func redact(spec string) string {
	if i := strings.Index(spec, "://"); i >= 0 {
		if at := strings.Index(spec[i+3:], "@"); at >= 0 {
			if colon := strings.Index(spec[i+3:i+3+at], ":"); colon >= 0 {
				return spec[:i+3+colon+1] + "***" + spec[i+3+at:]
			}
		}
	}
	return spec
}
