package pebble

import (
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// windowWake makes a group-commit window end on time when the process is idle.
//
// Pebble ends the window with a Go timer. When every goroutine is parked, which is exactly
// the state of a server whose writers all wait for the next WAL sync, the Go scheduler
// sleeps in epoll_wait, whose timeout is in whole milliseconds: a 300 µs timer then fires
// after about 1.1 ms (measured: time.AfterFunc(300µs) p50 1.09 ms on an idle process; a
// nanosleep of 300 µs, 0.37 ms). Every writer waits for that, on top of the fdatasync.
// windowWake arms a timerfd that the scheduler's epoll_wait watches, for just after the
// window's end: it wakes the scheduler, which then runs the timer that ends the window.
type windowWake struct {
	f     *os.File // the timerfd, in Go's netpoller
	fd    int
	wakes atomic.Int64 // expirations read (tests)
}

// wakeSlack is how long after the window's end the timerfd fires: Pebble arms its timer
// just after it asks for the window, and a wake-up before that timer is due would let the
// scheduler go back to sleep for another millisecond.
const wakeSlack = 20 * time.Microsecond

// newWindowWake returns a windowWake, or nil if the system refuses a timerfd (the window
// then ends when the Go timer fires, as without it).
func newWindowWake() *windowWake {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	w := &windowWake{f: os.NewFile(uintptr(fd), "group-commit-timerfd"), fd: fd}
	go w.drain()
	return w
}

// drain reads the timerfd's expirations until it is closed: the read parks in the netpoller,
// which is what wakes the scheduler.
func (w *windowWake) drain() {
	var buf [8]byte
	for {
		if _, err := w.f.Read(buf[:]); err != nil {
			return
		}
		w.wakes.Add(1)
	}
}

// arm makes the scheduler wake d (plus wakeSlack) from now.
func (w *windowWake) arm(d time.Duration) {
	if w == nil {
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d + wakeSlack))}
	_ = unix.TimerfdSettime(w.fd, 0, &spec, nil)
}

// close stops the wake-ups (safe on nil and twice).
func (w *windowWake) close() {
	if w != nil {
		_ = w.f.Close()
	}
}
