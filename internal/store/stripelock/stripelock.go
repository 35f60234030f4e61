// Package stripelock turns an Update's lock set (store.Lock names) into a fixed set of
// striped reader/writer mutexes, acquired in stripe order so that lock sets never deadlock.
// Engines use it to order one process's Updates; it knows nothing of other processes.
package stripelock

import (
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

// Acquire takes the stripes for locks in ascending stripe order (exclusive wins when a stripe
// is wanted both ways) and returns the release function.
func (t *Table) Acquire(locks []store.Lock) (release func()) {
	type want struct {
		stripe    uint64
		exclusive bool
	}
	wants := make([]want, 0, len(locks))
	for _, l := range locks {
		wants = append(wants, want{maphash.String(t.seed, l.Name) % stripes, !l.Shared})
	}
	slices.SortFunc(wants, func(a, b want) int {
		if a.stripe != b.stripe {
			if a.stripe < b.stripe {
				return -1
			}
			return 1
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
	wants = slices.CompactFunc(wants, func(a, b want) bool { return a.stripe == b.stripe })
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
