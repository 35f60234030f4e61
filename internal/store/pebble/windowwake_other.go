//go:build !linux

package pebble

import "time"

// windowWake is a no-op where there is no timerfd: the group-commit window ends when Go's
// timer fires (see windowwake_linux.go).
type windowWake struct{}

func newWindowWake() *windowWake        { return nil }
func (w *windowWake) arm(time.Duration) {}
func (w *windowWake) close()            {}
