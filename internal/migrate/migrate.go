// Package migrate copies a Tablo key space from one engine to another (tablo migrate): a
// Pebble data directory to a PostgreSQL database or the reverse, or between two of either.
// The source is read from one snapshot, the destination must be empty, and the copy is
// verified at the end by counting and hashing both sides in key order.
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
	Keys, Bytes int64
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
	// Blob bytes (extents) are named by ids each engine assigns itself, so they cannot be
	// copied key by key: refuse rather than copy blob records whose bytes stay behind.
	extents := 0
	if err := src.Extents().ListExtents(ctx, func(uint64, int64) error { extents++; return nil }); err != nil {
		return Result{}, fmt.Errorf("migrate: list source blob data: %w", err)
	}
	if extents > 0 {
		return Result{}, fmt.Errorf("migrate: the source holds blob data larger than 64 KiB (%d extents), which migrate does not copy yet", extents)
	}
	dst, err := open(ctx, o.To, false)
	if err != nil {
		return Result{}, err
	}
	defer dst.Close()
	empty := true
	if err := dst.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) { empty = false; return false, nil }); err != nil {
		return Result{}, fmt.Errorf("migrate: read destination: %w", err)
	}
	if !empty {
		return Result{}, fmt.Errorf("migrate: destination %s is not empty", redact(o.To))
	}

	snap, err := src.Snapshot(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("migrate: snapshot source: %w", err)
	}
	defer snap.Close()
	fmt.Fprintf(o.Progress, "copying %s -> %s\n", redact(o.From), redact(o.To))
	var res Result
	srcHash := fnv.New64a()
	var keys, vals [][]byte
	size := 0
	flush := func() error {
		if len(keys) == 0 {
			return nil
		}
		err := dst.Update(ctx, nil, func(tx store.Txn) error {
			for i := range keys {
				if err := tx.Set(keys[i], vals[i]); err != nil {
					return err
				}
			}
			return nil
		})
		keys, vals, size = keys[:0], vals[:0], 0
		return err
	}
	began, last := time.Now(), time.Now()
	err = snap.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) {
		addHash(srcHash, k, v)
		keys = append(keys, bytes.Clone(k))
		vals = append(vals, bytes.Clone(v))
		size += len(k) + len(v)
		res.Keys++
		res.Bytes += int64(len(k) + len(v))
		if len(keys) >= batchKeys || size >= batchBytes {
			if err := flush(); err != nil {
				return false, fmt.Errorf("migrate: write: %w", err)
			}
		}
		if time.Since(last) >= o.ProgressEvery {
			last = time.Now()
			fmt.Fprintf(o.Progress, "copied %d keys (%.1f MB) in %v\n", res.Keys, float64(res.Bytes)/1e6, time.Since(began).Round(time.Second))
		}
		return true, nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return res, fmt.Errorf("migrate: copy: %w", err)
	}
	fmt.Fprintf(o.Progress, "copied %d keys (%.1f MB) in %v; verifying\n", res.Keys, float64(res.Bytes)/1e6, time.Since(began).Round(time.Millisecond))

	dstHash := fnv.New64a()
	var n int64
	if err := dst.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) {
		addHash(dstHash, k, v)
		n++
		return true, nil
	}); err != nil {
		return res, fmt.Errorf("migrate: verify: %w", err)
	}
	if n != res.Keys || dstHash.Sum64() != srcHash.Sum64() {
		return res, fmt.Errorf("migrate: verification failed: source %d keys (hash %016x), destination %d keys (hash %016x)", res.Keys, srcHash.Sum64(), n, dstHash.Sum64())
	}
	fmt.Fprintf(o.Progress, "verified: %d keys on both sides, same content hash %016x\n", n, dstHash.Sum64())
	return res, nil
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

// open opens spec; a source data directory must already hold a Pebble database (Pebble
// would create an empty one). Pebble refuses a directory a running Tablo holds.
func open(ctx context.Context, spec string, source bool) (store.Store, error) {
	if IsPostgres(spec) {
		db, err := postgres.Open(ctx, postgres.Options{URL: spec})
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
