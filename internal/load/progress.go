package load

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress draws a live one-line status on a terminal. A nil *progress does nothing, which is
// what callers get when stderr is not a terminal.
type progress struct {
	out  io.Writer
	mu   sync.Mutex
	name string
	who  string
	lv   *live
	t0   time.Time
	done chan struct{}
	wg   sync.WaitGroup
}

// isTerminal reports whether w is a character device (a TTY) without reaching for x/term.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// startProgress starts the redraw loop; stop must be called.
func startProgress(out io.Writer) *progress {
	p := &progress{out: out, done: make(chan struct{})}
	p.wg.Add(1)
	go p.loop()
	return p
}

func (p *progress) loop() {
	defer p.wg.Done()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
			p.draw()
		}
	}
}

// set changes what the line describes; an empty name clears it.
func (p *progress) set(name, who string, lv *live) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.who, p.lv, p.t0 = name, who, lv, time.Now()
	if name == "" {
		fmt.Fprint(p.out, "\r\033[K")
	}
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.name == "" {
		return
	}
	el := time.Since(p.t0)
	if p.lv == nil {
		fmt.Fprintf(p.out, "\r\033[K%s %s %5.1fs", p.name, p.who, el.Seconds())
		return
	}
	ops := p.lv.ops.Load()
	fmt.Fprintf(p.out, "\r\033[K%s %s %5.1fs %9d ops %10.0f ops/s %6d errors",
		p.name, p.who, el.Seconds(), ops, float64(ops)/max(el.Seconds(), 1e-9), p.lv.errors.Load())
}

func (p *progress) stop() {
	if p == nil {
		return
	}
	close(p.done)
	p.wg.Wait()
	p.set("", "", nil)
}
