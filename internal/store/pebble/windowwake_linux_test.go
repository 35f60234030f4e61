package pebble

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/store"
)

// A window Pebble is told to wait arms the wake-up (no timing is asserted: the test waits
// for the timerfd's expiration to be read, however late).
func TestGroupCommitWindowArmsWake(t *testing.T) {
	w := newWindowWake()
	if w == nil {
		t.Skip("no timerfd")
	}
	defer w.close()
	g := &groupCommit{window: time.Millisecond, minWriters: 1, wake: w}
	overlap(g, 4, 4)
	if d := g.interval(); d != time.Millisecond {
		t.Fatalf("interval %v, want the window", d)
	}
	for deadline := time.Now().Add(10 * time.Second); w.wakes.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the window's wake-up never fired")
		}
	}
	// A sync that does not wait arms nothing.
	g2 := &groupCommit{window: time.Millisecond, minWriters: 8, wake: w}
	before := w.wakes.Load()
	g2.interval()
	time.Sleep(20 * time.Millisecond)
	if w.wakes.Load() != before {
		t.Fatal("a sync that does not wait armed the wake-up")
	}
}

// The engine arms wake-ups when its window is on, and closing it stops the reader.
func TestGroupCommitWakeWired(t *testing.T) {
	db, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if db.group.wake == nil {
		t.Fatal("durable engine with a window has no wake-up")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	off, err := Open(Options{Dir: t.TempDir(), GroupCommitWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if off.group.wake != nil {
		t.Fatal("window off, yet a wake-up")
	}
}

// BenchmarkGroupCommitWake: 16 writers committing durably back to back, with and without
// the wake-up: between syncs every writer is parked, the state in which Go's timers are
// late. ns/op is wall time per commit of the
// group; cpu-ns/op the process's CPU per commit. Run: go test ./internal/store/pebble -run -
// -bench GroupCommitWake -benchtime 20000x
func BenchmarkGroupCommitWake(b *testing.B) {
	for _, wake := range []bool{false, true} {
		b.Run(fmt.Sprintf("wake=%v", wake), func(b *testing.B) {
			db, err := Open(Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if !wake {
				db.group.wake.close()
				db.group.wake = nil // before any write: Pebble's log writer has not asked yet
			}
			var next atomic.Int64
			cpu0 := processCPU()
			b.ResetTimer()
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						k := fmt.Appendf(nil, "k%012d", i)
						if err := db.Update(context.Background(), nil, func(tx store.Txn) error { return tx.Set(k, make([]byte, 200)) }); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the process's user+system CPU time in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
