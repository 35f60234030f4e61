package pebble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// tmpSuffix marked an extent still being written in earlier versions (now NewExtent
// pre-creates files under their final names); Open still removes such leftovers.
const tmpSuffix = ".tmp"

// fileExtents implements store.Extents on a vfs.FS (the disk, or memory for in-memory and
// crash-test engines).
type fileExtents struct {
	fs  vfs.FS
	dir string
	// onDisk: fs is the operating system's, so a reader can be an *os.File section whose
	// WriteTo hands the page cache to the writer (osSection). Otherwise writers hand fs a
	// copy of what they are given: Pebble's in-memory file system scribbles over the buffers
	// it is handed in race and invariants builds (to find callers that reuse them), which an
	// io.Writer must not do to its caller.
	onDisk bool
	// sending counts osSection.WriteTo calls under way; those beyond sendfileAt (the
	// CPU count) use sendfile (osSection.WriteTo has the why).
	sending    atomic.Int64
	sendfileAt int64
	next       atomic.Uint64

	mu sync.Mutex
	// pool holds pre-created empty files NewExtent hands out (NewExtent has the why);
	// pending holds the ids of files not yet committed, pooled or being written.
	pool    []pooledFile
	pending map[uint64]struct{}
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
	e := &fileExtents{fs: fs, dir: dir, onDisk: fs == vfs.Default, pending: make(map[uint64]struct{})}
	e.sendfileAt = int64(runtime.GOMAXPROCS(0))
	var maxID uint64
	for _, n := range names {
		if base, ok := strings.CutSuffix(n, tmpSuffix); ok {
			_ = fs.Remove(fs.PathJoin(dir, n)) // never committed
			n = base
		}
		if id, err := strconv.ParseUint(n, 10, 64); err == nil {
			maxID = max(maxID, id)
		}
	}
	if snaps, err := fs.List(snapshotsRoot); err == nil {
		for _, snap := range snaps {
			saved, _ := fs.List(fs.PathJoin(snapshotsRoot, snap, extentDir))
			for _, n := range saved {
				if id, err := strconv.ParseUint(n, 10, 64); err == nil {
					maxID = max(maxID, id)
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
		if id, err := strconv.ParseUint(n, 10, 64); err != nil || e.isPending(id) {
			continue // not an extent, or not committed yet
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

// poolBatch is how many empty extent files NewExtent creates at a time, with one
// directory sync for all of them.
const poolBatch = 32

// A writer asks the kernel every writeback bytes to start writing its file out, waiting for
// the range it asked for before (SyncTo: sync_file_range with WAIT_BEFORE), so that Commit's
// sync finds little left and one upload's dirty pages stay bounded. Over its first
// writeback bytes a writer on disk also starts the writeback of each kickEvery bytes as soon
// as it has written them, without waiting (startWriteback), so that the disk writes a small
// extent while the rest of it arrives and is hashed: a 1 MiB upload used to hand the disk
// all its bytes only in the final sync, after the last one arrived and was hashed (side by
// side, its median time fell by a fifth to a half). Only the first writeback bytes: kicked
// in 256 KiB pieces all the way, 256 MiB uploads were slower in four runs of five.
const (
	kickEvery = 256 << 10
	writeback = 8 << 20
)

// NewExtent hands out a pre-created empty file. Files are created poolBatch at a time
// under their final names and made durable by one directory sync, so that committing an
// extent needs one data sync of its file and nothing else: no rename, no directory sync
// per extent. Until Commit the file is pending: ListExtents and snapshots skip it, as they
// would a file still being written, and after a crash it is an unreferenced extent that the
// caller's sweep removes.
func (e *fileExtents) NewExtent(ctx context.Context) (store.ExtentWriter, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.pool) == 0 {
		if err := e.refill(); err != nil {
			return nil, fmt.Errorf("pebble: new extent: %w", err)
		}
	}
	pf := e.pool[0]
	e.pool = e.pool[1:]
	return &extentWriter{e: e, id: pf.id, f: pf.f}, nil
}

// pooledFile is a pre-created, empty, durable extent file.
type pooledFile struct {
	id uint64
	f  vfs.File
}

// refill creates poolBatch empty extent files and syncs the directory once. e.mu is held.
func (e *fileExtents) refill() error {
	var made []pooledFile
	for range poolBatch {
		id := e.next.Add(1)
		e.pending[id] = struct{}{} // before the file exists: never listed
		f, err := e.fs.Create(e.path(id), vfs.WriteCategoryUnspecified)
		if err != nil {
			delete(e.pending, id)
			e.discard(made)
			return err
		}
		made = append(made, pooledFile{id, f})
	}
	if err := syncDir(e.fs, e.dir); err != nil {
		e.discard(made)
		return err
	}
	e.pool = made
	return nil
}

// discard closes and removes pool files that will never be handed out. e.mu is held.
func (e *fileExtents) discard(files []pooledFile) {
	for _, pf := range files {
		_ = pf.f.Close()
		_ = e.fs.Remove(e.path(pf.id))
		delete(e.pending, pf.id)
	}
}

// close removes the files NewExtent has not handed out.
func (e *fileExtents) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.discard(e.pool)
	e.pool = nil
}

// isPending reports whether id is a file not yet committed (pooled or being written).
func (e *fileExtents) isPending(id uint64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.pending[id]
	return ok
}

type extentWriter struct {
	e        *fileExtents
	id       uint64
	f        vfs.File
	done     bool
	written  int64
	synced   int64  // bytes whose writeback has been started and waited for (SyncTo)
	kicked   int64  // bytes whose writeback has been started (startWriteback)
	noRanges bool   // the file system syncs fully on SyncTo: do not call it again
	scratch  []byte // the copy handed to a file system that may modify it (not onDisk)
}

func (w *extentWriter) Write(p []byte) (n int, err error) {
	if w.e.onDisk {
		n, err = w.f.Write(p)
	} else {
		w.scratch = append(w.scratch[:0], p...)
		n, err = w.f.Write(w.scratch)
	}
	w.written += int64(n)
	if err != nil || w.noRanges {
		return n, err
	}
	if w.written-w.synced >= writeback {
		full, serr := w.f.SyncTo(w.written)
		if serr != nil {
			return n, serr
		}
		w.synced, w.noRanges = w.written, full
	} else if w.e.onDisk && w.synced == 0 && w.written-w.kicked >= kickEvery {
		startWriteback(w.f, w.kicked, w.written-w.kicked)
		w.kicked = w.written
	}
	return n, nil
}

func (w *extentWriter) ID() uint64 { return w.id }

// Commit syncs the file's data (fdatasync: the data and the size, which is what reading it
// back needs); its directory entry has been durable since NewExtent, so the extent exists
// after a crash once Commit has returned.
func (w *extentWriter) Commit() (uint64, error) {
	if w.done {
		return 0, errors.New("pebble: extent already finished")
	}
	w.done = true
	err := w.f.SyncData()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = w.e.fs.Remove(w.e.path(w.id))
		w.e.unpend(w.id)
		return 0, fmt.Errorf("pebble: commit extent: %w", err)
	}
	w.e.unpend(w.id)
	return w.id, nil
}

func (w *extentWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	_ = w.f.Close()
	_ = w.e.fs.Remove(w.e.path(w.id))
	w.e.unpend(w.id)
}

func (e *fileExtents) unpend(id uint64) {
	e.mu.Lock()
	delete(e.pending, id)
	e.mu.Unlock()
}

func (e *fileExtents) ReadExtent(ctx context.Context, id uint64, off, n int64) (io.ReadCloser, error) {
	if e.onDisk {
		return e.readOSFile(e.path(id), off, n)
	}
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

// readOSFile opens an extent of the disk engine as an *os.File section (osSection), whose
// WriteTo hands the bytes to a writer without copying them through a buffer of ours.
func (e *fileExtents) readOSFile(path string, off, n int64) (io.ReadCloser, error) {
	f, err := os.Open(path)
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
	return &osSection{e: e, f: f, off: off, want: n}, nil
}

// osSection reads want bytes of f from off on and reports a short extent as
// ErrUnexpectedEOF.
type osSection struct {
	e         *fileExtents
	f         *os.File
	off       int64
	want, got int64
}

func (s *osSection) Read(p []byte) (int, error) {
	if s.got >= s.want {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), s.want-s.got)]
	n, err := s.f.ReadAt(p, s.off+s.got) // ReadAt: WriteTo (sendfile) moves the file offset
	s.got += int64(n)
	if err == io.EOF {
		if n > 0 {
			err = nil
		} else if s.got < s.want {
			err = io.ErrUnexpectedEOF
		}
	}
	return n, err
}

// WriteTo writes the rest of the section to w, straight from the page cache either way:
//
//   - while no more sends run than there are CPUs, by writeSection (from a memory mapping
//     where the system has one): one copy, into the socket. A single 256 MiB download on
//     loopback got 1.2-1.3x the MB/s this way that it got through sendfile, which left it
//     at about half of what a server writing from memory reaches, the CPUs not busy;
//   - beyond that, through w's ReadFrom (a connection's sendfile, if w reaches one): no copy
//     at all, which matters once the CPUs are the limit (16 concurrent 256 MiB downloads
//     cost 1.3x the server CPU per download through the mapping).
func (s *osSection) WriteTo(w io.Writer) (n int64, err error) {
	rf, canReadFrom := w.(io.ReaderFrom)
	if s.e.sending.Add(1) > s.e.sendfileAt && canReadFrom {
		if _, err = s.f.Seek(s.off+s.got, io.SeekStart); err == nil {
			n, err = rf.ReadFrom(&io.LimitedReader{R: s.f, N: s.want - s.got})
		}
	} else {
		n, err = writeSection(w, s.f, s.off+s.got, s.want-s.got)
	}
	s.e.sending.Add(-1)
	s.got += n
	if err == nil && s.got < s.want {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (s *osSection) Close() error { return s.f.Close() }

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
		if id, err := strconv.ParseUint(n, 10, 64); err == nil && !e.isPending(id) {
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
