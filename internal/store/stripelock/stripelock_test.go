package stripelock

import (
	"fmt"
	"testing"

	"github.com/tablo/tablo/internal/store"
)

// These tests look at the stripes themselves (TryLock, TryRLock), so that what a lock set
// holds is seen without waiting on another goroutine.

// distinct returns n lock names that fall on n different stripes of t.
func distinct(t *Table, n int) []string {
	var names []string
	seen := map[uint64]bool{}
	for i := 0; len(names) < n; i++ {
		name := fmt.Sprintf("lock-%d", i)
		if s := t.stripe(name); !seen[s] {
			seen[s] = true
			names = append(names, name)
		}
	}
	return names
}

// held reports how stripe s is held: "free", "shared" or "exclusive".
func held(t *Table, s uint64) string {
	m := &t.stripes[s]
	if m.TryLock() {
		m.Unlock()
		return "free"
	}
	if m.TryRLock() {
		m.RUnlock()
		return "shared"
	}
	return "exclusive"
}

// Every lock of a set is held, each the way it was asked for, until release, which frees
// every stripe.
func TestAcquireHoldsEachLockAsAsked(t *testing.T) {
	tb := New()
	names := distinct(tb, 6)
	var locks []store.Lock
	for i, n := range names {
		locks = append(locks, store.Lock{Name: n, Shared: i%2 == 1})
	}
	release := tb.Acquire(locks)
	for i, n := range names {
		want := "exclusive"
		if i%2 == 1 {
			want = "shared"
		}
		if got := held(tb, tb.stripe(n)); got != want {
			t.Errorf("%s (shared %v): %s, want %s", n, locks[i].Shared, got, want)
		}
	}
	release()
	for _, n := range names {
		if got := held(tb, tb.stripe(n)); got != "free" {
			t.Errorf("%s after release: %s", n, got)
		}
	}
}

// A name asked for both ways is held exclusively, once (a second Lock of the same stripe
// would deadlock, a second RLock would leave it held after release).
func TestAcquireSameNameTwice(t *testing.T) {
	tb := New()
	for _, tc := range [][]store.Lock{
		{{Name: "a", Shared: true}, {Name: "a"}},
		{{Name: "a"}, {Name: "a", Shared: true}},
		{{Name: "a"}, {Name: "a"}},
		{{Name: "a", Shared: true}, {Name: "a", Shared: true}},
	} {
		release := tb.Acquire(tc)
		want := "exclusive"
		if tc[0].Shared && tc[1].Shared {
			want = "shared"
		}
		if got := held(tb, tb.stripe("a")); got != want {
			t.Errorf("%+v: %s, want %s", tc, got, want)
		}
		release()
		if got := held(tb, tb.stripe("a")); got != "free" {
			t.Errorf("%+v after release: %s", tc, got)
		}
	}
}

// The plan takes stripes in strictly ascending order, one entry per stripe, exclusive when
// any lock on the stripe is: two lock sets then never wait on each other in a cycle.
func TestPlanOrder(t *testing.T) {
	tb := New()
	names := distinct(tb, 40)
	var locks []store.Lock
	// Every name twice, once shared, in an order unrelated to the stripes; every third
	// name only shared.
	for i := len(names) - 1; i >= 0; i-- {
		locks = append(locks, store.Lock{Name: names[i], Shared: true})
	}
	for i, n := range names {
		locks = append(locks, store.Lock{Name: n, Shared: i%3 == 0})
	}
	plan := tb.plan(locks)
	if len(plan) != len(names) {
		t.Fatalf("%d stripes planned for %d names", len(plan), len(names))
	}
	for i := 1; i < len(plan); i++ {
		if plan[i-1].stripe >= plan[i].stripe {
			t.Fatalf("stripes out of order at %d: %d then %d", i, plan[i-1].stripe, plan[i].stripe)
		}
	}
	for i, n := range names {
		s := tb.stripe(n)
		for _, w := range plan {
			if w.stripe == s && w.exclusive != (i%3 != 0) {
				t.Errorf("%s: exclusive %v, want %v", n, w.exclusive, i%3 != 0)
			}
		}
	}
}
