package pebble

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/store"
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
	overlap(g, 6, 1)
	if d := g.interval(); d != time.Millisecond {
		t.Fatalf("6 writers overlapped since the last sync: interval %v, want the window", d)
	}
}

// After a burst of 16 writers, the window stays on while the decaying peak is above
// minWriters, then switches off: one writer left, 16-4 = 12 more syncs wait.
func TestGroupCommitPeakDecays(t *testing.T) {
	g := &groupCommit{window: time.Millisecond, minWriters: 4}
	overlap(g, 16, 1)
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
	if n := g.waits.Load(); n != 0 {
		t.Fatalf("window 0: %d syncs counted as waiting", n)
	}
}

// overlap has peak writers in flight at once, then all but remaining leave.
func overlap(g *groupCommit, peak, remaining int) {
	for range peak {
		g.enter()
	}
	for range peak - remaining {
		g.leave()
	}
}

func TestGroupCommitDefaults(t *testing.T) {
	db, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.group.window != 300*time.Microsecond || db.group.minWriters != int64(2*runtime.GOMAXPROCS(0)) {
		t.Fatalf("defaults: window %v, minWriters %d; want 300µs, 2 × GOMAXPROCS", db.group.window, db.group.minWriters)
	}
	db2, err := Open(Options{InMemory: true, GroupCommitWindow: -1, GroupCommitMinWriters: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if db2.group.window != 0 || db2.group.minWriters != 3 {
		t.Fatalf("window -1, 3 writers: window %v, minWriters %d", db2.group.window, db2.group.minWriters)
	}
}

// TestGroupCommitAskedBySyncs checks that Pebble consults the policy: after concurrent durable
// writes, the decaying peak it keeps has been set by at least one sync.
func TestGroupCommitAskedBySyncs(t *testing.T) {
	db, err := Open(Options{Dir: t.TempDir(), GroupCommitMinWriters: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 20 {
				k := fmt.Appendf(nil, "w%d-%d", w, i)
				if err := db.Update(context.Background(), nil, func(tx store.Txn) error { return tx.Set(k, k) }); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if db.group.recent.Load() == 0 {
		t.Fatal("no WAL sync asked the group-commit policy (WALMinSyncInterval not wired)")
	}
}
