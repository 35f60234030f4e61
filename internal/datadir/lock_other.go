//go:build !unix && !windows

package datadir

import "os"

// lockFile does nothing where there is no file locking; the engine's own lock still
// refuses a second process.
func lockFile(*os.File) error { return nil }
