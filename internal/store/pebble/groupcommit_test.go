package pebble

import (
	"testing"
	"time"
)

func TestGroupCommitLoneWriterNeverWaits(t *testing.T) {
	g := &groupCommit{window: time.Millisecond, minWriters: 1}
	for range 10 {
		g.enter()
		if d := g.interval(); d != 0 {
			t.Fatalf("one writer: interval %v, want 0", d)
		}
		g.leave()
	}
}

func TestGroupCommitWaitsOnlyAboveMinWriters(t *testing.T) {
	for _, tc := range []struct {
		writers int
		want    time.Duration
	}{{1, 0}, {4, 0}, {5, time.Millisecond}, {16, time.Millisecond}} {
		g := &groupCommit{window: time.Millisecond, minWriters: 4}
		for range tc.writers {
			g.enter()
		}
		if d := g.interval(); d != tc.want {
			t.Errorf("%d writers in flight: interval %v, want %v", tc.writers, d, tc.want)
		}
	}
}

// The peak counts writers that overlapped at any moment since the last sync, even if most have
// left by the time Pebble asks.
func TestGroupCommitCountsPeakSinceLastSync(t *testing.T) {
	g := &groupCommit{window: time.Millisecond, minWriters: 4}
	for range 6 {
		g.enter()
	}
	for range 5 {
		g.leave()
	}
	if d := g.interval(); d != time.Millisecond {
		t.Fatalf("6 writers overlapped since the last sync: interval %v, want the window", d)
	}
}

// After a burst of 16 writers, the window stays on while the decaying peak is above
// minWriters, then switches off: one writer left, 16-4 = 12 more syncs wait.
func TestGroupCommitPeakDecays(t *testing.T) {
	g := &groupCommit{window: time.Millisecond, minWriters: 4}
	for range 16 {
		g.enter()
	}
	for range 15 {
		g.leave()
	}
	waits := 0
	for range 40 {
		if g.interval() > 0 {
			waits++
		}
	}
	if waits != 12 {
		t.Fatalf("syncs that waited after the burst: %d, want 12", waits)
	}
	// A new burst turns it back on at once.
	for range 8 {
		g.enter()
	}
	if d := g.interval(); d != time.Millisecond {
		t.Fatalf("after a new burst: interval %v, want the window", d)
	}
}

func TestGroupCommitNoWindowNeverWaits(t *testing.T) {
	g := &groupCommit{minWriters: 1}
	for range 8 {
		g.enter()
	}
	if d := g.interval(); d != 0 {
		t.Fatalf("window 0: interval %v, want 0", d)
	}
}
