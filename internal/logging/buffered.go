package logging

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// Buffered collects writes in memory and writes them out every interval (or when its
// buffer fills), so that a busy server pays one write system call per batch of log lines
// instead of one per request. Close (or Flush) writes out what is left.
type Buffered struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// NewBuffered starts a Buffered writer on w flushed every interval.
func NewBuffered(w io.Writer, interval time.Duration) *Buffered {
	b := &Buffered{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop(interval)
	return b
}

func (b *Buffered) loop(interval time.Duration) {
	defer close(b.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			_ = b.Flush()
		}
	}
}

func (b *Buffered) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Flush writes out what is buffered.
func (b *Buffered) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Flush()
}

// Close stops the flushing goroutine and flushes.
func (b *Buffered) Close() error {
	b.once.Do(func() {
		close(b.stop)
		<-b.done
	})
	return b.Flush()
}
