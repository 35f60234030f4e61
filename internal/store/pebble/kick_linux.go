package pebble

import (
	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing n bytes of f from off to the disk without
// waiting for them (sync_file_range, SYNC_FILE_RANGE_WRITE). A hint: errors are ignored, and
// durability still comes from the commit's fdatasync.
func startWriteback(f vfs.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
