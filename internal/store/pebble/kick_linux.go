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

// waitWriteback waits until the writeback started for f's first n bytes is done
// (SYNC_FILE_RANGE_WAIT_BEFORE): it bounds the dirty pages of one writer, nothing more.
func waitWriteback(f vfs.File, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), 0, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE)
}
