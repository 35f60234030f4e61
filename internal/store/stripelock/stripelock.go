// Package stripelock turns an Update's lock set (store.Lock names) into a fixed set of
// striped reader/writer mutexes, acquired in stripe order so that lock sets never deadlock.
// Engines use it to order one process's Updates; it knows nothing of other processes.
package stripelock

import (
	"cmp"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/tablo/tablo/internal/store"
)

const stripes = 4096

// Table is a set of striped locks. The zero value is not ready: use New.
type Table struct {
	seed    maphash.Seed
	stripes [stripes]sync.RWMutex
}

// New returns a Table.
func New() *Table { return &Table{seed: maphash.MakeSeed()} }

// want is one stripe an Update takes, and how.
type want struct {
	stripe    uint64
	exclusive bool
}

// stripe is the stripe a lock name falls on.
func (t *Table) stripe(name string) uint64 { return maphash.String(t.seed, name) % stripes }

// plan turns locks into the stripes to take: ascending, one entry per stripe, exclusive when
// any lock on it is.
func (t *Table) plan(locks []store.Lock) []want {
	wants := make([]want, 0, len(locks))
	for _, l := range locks {
		wants = append(wants, want{t.stripe(l.Name), !l.Shared})
	}
	slices.SortFunc(wants, func(a, b want) int {
		if c := cmp.Compare(a.stripe, b.stripe); c != 0 {
			return c
		}
		if a.exclusive == b.exclusive {
			return 0
		}
		if a.exclusive {
			return -1
		}
		return 1
	})
	// Deduplicate: the first entry per stripe is exclusive if any was.
	return slices.CompactFunc(wants, func(a, b want) bool { return a.stripe == b.stripe })
}

// Acquire takes the stripes for locks in ascending stripe order (exclusive wins when a stripe
// is wanted both ways) and returns the release function.
func (t *Table) Acquire(locks []store.Lock) (release func()) {
	wants := t.plan(locks)
	for _, w := range wants {
		if w.exclusive {
			t.stripes[w.stripe].Lock()
		} else {
			t.stripes[w.stripe].RLock()
		}
	}
	return func() {
		for i := len(wants) - 1; i >= 0; i-- {
			if wants[i].exclusive {
				t.stripes[wants[i].stripe].Unlock()
			} else {
				t.stripes[wants[i].stripe].RUnlock()
			}
		}
	}
}
