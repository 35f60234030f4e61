package pebble

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// TestExtentCommitReportsSyncFailure: an extent whose data sync fails is not committed:
// Commit reports the failure (the file's close succeeding does not hide it) and the extent
// cannot be read.
func TestExtentCommitReportsSyncFailure(t *testing.T) {
	ctx := context.Background()
	var armed atomic.Bool
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if armed.Load() && op.Kind == errorfs.OpFileSyncData && filepath.Base(filepath.Dir(op.Path)) == extentDir {
			return errorfs.ErrInjected
		}
		return nil
	}))
	d, err := Open(Options{Dir: "/data", FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	w, err := d.Extents().NewExtent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("not durable")); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	id, err := w.Commit()
	armed.Store(false)
	if !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("failing data sync: Commit = %d, %v", id, err)
	}
	if r, err := d.Extents().ReadExtent(ctx, w.ID(), 0, -1); err == nil {
		r.Close()
		t.Fatal("the extent whose commit failed can be read")
	}
}
