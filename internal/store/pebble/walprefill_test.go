package pebble

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tablo/tablo/internal/store"
)

// TestWALPrefill checks that a new WAL starts as a prefilled, synced file whose records still
// begin at offset 0, and that the zeroed tail reads back as the end of the log.
func TestWALPrefill(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	db, err := Open(Options{Dir: "/data", FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List("/data")
	if err != nil {
		t.Fatal(err)
	}
	var wal string
	for _, n := range names {
		if strings.HasSuffix(n, ".log") {
			wal = fs.PathJoin("/data", n)
		}
	}
	if wal == "" {
		t.Fatalf("no WAL among %v", names)
	}
	f, err := fs.Open(wal)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if min := 4 << 20; len(data) < min {
		t.Errorf("WAL %s is %d bytes, want at least %d (prefilled)", wal, len(data), min)
	}
	if bytes.Equal(data[:16], make([]byte, 16)) {
		t.Errorf("WAL starts with zeros: the first record was not written at offset 0")
	}

	// Power loss: only what was synced survives, the prefill included. The log must replay
	// up to its zeroed tail.
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	db.Close()
	db2, err := Open(Options{Dir: "/data", FS: crashed})
	if err != nil {
		t.Fatalf("reopen after a crash with a prefilled WAL: %v", err)
	}
	defer db2.Close()
	if v, err := db2.Get(ctx, []byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("after the crash: %q, %v", v, err)
	}
}

func TestPrefillLeavesWriteOffset(t *testing.T) {
	fs := vfs.NewMem()
	f, err := fs.Create("/w.log", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if err := prefill(f, zeroChunk+100); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, _ := fs.Open("/w.log")
	data, _ := io.ReadAll(r)
	if len(data) != zeroChunk+100 || string(data[:3]) != "abc" || data[3] != 0 || data[len(data)-1] != 0 {
		t.Fatalf("prefilled file: %d bytes, starts %q", len(data), data[:4])
	}
}

// Only WALs directly in the DB's directory are prefilled: a snapshot's copy of a WAL (in a
// subdirectory) and other files are not; without a directory, every WAL is.
func TestWALPrefillOnlyInDir(t *testing.T) {
	sizeOf := func(fs vfs.FS, name string) int64 {
		t.Helper()
		if err := fs.MkdirAll(fs.PathDir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	const size = 64 << 10
	inDir := walPrefillFS{FS: vfs.NewMem(), size: size, dir: "/data"}
	for name, want := range map[string]int64{
		"/data/000004.log":              size,
		"/data/snapshots/s1/000004.log": 0,
		"/data/000005.sst":              0,
		"/elsewhere/000006.log":         0,
	} {
		if got := sizeOf(inDir, name); got != want {
			t.Errorf("%s: %d bytes, want %d", name, got, want)
		}
	}
	anyDir := walPrefillFS{FS: vfs.NewMem(), size: size}
	if got := sizeOf(anyDir, "/a/b/000007.log"); got != size {
		t.Errorf("without a directory, a WAL got %d bytes, want %d", got, size)
	}
}
