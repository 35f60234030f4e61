package postgres

import (
	"bytes"
	"context"
	"sync"
	"time"
)

// A gatherer lets calls from different requests share one statement when the database is
// already busy with such statements. Each statement costs a round trip, a wake-up of a
// backend and the protocol's per-statement work on both sides (and, for a write, a
// transaction and its commit); at 16 clients on a small machine those, not the rows, are most
// of an operation's CPU, and one statement of many point lookups or many rows costs little
// more than one of one.
//
// No call waits when the database is idle: while fewer than limit of the gatherer's
// statements are in flight, a call sends its own at once. Beyond that, calls join the one
// group being gathered, whose first call (its leader) sends it as soon as an in-flight
// statement ends (which hands its slot over), so the number in flight stays at limit and each
// carries whatever arrived meanwhile. A call that does not fit the group (full, or a key
// already in it, as the kind of group decides) sends its own statement.
//
// Consistency: a call joins only a group not yet sent (the hand-over detaches it under the
// mutex before the leader sends it), so its statement starts after the call did: a read sees
// every write acknowledged before it began, as a statement of its own would.
//
// Connections: calls waiting for a group hold none (each engine call still runs the nesting
// check for its caller), and a leader acquires one as a call of its own would, so gathering
// adds no way for the pool to deadlock. The leader runs the statement under a context
// detached from its own cancellation (bounded by the engine's timeout), so one cancelled
// request never fails the others'.
type gatherer[B any] struct {
	limit   int // statements in flight before calls gather
	timeout time.Duration

	mu      sync.Mutex
	running int       // statements in flight
	pending *group[B] // gathering, not yet sent; nil when none
}

// group is one gathered statement: b holds its calls' work and, once done is closed, the
// outcome.
type group[B any] struct {
	b    B
	go_  chan struct{} // closed when the group may be sent (an in-flight statement ended)
	done chan struct{} // closed when the leader has run the statement
}

// enter decides how a call runs. With grp nil the call runs its own statement now and then
// calls finish. Otherwise join has put the call's work into grp.b (join reports false when it
// does not fit; b is a new group's when fresh): the leader then calls lead, the others wait.
func (g *gatherer[B]) enter(join func(b *B, fresh bool) bool) (grp *group[B], leader bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running < g.limit {
		g.running++
		return nil, false
	}
	grp, leader = g.pending, g.pending == nil
	if leader {
		grp = &group[B]{go_: make(chan struct{}), done: make(chan struct{})}
	}
	if !join(&grp.b, leader) {
		g.running++ // does not fit: a statement of its own, beyond the limit
		return nil, false
	}
	if leader {
		g.pending = grp
	}
	return grp, leader
}

// lead sends grp once an in-flight statement ends: run gets a context detached from ctx's
// cancellation. Not abandoned on ctx: the others' calls depend on it; the wait is bounded by
// the in-flight statements' own timeouts.
func (g *gatherer[B]) lead(ctx context.Context, grp *group[B], run func(ctx context.Context, b *B)) {
	<-grp.go_
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.timeout)
	run(rctx, &grp.b)
	cancel()
	close(grp.done)
	g.finish()
}

// wait waits for grp's statement, or for ctx.
func (grp *group[B]) wait(ctx context.Context) error {
	select {
	case <-grp.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish ends an in-flight statement: its slot goes to the group being gathered, which is
// detached first so that no call joins a statement already sent.
func (g *gatherer[B]) finish() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if grp := g.pending; grp != nil {
		g.pending = nil
		close(grp.go_)
		return
	}
	g.running--
}

// maxBatchKeys is the most distinct keys one gathered read reads (lookupStmts).
const maxBatchKeys = 32

// readBatch is the work of a gathered point read (Get, GetMany of at most maxPointLookup
// keys): every key its calls ask for, each once, read by one statement, so each call reads
// its keys from one snapshot, as GetMany promises.
type readBatch struct {
	keys  [][]byte
	index map[string]int // key → position in keys
	users []int          // per key: how many calls asked for it
	vals  [][]byte
	found []bool
	err   error
}

// join adds ks if they fit, and returns their positions.
func (b *readBatch) join(ks [][]byte) ([]int, bool) {
	fresh := 0
	for _, k := range ks {
		if _, ok := b.index[string(k)]; !ok {
			fresh++
		}
	}
	if len(b.keys)+fresh > maxBatchKeys {
		return nil, false
	}
	if b.index == nil {
		b.index = map[string]int{}
	}
	pos := make([]int, len(ks))
	for i, k := range ks {
		at, ok := b.index[string(k)]
		if ok {
			b.users[at]++
		} else {
			at = len(b.keys)
			b.index[string(k)] = at
			b.keys = append(b.keys, bytes.Clone(k))
			b.users = append(b.users, 1)
		}
		pos[i] = at
	}
	return pos, true
}

// pointRead reads keys (distinct, at most maxPointLookup) from one snapshot taken after the
// call began, into vals and found (len(keys) each), gathered with concurrent point reads
// when the database is busy.
func (d *DB) pointRead(ctx context.Context, keys [][]byte, vals [][]byte, found []bool) error {
	if len(keys) == 0 {
		return nil // nothing to wait for
	}
	var pos []int
	grp, leader := d.reads.enter(func(b *readBatch, _ bool) bool {
		var ok bool
		pos, ok = b.join(keys)
		return ok
	})
	if grp == nil {
		err := d.lookup(ctx, keys, vals, found)
		d.reads.finish()
		return err
	}
	if leader {
		d.reads.lead(ctx, grp, func(ctx context.Context, b *readBatch) {
			b.vals, b.found = make([][]byte, len(b.keys)), make([]bool, len(b.keys))
			b.err = d.lookup(ctx, b.keys, b.vals, b.found)
		})
	} else if err := grp.wait(ctx); err != nil {
		return err
	}
	b := &grp.b
	if b.err != nil {
		return b.err
	}
	for i, at := range pos {
		vals[i], found[i] = b.vals[at], b.found[at]
		if b.users[at] > 1 && vals[i] != nil {
			vals[i] = bytes.Clone(vals[i]) // each call owns what it is given
		}
	}
	return nil
}
