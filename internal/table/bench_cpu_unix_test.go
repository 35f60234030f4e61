//go:build unix

package table

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) this process has used. On a shared machine it
// measures a benchmark's cost better than wall time, which includes waiting for a core.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
