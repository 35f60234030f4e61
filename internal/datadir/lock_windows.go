//go:build windows

package datadir

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockFile locks the file's first byte exclusively without waiting.
func lockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
}
