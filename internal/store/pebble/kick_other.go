//go:build !linux

package pebble

import "github.com/cockroachdb/pebble/v2/vfs"

// startWriteback does nothing where sync_file_range does not exist: the commit's sync
// writes everything.
func startWriteback(f vfs.File, off, n int64) {}
