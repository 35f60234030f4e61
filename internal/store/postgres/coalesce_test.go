package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeReads is the point reads' statement (DB.lookup), scripted: every key k reads as "v:k";
// calls whose first key starts with "hold" block until released. The interleavings these
// tests need (reads arriving while a statement is in flight) cannot be forced through a real
// database; TestPointReadsSeeAcknowledgedWrites and the conformance suite run gathering
// against PostgreSQL.
type fakeReads struct {
	mu    sync.Mutex
	calls [][]string // keys of each statement, as sent
	hold  chan struct{}
}

func (f *fakeReads) run(ctx context.Context, keys [][]byte, vals [][]byte, found []bool) error {
	ks := make([]string, len(keys))
	for i, k := range keys {
		ks[i] = string(k)
	}
	f.mu.Lock()
	f.calls = append(f.calls, ks)
	f.mu.Unlock()
	if strings.HasPrefix(ks[0], "hold") {
		<-f.hold
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, k := range ks {
		vals[i], found[i] = []byte("v:"+k), true
	}
	return nil
}

func (f *fakeReads) sent() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.calls...)
}

func newFake(limit int) (*DB, *fakeReads) {
	f := &fakeReads{hold: make(chan struct{})}
	d := &DB{lookup: f.run}
	d.reads.limit, d.reads.timeout = limit, time.Minute
	return d, f
}

// readResult is one read's outcome.
type readResult struct {
	vals []string
	err  error
}

// start runs a read on its own goroutine.
func start(ctx context.Context, d *DB, keys ...string) chan readResult {
	out := make(chan readResult, 1)
	go func() {
		ks := make([][]byte, len(keys))
		for i, k := range keys {
			ks[i] = []byte(k)
		}
		vals, found := make([][]byte, len(keys)), make([]bool, len(keys))
		err := d.pointRead(ctx, ks, vals, found)
		var r readResult
		r.err = err
		for i := range vals {
			r.vals = append(r.vals, fmt.Sprintf("%s/%v", vals[i], found[i]))
		}
		out <- r
	}()
	return out
}

// busy returns gathering with one statement in flight (first's, held until released).
func busy(t *testing.T) (*DB, *fakeReads, chan readResult) {
	d, f := newFake(1)
	first := start(context.Background(), d, "hold1")
	waitSent(t, f, 1)
	return d, f, first
}

// checkIdle checks that no statement is in flight or gathering.
func checkIdle(t *testing.T, d *DB) {
	t.Helper()
	if d.reads.running != 0 || d.reads.pending != nil {
		t.Fatalf("after the reads: running %d, pending %v", d.reads.running, d.reads.pending)
	}
}

// waitFor polls cond until it holds (the tests' interleavings happen on other goroutines).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitGathered waits until the batch being gathered has n keys.
func waitGathered(t *testing.T, d *DB, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("a gathered batch of %d keys", n), func() bool {
		d.reads.mu.Lock()
		defer d.reads.mu.Unlock()
		return d.reads.pending != nil && len(d.reads.pending.b.keys) == n
	})
}

func waitResult(t *testing.T, c chan readResult) readResult {
	t.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("a read did not finish")
		return readResult{}
	}
}

// A read with nothing in flight sends its own statement at once.
func TestPointReadsIdleReadsAtOnce(t *testing.T) {
	d, f := newFake(1)
	r := waitResult(t, start(context.Background(), d, "a", "b"))
	if r.err != nil || fmt.Sprint(r.vals) != "[v:a/true v:b/true]" {
		t.Fatalf("read = %v, %v", r.vals, r.err)
	}
	if got := fmt.Sprint(f.sent()); got != "[[a b]]" {
		t.Fatalf("statements = %s, want [[a b]]", got)
	}
	checkIdle(t, d)
}

// Reads arriving while a statement is in flight share the next one, each key read once; a
// read arriving after that one was sent is not in it.
func TestPointReadsGatherWhileBusy(t *testing.T) {
	d, f, first := busy(t)
	ctx := context.Background()
	b := start(ctx, d, "hold2", "cat")
	waitGathered(t, d, 2)
	c := start(ctx, d, "e2", "cat")
	waitGathered(t, d, 3)
	f.hold <- struct{}{} // the first statement ends; the gathered one is sent, and blocks
	waitSent(t, f, 2)
	late := start(ctx, d, "e3", "cat") // arrives while the gathered statement is in flight
	waitGathered(t, d, 2)
	f.hold <- struct{}{}
	for name, want := range map[chan readResult]string{
		first: "[v:hold1/true]", b: "[v:hold2/true v:cat/true]", c: "[v:e2/true v:cat/true]", late: "[v:e3/true v:cat/true]",
	} {
		if r := waitResult(t, name); r.err != nil || fmt.Sprint(r.vals) != want {
			t.Errorf("read = %v, %v; want %s", r.vals, r.err, want)
		}
	}
	if got, want := fmt.Sprint(f.sent()), "[[hold1] [hold2 cat e2] [e3 cat]]"; got != want {
		t.Fatalf("statements = %s, want %s", got, want)
	}
}

func waitSent(t *testing.T, f *fakeReads, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("statement %d sent", n), func() bool { return len(f.sent()) >= n })
}

// The batch's first reader sends it; its cancellation fails neither its statement nor the
// reads of the others in it.
func TestPointReadsLeaderCancelled(t *testing.T) {
	d, f, first := busy(t)
	lctx, cancel := context.WithCancel(context.Background())
	leader := start(lctx, d, "a")
	waitGathered(t, d, 1)
	other := start(context.Background(), d, "b")
	waitGathered(t, d, 2)
	cancel()
	time.Sleep(10 * time.Millisecond) // let a wrongly cancelled leader give up
	close(f.hold)
	waitResult(t, first)
	if r := waitResult(t, other); r.err != nil || fmt.Sprint(r.vals) != "[v:b/true]" {
		t.Fatalf("the other read = %v, %v", r.vals, r.err)
	}
	waitResult(t, leader)
}

// A follower whose context ends stops waiting with its context's error.
func TestPointReadsFollowerCancelled(t *testing.T) {
	d, f, first := busy(t)
	leader := start(context.Background(), d, "a")
	waitGathered(t, d, 1)
	fctx, cancel := context.WithCancel(context.Background())
	follower := start(fctx, d, "b")
	waitGathered(t, d, 2)
	cancel()
	if r := waitResult(t, follower); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled follower = %v, %v", r.vals, r.err)
	}
	close(f.hold)
	waitResult(t, first)
	if r := waitResult(t, leader); r.err != nil || fmt.Sprint(r.vals) != "[v:a/true]" {
		t.Fatalf("leader = %v, %v", r.vals, r.err)
	}
}

// No statement reads more than maxBatchKeys keys: a read that would overflow the batch
// being gathered sends its own, even while the database is busy.
func TestPointReadsFullBatchReadsAlone(t *testing.T) {
	d, f, first := busy(t)
	ctx := context.Background()
	var reads []chan readResult
	for i := range maxBatchKeys / 2 {
		reads = append(reads, start(ctx, d, fmt.Sprintf("k%02d", 2*i), fmt.Sprintf("k%02d", 2*i+1)))
		waitGathered(t, d, 2*i+2)
	}
	over := start(ctx, d, "x", "k00") // one key more than the batch can take
	if r := waitResult(t, over); r.err != nil || fmt.Sprint(r.vals) != "[v:x/true v:k00/true]" {
		t.Fatalf("overflowing read = %v, %v", r.vals, r.err)
	}
	close(f.hold)
	waitResult(t, first)
	for _, r := range reads {
		if res := waitResult(t, r); res.err != nil {
			t.Fatal(res.err)
		}
	}
	for _, ks := range f.sent() {
		if len(ks) > maxBatchKeys {
			t.Fatalf("a statement read %d keys (at most %d)", len(ks), maxBatchKeys)
		}
	}
	checkIdle(t, d)
}

// Two reads of one key in one statement get values of their own: one changing its value
// does not change the other's.
func TestPointReadsSharedKeyCopied(t *testing.T) {
	d, f, first := busy(t)
	ctx := context.Background()
	out := make(chan [][]byte, 2)
	for range 2 {
		go func() {
			vals, found := make([][]byte, 1), make([]bool, 1)
			if err := d.pointRead(ctx, [][]byte{[]byte("cat")}, vals, found); err != nil {
				t.Error(err)
			}
			out <- vals
		}()
	}
	waitUsers(t, d, 2)
	close(f.hold)
	waitResult(t, first)
	a, b := <-out, <-out
	a[0][0] = 'X'
	if string(b[0]) != "v:cat" {
		t.Fatalf("the second read's value changed with the first's: %q", b[0])
	}
}

// waitUsers waits until the batch being gathered's first key has n readers.
func waitUsers(t *testing.T, d *DB, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d readers of a gathered key", n), func() bool {
		d.reads.mu.Lock()
		defer d.reads.mu.Unlock()
		return d.reads.pending != nil && len(d.reads.pending.b.users) > 0 && d.reads.pending.b.users[0] == n
	})
}

// A read of no keys returns at once, even while others gather.
func TestPointReadsNoKeys(t *testing.T) {
	d, f, first := busy(t)
	if r := waitResult(t, start(context.Background(), d)); r.err != nil || len(r.vals) != 0 {
		t.Fatalf("read of no keys = %v, %v", r.vals, r.err)
	}
	close(f.hold)
	waitResult(t, first)
	if n := len(f.sent()); n != 1 {
		t.Fatalf("%d statements, want 1", n)
	}
}
