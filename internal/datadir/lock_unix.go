//go:build unix

package datadir

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock without waiting. flock locks belong to the open file, so
// a second Acquire in the same process is refused too.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
