package pebble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/tablo/tablo/internal/store"
)

func put(t *testing.T, d *DB, k, v string) {
	t.Helper()
	if err := d.Update(context.Background(), nil, func(tx store.Txn) error { return tx.Set([]byte(k), []byte(v)) }); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, d *DB, k string) string {
	t.Helper()
	v, err := d.Get(context.Background(), []byte(k))
	if errors.Is(err, store.ErrNotFound) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

func TestSnapshotSaveRestore(t *testing.T) {
	for _, mem := range []bool{false, true} {
		t.Run(map[bool]string{false: "disk", true: "memory"}[mem], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			d, err := Open(Options{Dir: dir, InMemory: mem})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			put(t, d, "a", "1")
			// Flushed, so that the snapshot shares a table file with the live engine, which a
			// restore must replace rather than trip over.
			if err := d.db.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := d.SaveSnapshot(ctx, "s1"); err != nil {
				t.Fatal(err)
			}
			if err := d.SaveSnapshot(ctx, "s1"); !errors.Is(err, ErrSnapshotExists) {
				t.Fatalf("second save: %v", err)
			}
			if err := d.SaveSnapshot(ctx, "../x"); !errors.Is(err, ErrSnapshotName) {
				t.Fatalf("bad name: %v", err)
			}
			put(t, d, "a", "2")
			put(t, d, "b", "2")
			if err := d.RestoreSnapshot(ctx, "s1"); err != nil {
				t.Fatal(err)
			}
			if get(t, d, "a") != "1" || get(t, d, "b") != "<none>" {
				t.Fatalf("after restore: a=%s b=%s", get(t, d, "a"), get(t, d, "b"))
			}
			// The snapshot survives writes after a restore, and restores again.
			put(t, d, "a", "3")
			if err := d.RestoreSnapshot(ctx, "s1"); err != nil {
				t.Fatal(err)
			}
			if get(t, d, "a") != "1" {
				t.Fatalf("second restore: a=%s", get(t, d, "a"))
			}
			if err := d.RestoreSnapshot(ctx, "nope"); !errors.Is(err, ErrSnapshotNotFound) {
				t.Fatalf("restore missing: %v", err)
			}
			if names, err := d.Snapshots(); err != nil || !slices.Equal(names, []string{"s1"}) {
				t.Fatalf("list: %v %v", names, err)
			}
			if err := d.DeleteSnapshot("s1"); err != nil {
				t.Fatal(err)
			}
			if names, _ := d.Snapshots(); len(names) != 0 {
				t.Fatalf("after delete: %v", names)
			}
			if err := d.DeleteAll(ctx); err != nil {
				t.Fatal(err)
			}
			if get(t, d, "a") != "<none>" {
				t.Fatal("DeleteAll left a key")
			}
			if s := d.Stats(); s.Commits == 0 || s.WALSyncs == 0 && !mem {
				t.Fatalf("stats: %+v", s)
			}
		})
	}
}

// A restore interrupted after its marker was written is finished by the next Open.
func TestRestoreFinishedAfterCrash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	put(t, d, "a", "1")
	if err := d.SaveSnapshot(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	put(t, d, "a", "2")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, restoreMarker), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Files that are not Pebble's, one of them numbered like Pebble's files are.
	for _, n := range []string{"other-tool.pid", "000042.bak"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if get(t, d, "a") != "1" {
		t.Fatalf("a=%s after an interrupted restore", get(t, d, "a"))
	}
	if _, err := os.Stat(filepath.Join(dir, restoreMarker)); !os.IsNotExist(err) {
		t.Fatal("marker left behind")
	}
	for _, n := range []string{"other-tool.pid", "000042.bak"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Fatalf("%s, not Pebble's, was removed", n)
		}
	}
}

// TestSnapshotKeepsExtents: a snapshot keeps the extents its records may name, so bytes the
// sweep deleted after the save are back after a restore, and new extents get fresh ids
// even after a restart.
func TestSnapshotKeepsExtents(t *testing.T) {
	for _, mem := range []bool{false, true} {
		t.Run(map[bool]string{false: "disk", true: "memory"}[mem], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			d, err := Open(Options{Dir: dir, InMemory: mem})
			if err != nil {
				t.Fatal(err)
			}
			// Several extents, so that saving and restoring must link each, not only the first.
			var ids []uint64
			for i := range 3 {
				w, err := d.Extents().NewExtent(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := fmt.Fprintf(w, "saved bytes %d", i); err != nil {
					t.Fatal(err)
				}
				id, err := w.Commit()
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			if err := d.SaveSnapshot(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			if err := d.Extents().DeleteExtents(ctx, ids); err != nil {
				t.Fatal(err)
			}
			if err := d.RestoreSnapshot(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			for i, id := range ids {
				want := fmt.Sprintf("saved bytes %d", i)
				r, err := d.Extents().ReadExtent(ctx, id, 0, int64(len(want)))
				if err != nil {
					t.Fatalf("extent %d after restore: %v", id, err)
				}
				b, _ := io.ReadAll(r)
				r.Close()
				if string(b) != want {
					t.Fatalf("extent %d after restore: %q, want %q", id, b, want)
				}
			}
			id := slices.Max(ids)
			if mem {
				return
			}
			// Deleted again and the engine reopened: the next id must not reuse the one the
			// snapshot still holds.
			if err := d.Extents().DeleteExtents(ctx, ids); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d, err = Open(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			w, err := d.Extents().NewExtent(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			if w.ID() <= id {
				t.Fatalf("new extent id %d reuses the snapshot's %d", w.ID(), id)
			}
		})
	}
}

// TestValidSnapshotNameLength: 64 characters is the longest valid name.
func TestValidSnapshotNameLength(t *testing.T) {
	if !ValidSnapshotName(strings.Repeat("a", 64)) {
		t.Error("64-character name refused")
	}
	if ValidSnapshotName(strings.Repeat("a", 65)) {
		t.Error("65-character name accepted")
	}
}

// TestValidSnapshotNameChars: exactly letters, digits, '.', '_' and '-' are allowed, so the
// bytes just outside each range ('/', ':', '@', '[', '`', '{') are refused.
func TestValidSnapshotNameChars(t *testing.T) {
	allowed := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
	for b := 0; b < 256; b++ {
		name := "x" + string([]byte{byte(b)})
		if got, want := ValidSnapshotName(name), strings.IndexByte(allowed, byte(b)) >= 0; got != want {
			t.Errorf("ValidSnapshotName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRestoreSurvivesCrashMidway: a restore that fails after removing the engine's files
// (here: linking the snapshot's files back fails) leaves its marker, durably, so that the
// next Open, even after a crash that loses everything unsynced, finishes it.
func TestRestoreSurvivesCrashMidway(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	var failing atomic.Bool
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		base := filepath.Base(op.Path)
		engineFile := strings.HasPrefix(base, "MANIFEST-") || strings.HasSuffix(base, ".log") || strings.HasSuffix(base, ".sst")
		if failing.Load() && filepath.Dir(op.Path) == "/data" && engineFile && (op.Kind == errorfs.OpLink || op.Kind == errorfs.OpCreate) {
			return errorfs.ErrInjected
		}
		return nil
	}))
	d, err := Open(Options{Dir: "/data", FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	put(t, d, "a", "1")
	if err := d.SaveSnapshot(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	put(t, d, "a", "2")
	failing.Store(true)
	if err := d.RestoreSnapshot(ctx, "s"); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("restore with failing links: %v", err)
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	d.Close()
	d, err = Open(Options{Dir: "/data", FS: crashed})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := get(t, d, "a"); got != "1" {
		t.Fatalf("a=%s after a crash during a restore, want the snapshot's 1", got)
	}
}
