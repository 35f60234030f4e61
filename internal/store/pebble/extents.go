package pebble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tablo/tablo/internal/store"
)

// extentDir holds the engine's extents (bulk bytes), one file per extent named by its
// decimal id, beside Pebble's own files. Files, not Pebble values: a value in the LSM is
// written to the WAL, flushed, then rewritten by every compaction that moves it down a
// level, while a file is written once (docs/architecture.md, "Bulk bytes", has the measured
// write amplification). The catalog that names extents lives in Pebble.
const extentDir = "extents"

// tmpSuffix marks an extent still being written; Open removes leftovers of a crash.
const tmpSuffix = ".tmp"

// fileExtents implements store.Extents on a vfs.FS (the disk, or memory for in-memory and
// crash-test engines).
type fileExtents struct {
	fs   vfs.FS
	dir  string
	next atomic.Uint64
}

// openExtents prepares dir, removes unfinished extents and finds the next id: above every
// id in dir and in the extent directories of the snapshots under snapshotsRoot, so that an
// extent a restore brings back never shares its id with a newer one.
func openExtents(fs vfs.FS, dir, snapshotsRoot string) (*fileExtents, error) {
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pebble: extents: %w", err)
	}
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("pebble: extents: %w", err)
	}
	e := &fileExtents{fs: fs, dir: dir}
	var maxID uint64
	for _, n := range names {
		if base, ok := strings.CutSuffix(n, tmpSuffix); ok {
			_ = fs.Remove(fs.PathJoin(dir, n)) // never committed
			n = base
		}
		if id, err := strconv.ParseUint(n, 10, 64); err == nil && id > maxID {
			maxID = id
		}
	}
	if snaps, err := fs.List(snapshotsRoot); err == nil {
		for _, snap := range snaps {
			saved, _ := fs.List(fs.PathJoin(snapshotsRoot, snap, extentDir))
			for _, n := range saved {
				if id, err := strconv.ParseUint(n, 10, 64); err == nil && id > maxID {
					maxID = id
				}
			}
		}
	}
	e.next.Store(maxID)
	return e, syncDir(fs, dir)
}

// linkCommitted hard-links every committed extent into dst (a snapshot being saved).
// Extents are never modified once committed, so a link is a copy that costs nothing.
func (e *fileExtents) linkCommitted(dst string) error {
	if err := e.fs.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	names, err := e.fs.List(e.dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.HasSuffix(n, tmpSuffix) {
			continue
		}
		err := e.fs.Link(e.fs.PathJoin(e.dir, n), e.fs.PathJoin(dst, n))
		if err != nil && !errors.Is(err, os.ErrNotExist) { // deleted meanwhile: unreferenced
			return err
		}
	}
	return syncDir(e.fs, dst)
}

// restoreExtents links back into dir the extents of a snapshot (src) that dir lacks, e.g.
// ones the sweep deleted after the snapshot was saved. Extra extents in dir are garbage the
// sweep reclaims.
func restoreExtents(fs vfs.FS, src, dir string) error {
	names, err := fs.List(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a snapshot saved before the engine kept extents
	}
	if err != nil {
		return err
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, n := range names {
		to := fs.PathJoin(dir, n)
		if _, err := fs.Stat(to); err == nil {
			continue
		}
		if err := fs.Link(fs.PathJoin(src, n), to); err != nil {
			return err
		}
	}
	return syncDir(fs, dir)
}

func (e *fileExtents) path(id uint64) string {
	return e.fs.PathJoin(e.dir, strconv.FormatUint(id, 10))
}

// Extents implements store.Store.
func (d *DB) Extents() store.Extents { return d.extents }

func (e *fileExtents) NewExtent(ctx context.Context) (store.ExtentWriter, error) {
	id := e.next.Add(1)
	tmp := e.path(id) + tmpSuffix
	f, err := e.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, fmt.Errorf("pebble: new extent: %w", err)
	}
	return &extentWriter{e: e, id: id, tmp: tmp, f: f}, nil
}

type extentWriter struct {
	e    *fileExtents
	id   uint64
	tmp  string
	f    vfs.File
	done bool
}

func (w *extentWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

func (w *extentWriter) ID() uint64 { return w.id }

// Commit syncs the file, gives it its final name and syncs the directory, so that the
// extent exists after a crash once Commit has returned.
func (w *extentWriter) Commit() (uint64, error) {
	if w.done {
		return 0, errors.New("pebble: extent already finished")
	}
	w.done = true
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.e.fs.Rename(w.tmp, w.e.path(w.id))
	}
	if err == nil {
		err = syncDir(w.e.fs, w.e.dir)
	}
	if err != nil {
		_ = w.e.fs.Remove(w.tmp)
		return 0, fmt.Errorf("pebble: commit extent: %w", err)
	}
	return w.id, nil
}

func (w *extentWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	_ = w.f.Close()
	_ = w.e.fs.Remove(w.tmp)
}

func (e *fileExtents) ReadExtent(ctx context.Context, id uint64, off, n int64) (io.ReadCloser, error) {
	f, err := e.fs.Open(e.path(id))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, store.ErrExtentNotFound
		}
		return nil, fmt.Errorf("pebble: read extent: %w", err)
	}
	if n < 0 {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("pebble: read extent: %w", err)
		}
		n = st.Size() - off
	}
	return &sectionReader{r: io.NewSectionReader(f, off, n), f: f, want: n}, nil
}

// sectionReader reads a section and reports a short extent as ErrUnexpectedEOF.
type sectionReader struct {
	r    *io.SectionReader
	f    io.Closer
	want int64
	got  int64
}

func (s *sectionReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.got += int64(n)
	if err == io.EOF && s.got < s.want {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (s *sectionReader) Close() error { return s.f.Close() }

func (e *fileExtents) DeleteExtents(ctx context.Context, ids []uint64) error {
	for _, id := range ids {
		if err := e.fs.Remove(e.path(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("pebble: delete extent: %w", err)
		}
	}
	return nil
}

func (e *fileExtents) ListExtents(ctx context.Context, fn func(id uint64, size int64) error) error {
	names, err := e.fs.List(e.dir)
	if err != nil {
		return fmt.Errorf("pebble: list extents: %w", err)
	}
	ids := make([]uint64, 0, len(names))
	for _, n := range names {
		if id, err := strconv.ParseUint(n, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, err := e.fs.Stat(e.path(id))
		if err != nil {
			continue // deleted meanwhile
		}
		if err := fn(id, st.Size()); err != nil {
			return err
		}
	}
	return nil
}
