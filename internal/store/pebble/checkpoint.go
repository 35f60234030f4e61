package pebble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tablo/tablo/internal/store"
)

// Named snapshots are Pebble checkpoints in <dir>/snapshots/<name>: sstables hard-linked
// (so saving takes milliseconds whatever the data size), the manifest and WAL copied. A
// restore closes Pebble, replaces the engine files at the top of the directory with links to
// the snapshot's, and opens Pebble again. In memory the same happens inside the in-memory
// file system, so snapshots work there too and vanish with the process.

// snapshotsDir is where snapshots live, below the data directory; a save in progress
// writes to NAME + savingSuffix.
const (
	snapshotsDir = "snapshots"
	savingSuffix = ".saving"
)

// restoreMarker names the snapshot a restore is installing. It is written (and synced)
// before the engine files are touched and removed once they are all in place, so a crash
// mid-restore is finished by the next Open rather than leaving a mix of two states.
const restoreMarker = "RESTORING"

// Errors of the snapshot operations (wrapped; test with errors.Is).
var (
	ErrSnapshotExists   = errors.New("snapshot already exists")
	ErrSnapshotNotFound = errors.New("snapshot not found")
	ErrSnapshotName     = errors.New("snapshot names are 1-64 letters, digits, '.', '_' or '-', not starting with '.' nor ending with \"" + savingSuffix + "\"")
)

// ValidSnapshotName reports whether name may name a snapshot (it becomes a directory name).
func ValidSnapshotName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '.' || strings.HasSuffix(name, savingSuffix) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (d *DB) snapshotPath(name string) string {
	return d.fs.PathJoin(d.dir, snapshotsDir, name)
}

// SaveSnapshot saves the engine's current committed state as snapshot name.
func (d *DB) SaveSnapshot(ctx context.Context, name string) error {
	if !ValidSnapshotName(name) {
		return fmt.Errorf("pebble: %q: %w", name, ErrSnapshotName)
	}
	if !d.enter() {
		return store.ErrClosed
	}
	defer d.inflight.RUnlock()
	d.snapMu.Lock()
	defer d.snapMu.Unlock()
	path := d.snapshotPath(name)
	if _, err := d.fs.Stat(path); err == nil {
		return fmt.Errorf("pebble: snapshot %q: %w", name, ErrSnapshotExists)
	}
	if err := d.fs.MkdirAll(d.fs.PathJoin(d.dir, snapshotsDir), 0o755); err != nil {
		return fmt.Errorf("pebble: snapshot %q: %w", name, err)
	}
	// Checkpoint writes into a temporary name first, so a failed save leaves no snapshot.
	tmp := path + savingSuffix
	_ = d.fs.RemoveAll(tmp)
	if err := d.db.Checkpoint(tmp, pebble.WithFlushedWAL()); err != nil {
		_ = d.fs.RemoveAll(tmp)
		return fmt.Errorf("pebble: snapshot %q: %w", name, err)
	}
	// The extents after the checkpoint: a superset of those its records name (an extent is
	// committed before any record names it, and the sweep deletes only extents that two
	// sweeps a minute apart found unreferenced).
	if err := d.extents.linkCommitted(d.fs.PathJoin(tmp, extentDir)); err != nil {
		_ = d.fs.RemoveAll(tmp)
		return fmt.Errorf("pebble: snapshot %q: extents: %w", name, err)
	}
	if err := d.fs.Rename(tmp, path); err != nil {
		return fmt.Errorf("pebble: snapshot %q: %w", name, err)
	}
	return syncDir(d.fs, d.fs.PathJoin(d.dir, snapshotsDir))
}

// Snapshots lists the saved snapshots' names in order.
func (d *DB) Snapshots() ([]string, error) {
	names, err := d.fs.List(d.fs.PathJoin(d.dir, snapshotsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pebble: list snapshots: %w", err)
	}
	out := names[:0]
	for _, n := range names {
		if ValidSnapshotName(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// DeleteSnapshot removes snapshot name.
func (d *DB) DeleteSnapshot(name string) error {
	if !ValidSnapshotName(name) {
		return fmt.Errorf("pebble: %q: %w", name, ErrSnapshotName)
	}
	d.snapMu.Lock()
	defer d.snapMu.Unlock()
	path := d.snapshotPath(name)
	if _, err := d.fs.Stat(path); err != nil {
		return fmt.Errorf("pebble: snapshot %q: %w", name, ErrSnapshotNotFound)
	}
	if err := d.fs.RemoveAll(path); err != nil {
		return fmt.Errorf("pebble: delete snapshot %q: %w", name, err)
	}
	return nil
}

// RestoreSnapshot replaces the engine's contents with snapshot name. It waits for calls in
// flight and open store snapshots (the caller must have released its own, e.g. by dropping
// caches that hold them); calls made meanwhile wait and then see the restored state.
func (d *DB) RestoreSnapshot(ctx context.Context, name string) error {
	if !ValidSnapshotName(name) {
		return fmt.Errorf("pebble: %q: %w", name, ErrSnapshotName)
	}
	d.snapMu.Lock()
	defer d.snapMu.Unlock()
	if _, err := d.fs.Stat(d.snapshotPath(name)); err != nil {
		return fmt.Errorf("pebble: snapshot %q: %w", name, ErrSnapshotNotFound)
	}
	d.inflight.Lock()
	defer d.inflight.Unlock()
	if d.closed.Load() {
		return store.ErrClosed
	}
	d.snapshots.Wait()
	d.keepStats()
	// reopen opens Pebble again after a failure; if even that fails the engine is closed
	// (calls return store.ErrClosed) rather than left on a closed Pebble.
	reopen := func(err error) error {
		if oerr := d.open(); oerr != nil {
			d.closed.Store(true)
			return errors.Join(err, oerr)
		}
		return err
	}
	if err := d.db.Close(); err != nil {
		return reopen(fmt.Errorf("pebble: restore %q: close: %w", name, err))
	}
	if err := writeMarker(d.fs, d.dir, restoreMarker, name); err != nil {
		return reopen(fmt.Errorf("pebble: restore %q: %w", name, err))
	}
	if err := d.finishRestore(); err != nil {
		// The marker stays, so the next Open finishes the restore; until then, closed.
		d.closed.Store(true)
		return err
	}
	return reopen(nil)
}

// finishRestore completes a restore whose marker is present (one interrupted by a crash,
// or the one RestoreSnapshot just started); otherwise it does nothing. It is idempotent.
func (d *DB) finishRestore() error {
	markerPath := d.fs.PathJoin(d.dir, restoreMarker)
	f, err := d.fs.Open(markerPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pebble: restore marker: %w", err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("pebble: restore marker: %w", err)
	}
	name := string(b)
	src := d.snapshotPath(name)
	files, err := d.fs.List(src)
	if err != nil || !ValidSnapshotName(name) {
		return fmt.Errorf("pebble: finish restore of snapshot %q: %v", name, err)
	}
	existing, err := d.fs.List(d.dir)
	if err != nil {
		return fmt.Errorf("pebble: restore: %w", err)
	}
	for _, n := range existing {
		if isEngineFile(n) {
			if err := d.fs.Remove(d.fs.PathJoin(d.dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("pebble: restore: %w", err)
			}
		}
	}
	if err := restoreExtents(d.fs, d.fs.PathJoin(src, extentDir), d.fs.PathJoin(d.dir, extentDir)); err != nil {
		return fmt.Errorf("pebble: restore %q: extents: %w", name, err)
	}
	for _, n := range files {
		if n == extentDir {
			continue
		}
		// Links, not copies: the snapshot stays intact because Pebble never modifies a file
		// in place (it writes new ones and deletes old ones, which only drops a link).
		// Except the WAL, which Pebble appends to (or recycles) after opening: copied.
		from, to := d.fs.PathJoin(src, n), d.fs.PathJoin(d.dir, n)
		if strings.HasSuffix(n, ".log") || strings.HasPrefix(n, "MANIFEST-") {
			err = vfs.CopyAcrossFS(d.fs, from, d.fs, to)
		} else {
			err = d.fs.Link(from, to)
		}
		if err != nil {
			return fmt.Errorf("pebble: restore %q: %w", name, err)
		}
	}
	if err := syncDir(d.fs, d.dir); err != nil {
		return err
	}
	if err := d.fs.Remove(markerPath); err != nil {
		return fmt.Errorf("pebble: restore: %w", err)
	}
	return syncDir(d.fs, d.dir)
}

// isEngineFile reports whether name (at the top of the data directory) is one of Pebble's
// files; everything else there (snapshots, TLS files, other tools' files) is left alone.
func isEngineFile(name string) bool {
	switch {
	case name == "LOCK", name == "CURRENT",
		strings.HasPrefix(name, "MANIFEST-"), strings.HasPrefix(name, "OPTIONS-"),
		strings.HasPrefix(name, "marker."), strings.HasSuffix(name, ".dbtmp"):
		return true
	}
	num, ext, ok := strings.Cut(name, ".")
	if !ok || num == "" || strings.Trim(num, "0123456789") != "" {
		return false
	}
	return ext == "sst" || ext == "log" || ext == "blob"
}

func writeMarker(fs vfs.FS, dir, name, content string) error {
	f, err := fs.Create(fs.PathJoin(dir, name), vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte(content)); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(fs, dir)
}

func syncDir(fs vfs.FS, dir string) error {
	f, err := fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("pebble: sync %s: %w", dir, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("pebble: sync %s: %w", dir, err)
	}
	return nil
}

// DeleteAll deletes every key (a range deletion: milliseconds whatever the size; Pebble
// reclaims the space in compactions).
func (d *DB) DeleteAll(ctx context.Context) error {
	return d.Update(ctx, nil, func(tx store.Txn) error {
		return tx.DeleteRange([]byte{}, []byte{0xff, 0xff, 0xff, 0xff})
	})
}
