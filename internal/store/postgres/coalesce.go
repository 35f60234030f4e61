package postgres

import (
	"bytes"
	"context"
	"sync"
	"time"
)

// pointReads gathers point reads (Get, and GetMany of at most maxPointLookup keys) from
// different requests into one statement when the database is already busy with such reads.
// Each statement costs a round trip, a wake-up of a backend and the protocol's per-statement
// work on both sides; at 16 clients on a small machine those, not the index lookups, are most
// of a get's CPU, and one statement of many point lookups costs little more than one of two.
//
// No read waits when the database is idle: while fewer than limit such statements are in
// flight, a read sends its own at once. Beyond that, reads join the one batch being gathered,
// whose first reader (its leader) sends it as soon as an in-flight statement ends (which
// hands its slot over), so the number of point-read statements in flight stays at limit and
// each carries whatever arrived meanwhile, up to maxBatchKeys distinct keys (a read that
// would overflow the batch sends its own statement).
//
// Consistency: every key a read asks for is in one statement, so a read sees one snapshot,
// as GetMany promises; and a read joins only a batch not yet sent (the hand-over detaches it
// under the mutex before the leader sends it), so the statement starts after the read did
// and sees every write acknowledged before that, as a read of its own would.
//
// Connections: readers waiting for a batch hold none (GetMany's nesting check still runs in
// each caller), and a leader acquires one as a read of its own would, so gathering adds no
// way for the pool to deadlock; the statement runs under a context detached from the leader's
// cancellation (bounded by the engine's timeout), so one cancelled request never fails the
// others' reads.
type pointReads struct {
	limit   int // point-read statements in flight before reads gather
	timeout time.Duration
	// run reads keys (distinct, at most maxBatchKeys) with one statement into vals and found.
	run func(ctx context.Context, keys [][]byte, vals [][]byte, found []bool) error

	mu      sync.Mutex
	running int        // point-read statements in flight
	pending *readBatch // gathering, not yet sent; nil when none
}

// maxBatchKeys is the most distinct keys one gathered statement reads (lookupStmts).
const maxBatchKeys = 32

// readBatch is one gathered statement.
type readBatch struct {
	keys  [][]byte
	index map[string]int // key → position in keys
	users []int          // per key: how many reads asked for it
	go_   chan struct{}  // closed when the batch may be sent (an in-flight statement ended)
	done  chan struct{}  // closed when vals, found and err are set
	vals  [][]byte
	found []bool
	err   error
}

// newKeys counts the keys of ks that b does not read yet.
func (b *readBatch) newKeys(ks [][]byte) int {
	n := 0
	for _, k := range ks {
		if _, ok := b.index[string(k)]; !ok {
			n++
		}
	}
	return n
}

// add puts k in the batch and returns its position.
func (b *readBatch) add(k []byte) int {
	if i, ok := b.index[string(k)]; ok {
		b.users[i]++
		return i
	}
	b.index[string(k)] = len(b.keys)
	b.keys = append(b.keys, bytes.Clone(k))
	b.users = append(b.users, 1)
	return len(b.keys) - 1
}

// read reads keys (distinct, at most maxPointLookup) from one snapshot taken after the call
// began, into vals and found (len(keys) each).
func (p *pointReads) read(ctx context.Context, keys [][]byte, vals [][]byte, found []bool) error {
	p.mu.Lock()
	b := p.pending
	if p.running < p.limit || (b != nil && len(b.keys)+b.newKeys(keys) > maxBatchKeys) {
		// The database has room (or the batch is full): a statement of its own, at once.
		p.running++
		p.mu.Unlock()
		err := p.run(ctx, keys, vals, found)
		p.finish()
		return err
	}
	leader := b == nil
	if leader {
		b = &readBatch{index: map[string]int{}, go_: make(chan struct{}), done: make(chan struct{})}
		p.pending = b
	}
	pos := make([]int, len(keys))
	for i, k := range keys {
		pos[i] = b.add(k)
	}
	p.mu.Unlock()
	if leader {
		// Not abandoned on ctx: the others' reads depend on it. The wait is bounded by the
		// in-flight statements' own timeouts.
		<-b.go_
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
		b.vals, b.found = make([][]byte, len(b.keys)), make([]bool, len(b.keys))
		b.err = p.run(rctx, b.keys, b.vals, b.found)
		cancel()
		close(b.done)
		p.finish()
	} else {
		select {
		case <-b.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if b.err != nil {
		return b.err
	}
	for i, at := range pos {
		vals[i], found[i] = b.vals[at], b.found[at]
		if b.users[at] > 1 && vals[i] != nil {
			vals[i] = bytes.Clone(vals[i]) // each read owns what it is given
		}
	}
	return nil
}

// finish ends an in-flight statement: its slot goes to the batch being gathered, which is
// detached first so that no read joins a statement already sent.
func (p *pointReads) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := p.pending; b != nil {
		p.pending = nil
		close(b.go_)
		return
	}
	p.running--
}

