package pebble

import (
	"sync/atomic"
	"time"
)

// groupCommit decides, after each WAL sync, whether the next one waits for more commits to
// share it (Pebble's WALMinSyncInterval).
//
// Waiting trades latency for CPU: on this project's reference VM an fdatasync costs ~60 µs of
// CPU, so sharing one among more writers matters once the CPUs are the bottleneck. With few
// writers it does not, and the wait is pure latency, longer than it looks: Go's runtime rounds
// a sub-millisecond timer up to ~1.1 ms when every goroutine is parked, which is exactly what
// happens when all the writers are waiting for the sync. So the window applies only while more
// writers were recently in flight than the CPUs can run at once (minWriters, by default twice
// GOMAXPROCS). Insert-one-pk through the SDK, 3 alternating rounds on 2 CPUs: 2 writers
// +20-44% inserts/s, 4 writers +13-26%, 8 and 16 unchanged within noise (docs/benchmarks.md).
type groupCommit struct {
	window     time.Duration // 0: never wait
	minWriters int64         // wait only when more writers than this were recently in flight

	writers atomic.Int64 // Updates between apply and the end of their sync wait
	peak    atomic.Int64 // most writers in flight at once since the last sync
	recent  atomic.Int64 // peak, decaying by one per sync
	waits   atomic.Int64 // syncs told to wait for the window (diagnostics and tests)
	// wake ends each window on time when the process is idle (windowwake_linux.go); nil:
	// the window ends when Go's timer fires.
	wake *windowWake
}

// enter records a writer about to apply its batch.
func (g *groupCommit) enter() {
	n := g.writers.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
}

// leave records a writer whose sync wait is over.
func (g *groupCommit) leave() { g.writers.Add(-1) }

// interval is called by Pebble after each WAL sync and returns how long the next one waits.
//
// The decision uses the most writers seen at once, not the count at this moment: how many are
// in flight right after a sync depends on the policy itself (without waits the syncs come
// faster, so fewer writers overlap each one), and a momentary count would lock in whichever
// mode it happened to start in. The peak decays by one per sync, so the window switches off
// within a few syncs of the load dropping.
func (g *groupCommit) interval() time.Duration {
	if g.window <= 0 {
		return 0
	}
	p := g.peak.Swap(g.writers.Load())
	r := max(p, g.recent.Load()-1)
	g.recent.Store(r)
	if r > g.minWriters {
		g.waits.Add(1)
		g.wake.arm(g.window)
		return g.window
	}
	return 0
}
