// Package datadir claims a data directory for one Tablo process: it checks that the
// directory is usable, creates it if needed, and holds an exclusive lock on a file in it
// (tablo.lock) with the owner's PID beside it (tablo.pid), so that a second Tablo on the same
// directory is refused with a clear message instead of the engine's raw lock error.
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const (
	lockName = "tablo.lock"
	pidName  = "tablo.pid"
)

// ErrInUse is returned (wrapped) when another process holds the directory.
var ErrInUse = errors.New("in use by another Tablo")

// Claim is a held data directory.
type Claim struct {
	dir  string
	lock *os.File
}

// Acquire checks dir, creating it (and its parents) if it does not exist, and locks it.
func Acquire(dir string) (*Claim, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(abs, 0o750); err != nil {
			return nil, fmt.Errorf("data directory %s cannot be created: %w", abs, err)
		}
	case err != nil:
		return nil, fmt.Errorf("data directory %s is not accessible: %w", abs, err)
	case !st.IsDir():
		return nil, fmt.Errorf("data directory %s is not a directory", abs)
	default:
		if _, err := os.ReadDir(abs); err != nil {
			return nil, fmt.Errorf("data directory %s is not readable: %w", abs, err)
		}
	}
	f, err := os.OpenFile(filepath.Join(abs, lockName), os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("data directory %s is not writable: %w", abs, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		who := "another process"
		if pid := readPID(abs); pid > 0 {
			who = "process " + strconv.Itoa(pid)
		}
		return nil, fmt.Errorf("data directory %s is %w (%s holds %s); stop it or choose another --data-dir",
			abs, ErrInUse, who, filepath.Join(abs, lockName))
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := os.WriteFile(filepath.Join(abs, pidName), pid, 0o640); err != nil {
		f.Close()
		return nil, fmt.Errorf("data directory %s is not writable: %w", abs, err)
	}
	return &Claim{dir: abs, lock: f}, nil
}

// Dir is the claimed directory's absolute path.
func (c *Claim) Dir() string { return c.dir }

// Release removes the PID file and unlocks the directory.
func (c *Claim) Release() error {
	_ = os.Remove(filepath.Join(c.dir, pidName))
	return c.lock.Close() // closing the file releases the lock
}

func readPID(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, pidName))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return n
}
