package pebble

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// walPrefillFS writes zeros over the first size bytes of every new WAL file and syncs them
// before Pebble writes its first record.
//
// Why: on ext4, an fdatasync of a file that grew, or of blocks that were only fallocated
// (Pebble preallocates WALs that way), must also write the inode and extent metadata: one more
// I/O and wait per sync. Pebble recycles old WAL files, whose blocks are already written, but
// only after its first memtable flushes, so a fresh database (a test suite's, a benchmark's)
// spends its first megabytes of writes on the dearer syncs. A bare 2 KB write+fdatasync loop,
// appending vs overwriting: 242-318 vs 144-164 µs; through the SDK on a fresh data directory,
// +5-13% single-writer inserts and upserts per second (docs/benchmarks.md). Cost: 4.4 MiB of
// zeros and one sync (2-5 ms) per fresh WAL, on the commit path while Pebble switches logs,
// and space Pebble's preallocation reserves anyway. Pebble's WAL reader already treats a
// zeroed tail as the end of the log (its recovery expects zeroed chunks from preallocation
// and recycling).
type walPrefillFS struct {
	vfs.FS
	size int64
	// dir, when set, limits the prefill to WALs directly in it: a snapshot's copy of a WAL
	// (in dir/snapshots/NAME) is never appended to, so zeros would only waste its disk.
	dir string
}

// zeroChunk bounds the buffer used for prefilling.
const zeroChunk = 256 << 10

// Create implements vfs.FS.
func (fs walPrefillFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil || !strings.HasSuffix(name, ".log") || (fs.dir != "" && fs.PathDir(name) != fs.PathDir(fs.PathJoin(fs.dir, "x"))) {
		return f, err
	}
	if err := prefill(f, fs.size); err != nil {
		f.Close()
		return nil, fmt.Errorf("pebble: prefill WAL %s: %w", name, err)
	}
	return f, nil
}

// prefill writes size zero bytes at the start of f (leaving its write offset at 0) and syncs.
func prefill(f vfs.File, size int64) error {
	zeros := make([]byte, min(size, zeroChunk))
	for off := int64(0); off < size; off += int64(len(zeros)) {
		if _, err := f.WriteAt(zeros[:min(int64(len(zeros)), size-off)], off); err != nil {
			return err
		}
	}
	return f.Sync()
}
