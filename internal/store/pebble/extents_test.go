package pebble

import (
	"context"
	"errors"
	"io"
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

// TestShortExtentReads: a read of a section that runs past the end of its extent, or starts
// past it, returns the bytes there are and then io.ErrUnexpectedEOF, never an endless run of
// empty reads; a section that ends exactly at the end reads to io.EOF.
func TestShortExtentReads(t *testing.T) {
	for _, mem := range []bool{false, true} {
		t.Run(map[bool]string{false: "disk", true: "memory"}[mem], func(t *testing.T) {
			ctx := context.Background()
			d, err := Open(Options{Dir: t.TempDir(), InMemory: mem})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			w, err := d.Extents().NewExtent(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte("0123456789")); err != nil {
				t.Fatal(err)
			}
			id, err := w.Commit()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				off, n int64
				want   string
				err    error
			}{
				{4, 6, "456789", nil},
				{4, 20, "456789", io.ErrUnexpectedEOF},
				{10, 1, "", io.ErrUnexpectedEOF},
				{20, 5, "", io.ErrUnexpectedEOF},
			} {
				r, err := d.Extents().ReadExtent(ctx, id, c.off, c.n)
				if err != nil {
					t.Fatal(err)
				}
				got, err := readBounded(r)
				r.Close()
				if string(got) != c.want || !errors.Is(err, c.err) {
					t.Errorf("[%d, +%d): %q, %v; want %q, %v", c.off, c.n, got, err, c.want, c.err)
				}
			}
		})
	}
}

// readBounded is io.ReadAll that gives up after a few reads that return nothing and no error.
func readBounded(r io.Reader) ([]byte, error) {
	var out []byte
	buf := make([]byte, 64)
	for empty := 0; empty < 3; {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if n == 0 {
			empty++
		}
	}
	return out, errors.New("reads return nothing, without an error")
}
