//go:build !linux

package pebble

import "github.com/cockroachdb/pebble/v2/vfs"

// startWriteback and waitWriteback do nothing where sync_file_range does not exist; the
// commit's sync writes everything.
func startWriteback(f vfs.File, off, n int64) {}

func waitWriteback(f vfs.File, n int64) {}
