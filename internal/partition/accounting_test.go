package partition

import (
	"fmt"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

// perTick turns a snapshot's per-second rate over the window back into the count of the one
// complete tick it holds (snapshots taken one tick after the load).
func perTickCount(rate float64) float64 { return rate * (winLen - 1) }

// A throttled partition's refusals are counted everywhere the snapshot shows them: the
// partition's and the table's busy rates, the layer's ServerBusy counts by reason, and the
// account's.
func TestThrottlingCounted(t *testing.T) {
	o := Options{Emulate: true, PartitionTarget: 100, ServerCapacity: 1_000_000, Heat: 5 * time.Second}
	l := New(o)
	drive(l, t0, 7, 300, func(int) string { return "hot" }) // ticks 5 and 6 refuse 200 each
	s := l.Snapshot(t0.Add(7*time.Second), 1)
	if s.Busy["partition"] != 400 || s.Accounts[0].ServerBusy != 400 {
		t.Errorf("ServerBusy by reason %v, account's %d; want 400 partition refusals", s.Busy, s.Accounts[0].ServerBusy)
	}
	if b := perTickCount(s.Tables[0].Rates.Busy); b != 400 {
		t.Errorf("table busy %v over the window, want 400", b)
	}
	if b := perTickCount(s.Hottest[0].Rates.Busy); b != 400 {
		t.Errorf("partition busy %v over the window, want 400", b)
	}
}

// After-faults: drop closes the connection, latency delays the reply, the others replace it
// with their error.
func TestAfterFaultOutcome(t *testing.T) {
	for spec, want := range map[string]string{
		"fault=drop every=1 when=after":                "drop",
		"fault=latency latency=5ms every=1 when=after": "delay 5ms",
		"fault=timeout every=1 when=after":             "error OperationTimedOut",
		"fault=internal every=1 when=after":            "error InternalError",
		"fault=busy every=1 when=after op=point-read":  "none", // not matched
		"fault=busy every=1 when=after service=queue":  "none",
	} {
		fs, err := ParseFaults(spec)
		if err != nil {
			t.Fatal(err)
		}
		l := New(Options{})
		l.SetFaults(fs)
		op := Op{Service: Table, Account: "a", Container: "t", Key: "k", Kind: KindInsert, Entities: 1}
		tk := l.Admit(&op, t0)
		if tk.Err != nil || tk.Drop || tk.Delay != 0 {
			t.Fatalf("%q: an after-fault acted before: %+v", spec, tk)
		}
		drop, delay, err := l.AfterFault(&tk)
		got := "none"
		switch {
		case drop && delay == 0 && err == nil:
			got = "drop"
		case !drop && delay > 0 && err == nil:
			got = "delay " + delay.String()
		case !drop && delay == 0 && err != nil:
			got = "error " + string(azerr.From(err).Code)
		case drop || delay > 0 || err != nil:
			got = fmt.Sprintf("mixed: drop %v delay %v err %v", drop, delay, err)
		}
		if got != want {
			t.Errorf("%q: %s, want %s", spec, got, want)
		}
	}
}

// Finish records each table's latencies, 5xx answers, partitions returned per query, and
// the entities read, as served entities and demand of the table, the range and the key.
func TestFinishRecordsOutcome(t *testing.T) {
	l := New(Options{})
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	took := 3 * time.Millisecond // the bucket up to 4.096 ms
	run := func(op Op, r Result) {
		op.Service, op.Account, op.Container = Table, "a", "t"
		tk := l.Admit(&op, t0)
		r.Now = at(took)
		l.Finish(&tk, r)
	}
	run(Op{Key: "k", Kind: KindInsert, Entities: 1}, Result{Status: 201})
	run(Op{Key: "k", Kind: KindPointRead}, Result{Status: 499})
	run(Op{Key: "k", Kind: KindPointRead}, Result{Status: 500})
	run(Op{Key: "k", Kind: KindPointRead}, Result{Status: 503})
	run(Op{Key: "k", Kind: KindPartition}, Result{Status: 200, Entities: 10, Partitions: 1})
	run(Op{Key: "a", HiKey: "z", Kind: KindPartitionRange}, Result{Status: 200, Entities: 0, Partitions: 5})
	took = 100 * time.Millisecond // the bucket up to 131.072 ms
	run(Op{Key: "k", Kind: KindPointRead}, Result{Status: 200, Entities: 1})
	s := l.Snapshot(t0.Add(time.Second), 5)
	tv := s.Tables[0]
	if tv.LatencyP50 != "4.096ms" || tv.LatencyP99 != "131.072ms" {
		t.Errorf("latency p50 %s p99 %s, want 4.096ms and 131.072ms", tv.LatencyP50, tv.LatencyP99)
	}
	if tv.Errors5xx != 2 {
		t.Errorf("%d 5xx answers, want 2", tv.Errors5xx)
	}
	if tv.PartsPerQ != 3 {
		t.Errorf("%v partitions per query, want 3", tv.PartsPerQ)
	}
	// Demand: 7 requests of one entity each, plus the 10 read by the partition query and
	// the 1 of the last point read beyond their own: 7 + 9 + 0.
	if r, d := perTickCount(tv.Rates.ReadEntities), perTickCount(tv.Rates.Demand); r != 11 || d != 16 {
		t.Errorf("table read %v entities with demand %v, want 11 and 16", r, d)
	}
	if r, d := perTickCount(tv.Ranges[0].Rates.ReadEntities), perTickCount(tv.Ranges[0].Rates.Demand); r != 11 || d != 16 {
		t.Errorf("range read %v entities with demand %v, want 11 and 16", r, d)
	}
	if sv := s.Servers[tv.Ranges[0].Server]; perTickCount(sv.Rates.Demand) != 16 {
		t.Errorf("server demand %v, want 16", perTickCount(sv.Rates.Demand))
	}
	if len(tv.Partitions) != 1 || tv.Partitions[0].Key != "k" || perTickCount(tv.Partitions[0].Rates.ReadEntities) != 11 {
		t.Errorf("partitions %+v, want k with 11 entities read", tv.Partitions)
	}
}

// Queries of one partition (KindRowRange, KindPartition) count against its PartitionKey;
// queries across partitions do not.
func TestSinglePartitionQueriesTracked(t *testing.T) {
	for _, c := range []struct {
		kind    Kind
		tracked bool
	}{
		{KindPointRead, true}, {KindRowRange, true}, {KindPartition, true},
		{KindPartitionRange, false}, {KindUnion, false}, {KindTableScan, false}, {KindInsert, true},
	} {
		l := New(Options{})
		op := Op{Service: Table, Account: "a", Container: "t", Key: "k", HiKey: "k", Kind: c.kind}
		tk := l.Admit(&op, t0)
		l.Finish(&tk, Result{Status: 200, Now: t0})
		tv := l.Snapshot(t0, 5).Tables[0]
		if got := len(tv.Partitions) == 1 && tv.Partitions[0].Key == "k"; got != c.tracked {
			t.Errorf("%v: partitions %+v, tracked %v, want %v", c.kind, tv.Partitions, got, c.tracked)
		}
	}
}

// A query over two ranges credits each with the entities of its keys; a key equal to a
// range's low key belongs to that range.
func TestQueryCreditsTwoRanges(t *testing.T) {
	l := New(Options{Servers: 4})
	tb := tableWithRanges(t, l, []string{"m"}, []int{1}, []int{2})
	now := t0.Add(time.Second)
	q := Op{Service: Table, Account: "a", Container: "t", Key: "b", HiKey: "z", Kind: KindPartitionRange}
	tk := l.Admit(&q, now)
	if tk.Ranges != "r0@s0,r1@s2" {
		t.Errorf("query plan names ranges %q, want r0@s0,r1@s2", tk.Ranges)
	}
	for _, pk := range []string{"b", "m", "m", "n"} {
		tk.NoteKey(pk)
	}
	l.Finish(&tk, Result{Status: 200, Entities: 4, Partitions: 3, Now: now})
	for i, want := range []uint32{1, 3} {
		if c := tb.ranges[i].w.tick(l.tickOf(now)); c.readEnts != want {
			t.Errorf("range %s read %d entities, want %d", tb.ranges[i].name(), c.readEnts, want)
		}
	}
}

// A partition key equal to a range's low key is in that range (low keys are inclusive).
func TestRangeLowKeyInclusive(t *testing.T) {
	l := New(Options{Servers: 4})
	tableWithRanges(t, l, []string{"m", "t"}, []int{1, 2}, []int{2, 3})
	for key, want := range map[string]string{"l": "r0@s0", "m": "r1@s2", "s": "r1@s2", "t": "r2@s3", "z": "r2@s3"} {
		q := Op{Service: Table, Account: "a", Container: "t", Key: key, HiKey: key, Kind: KindRowRange}
		if tk := l.Admit(&q, t0); tk.Ranges != want {
			t.Errorf("key %q: range %q, want %q", key, tk.Ranges, want)
		}
	}
}

// New tables (and queues and containers) start on the least busy server: on a fresh layer,
// each on a server of its own. Names are case-insensitive, A to Z included.
func TestNewTablesSpreadOverServers(t *testing.T) {
	l := New(Options{Servers: 4})
	for _, name := range []string{"Az", "az", "zZ", "zz", "b", "c"} {
		op := Op{Service: Table, Account: "a", Container: name, Key: "k", Kind: KindInsert, Entities: 1}
		tk := l.Admit(&op, t0)
		l.Finish(&tk, Result{Status: 201, Now: t0})
	}
	s := l.Snapshot(t0, 1)
	if len(s.Tables) != 4 {
		t.Fatalf("%d tables, want 4 (Az and az are one, zZ and zz another)", len(s.Tables))
	}
	for _, sv := range s.Servers {
		if sv.Ranges != 1 {
			t.Fatalf("servers %+v, want one range each", s.Servers)
		}
	}
}

// AccountTargets overrides the account target for one account; zero or less keeps the default.
func TestAccountTargetOverride(t *testing.T) {
	l := New(Options{Emulate: true, AccountTarget: 50, AccountTargets: map[string]int{"acct": 70, "zero": 0}})
	if refused, _ := drive(l, t0, 1, 80, func(i int) string { return fmt.Sprint(i) }); refused[0] != 10 {
		t.Fatalf("refused %v, want 10 over an account target of 70", refused)
	}
	refused := 0
	for i := range 80 {
		op := Op{Service: Table, Account: "zero", Container: "t", Key: fmt.Sprint(i), Kind: KindInsert, Entities: 1}
		if tk := l.Admit(&op, t0); tk.Err != nil {
			refused++
		}
	}
	if refused != 30 {
		t.Fatalf("refused %d, want 30 over the default target of 50", refused)
	}
}

// A request for a service the layer does not know is counted with the others, not lost.
func TestUnknownServiceCounted(t *testing.T) {
	l := New(Options{})
	for _, svc := range []Service{numServices, 200} {
		op := Op{Service: svc, Account: "a", Container: "t", Key: "k", Kind: KindInsert, Entities: 1}
		tk := l.Admit(&op, t0)
		l.Finish(&tk, Result{Status: 201, Now: t0})
	}
	s := l.Snapshot(t0, 1)
	if s.Accounts[0].Requests != 2 || len(s.Tables) != 1 {
		t.Fatalf("accounts %+v, tables %+v", s.Accounts, s.Tables)
	}
}
