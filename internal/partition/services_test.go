package partition

import (
	"fmt"
	"testing"
	"time"
)

// One account's request target covers Table, Queue and Blob together, as Azure's does.
func TestAccountTargetCoversAllServices(t *testing.T) {
	l := New(Options{Emulate: true, AccountTarget: 60})
	refused := 0
	for i := range 90 {
		svc := []Service{Table, Queue, Blob}[i%3]
		op := Op{Service: svc, Account: "acct", Container: "c", Key: fmt.Sprint(i), Kind: KindInsert, Entities: 1}
		tk := l.Admit(&op, t0)
		if tk.Err != nil {
			refused++
		}
		l.Finish(&tk, Result{Status: 201, Now: t0})
	}
	if refused != 30 {
		t.Fatalf("%d of 90 requests (30 per service) refused over an account target of 60, want 30", refused)
	}
	s := l.Snapshot(t0, 1)
	if len(s.Accounts) != 1 || s.Accounts[0].Requests != 90 || s.Accounts[0].RequestsByService["queue"] != 30 || s.Accounts[0].Tables != 3 {
		t.Fatalf("accounts %+v", s.Accounts)
	}
}

// Each service's partitions have its own target: a queue's in KiB messages (a 3 KiB message
// weighs 3), a blob's in requests; the same name in two services is two partitions.
func TestServiceTargets(t *testing.T) {
	o := Options{Emulate: true, PartitionTarget: 1000, QueueTarget: 30, BlobTarget: 20, ServerCapacity: 1_000_000, Heat: time.Second}
	l := New(o)
	served := map[Service]int{}
	for tick := range 4 {
		now := t0.Add(time.Duration(tick) * time.Second)
		for range 50 {
			for _, op := range []Op{
				{Service: Queue, Account: "a", Container: "q", Key: "q", Kind: KindInsert, Entities: 3},
				{Service: Blob, Account: "a", Container: "q", Key: "b", Kind: KindInsert, Entities: 1},
				{Service: Table, Account: "a", Container: "q", Key: "q", Kind: KindInsert, Entities: 1},
			} {
				tk := l.Admit(&op, now)
				if tk.Err == nil && tick == 3 {
					served[op.Service]++
				}
				l.Finish(&tk, Result{Status: 201, Now: now})
			}
		}
	}
	// Once hot: the queue serves 10 messages of 3 KiB (30 units), the blob 20 requests, the
	// table all 50.
	if served[Queue] != 10 || served[Blob] != 20 || served[Table] != 50 {
		t.Fatalf("served once hot %v, want queue 10, blob 20, table 50", served)
	}
	s := l.Snapshot(t0.Add(4*time.Second), 10)
	if len(s.Tables) != 3 {
		t.Fatalf("%d containers, want 3 (table, queue and container named q)", len(s.Tables))
	}
}

// A query over several range partitions is credited to each: every range and its server
// count the request, and each range the entities it returned (NoteKey).
func TestQueryCreditsEveryRange(t *testing.T) {
	l := New(Options{Servers: 4})
	op := Op{Service: Table, Account: "a", Container: "t", Key: "a", Kind: KindInsert, Entities: 1}
	tk := l.Admit(&op, t0)
	l.Finish(&tk, Result{Status: 201, Now: t0})
	tb := l.tables[tableKey{Table, "a", "t"}]
	// Three ranges: [.., m), [m, t), [t, ..) on three servers.
	for i, lo := range []string{"m", "t"} {
		tb.ranges = append(tb.ranges, &rangeState{id: i + 1, lo: lo, server: i + 1})
		l.servers[i+1].ranges++
	}
	now := t0.Add(time.Second)
	q := Op{Service: Table, Account: "a", Container: "t", Key: "b", HiKey: "u", Kind: KindPartitionRange}
	tk = l.Admit(&q, now)
	if tk.RangeCount != 3 {
		t.Fatalf("touched %d ranges (%s), want 3", tk.RangeCount, tk.Ranges)
	}
	for _, pk := range []string{"b", "c", "n", "n", "n", "u"} {
		tk.NoteKey(pk)
	}
	l.Finish(&tk, Result{Status: 200, Entities: 6, Partitions: 4, Now: now})
	for i, want := range []uint32{2, 3, 1} {
		r := tb.ranges[i]
		c := r.w.tick(l.tickOf(now))
		sc := l.servers[r.server].w.tick(l.tickOf(now))
		if c.readOps != 1 || c.readEnts != want || c.demand != want || sc.readEnts != want {
			t.Fatalf("range %s: %+v (server %+v), want 1 op and %d entities", r.name(), c, sc, want)
		}
	}
}
