package partition

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

var t0 = time.Unix(1_700_000_000, 0)

// drive sends n single-entity inserts per tick for ticks ticks, choosing keys with key(i),
// and returns, per tick, how many were refused and with which codes.
func drive(l *Layer, start time.Time, ticks, n int, key func(i int) string) (refused []int, codes map[azerr.Code]int) {
	codes = map[azerr.Code]int{}
	i := 0
	for tk := range ticks {
		now := start.Add(time.Duration(tk) * l.o.Tick)
		r := 0
		for range n {
			op := Op{Service: Table, Account: "acct", Container: "T", Key: key(i), Kind: KindInsert, Entities: 1}
			i++
			ticket := l.Admit(&op, now)
			if ticket.Err != nil {
				r++
				codes[azerr.From(ticket.Err).Code]++
			}
			l.Finish(&ticket, Result{Status: 204, Now: now})
		}
		refused = append(refused, r)
	}
	return refused, codes
}

func firstRefusal(refused []int) int {
	for i, r := range refused {
		if r > 0 {
			return i
		}
	}
	return -1
}

func TestHotPartitionThrottledOnlyAfterHeat(t *testing.T) {
	o := Options{Emulate: true, PartitionTarget: 100, ServerCapacity: 1_000_000, Heat: 5 * time.Second, Move: time.Second}
	l := New(o)
	refused, codes := drive(l, t0, 12, 300, func(int) string { return "hot" })
	// Hot from tick 0 on; throttled once it has been hot for the heat period (5 ticks).
	if f := firstRefusal(refused); f != 5 {
		t.Fatalf("first refusal at tick %d, want 5 (refused per tick %v)", f, refused)
	}
	for _, r := range refused[5:] {
		if r != 200 { // 300 asked, 100 served
			t.Fatalf("refused per tick %v, want 200 per tick once hot", refused)
		}
	}
	if codes[azerr.ServerBusy] == 0 || len(codes) != 1 {
		t.Fatalf("codes %v, want ServerBusy only", codes)
	}
	// Below target, the partition cools and is served again.
	refused, _ = drive(l, t0.Add(12*time.Second), 3, 50, func(int) string { return "hot" })
	if refused[1] != 0 || refused[2] != 0 {
		t.Fatalf("after cooling, refused %v", refused)
	}
}

func TestEmulationOffNeverRefuses(t *testing.T) {
	o := Options{PartitionTarget: 100, ServerCapacity: 100, AccountTarget: 10, Heat: time.Second, Move: time.Second}
	l := New(o)
	refused, _ := drive(l, t0, 10, 300, func(int) string { return "hot" })
	if f := firstRefusal(refused); f >= 0 {
		t.Fatalf("emulation off refused requests: %v", refused)
	}
}

func TestAccountTarget(t *testing.T) {
	l := New(Options{Emulate: true, AccountTarget: 50, AccountTargets: map[string]int{"other": 1000}})
	refused, _ := drive(l, t0, 2, 80, func(i int) string { return fmt.Sprint(i) })
	if refused[0] != 30 || refused[1] != 30 {
		t.Fatalf("refused %v, want 30 per tick over an account target of 50", refused)
	}
	op := Op{Service: Table, Account: "acct", Kind: KindOther}
	tk := l.Admit(&op, t0.Add(time.Second))
	if e := azerr.From(tk.Err); e.Code != azerr.ServerBusy || e.Message() != msgAccountBusy {
		t.Fatalf("over the account limit: %v", tk.Err)
	}
}

// A hashed design: one range holds every bucket at first; the hot server splits it (and the
// halves again) until each server is under capacity, and then nothing is refused. The moving
// half is offline for the move period.
func TestHashedLoadSplitsAndSpreads(t *testing.T) {
	o := Options{Emulate: true, PartitionTarget: 1000, ServerCapacity: 400, Servers: 8, Heat: 2 * time.Second, Move: time.Second}
	l := New(o)
	key := func(i int) string { return fmt.Sprintf("bucket%02d", i*7%16) }
	refused, codes := drive(l, t0, 30, 1000, key)
	if firstRefusal(refused) < 2 {
		t.Fatalf("refused before the heat period: %v", refused)
	}
	for _, r := range refused[25:] {
		if r != 0 {
			t.Fatalf("still refusing after the splits: %v", refused)
		}
	}
	if codes[azerr.OperationTimedOut] == 0 {
		t.Fatalf("no time-outs from moving ranges: %v", codes)
	}
	s := l.Snapshot(t0.Add(30*time.Second), 5)
	rs := s.Tables[0].Ranges
	if len(rs) < 3 {
		t.Fatalf("%d ranges after the load, want at least 3: %+v", len(rs), rs)
	}
	servers := map[int]bool{}
	for _, r := range rs {
		servers[r.Server] = true
	}
	if len(servers) < 3 {
		t.Fatalf("ranges on %d servers: %+v", len(servers), rs)
	}
}

// An append-only design: every insert lands after every sampled key, so no key divides the
// load; the range stays whole and is throttled at one server's capacity.
func TestAppendOnlyNeverSpreads(t *testing.T) {
	o := Options{Emulate: true, PartitionTarget: 1000, ServerCapacity: 400, Servers: 8, Heat: 2 * time.Second, Move: time.Second}
	l := New(o)
	refused, _ := drive(l, t0, 20, 1000, func(i int) string { return fmt.Sprintf("%010d", i) })
	for _, r := range refused[3:] {
		if r != 600 {
			t.Fatalf("refused %v, want 600 of 1000 per tick once hot", refused)
		}
	}
	s := l.Snapshot(t0.Add(20*time.Second), 5)
	if n := len(s.Tables[0].Ranges); n != 1 {
		t.Fatalf("append-only load split into %d ranges", n)
	}
	if len(s.Events) == 0 || s.Events[0].Kind != "no-split" {
		t.Fatalf("events %+v, want no-split", s.Events)
	}
}

func TestQueryTouchesRanges(t *testing.T) {
	l := New(Options{ServerCapacity: 400, Servers: 8, Heat: time.Second, Move: time.Second})
	drive(l, t0, 10, 1000, func(i int) string { return fmt.Sprintf("bucket%02d", i*7%16) })
	now := t0.Add(10 * time.Second)
	scan := Op{Service: Table, Account: "acct", Container: "t", Kind: KindTableScan, Open: true}
	tk := l.Admit(&scan, now)
	n := len(l.Snapshot(now, 1).Tables[0].Ranges)
	if n < 2 || tk.RangeCount != n {
		t.Fatalf("table scan touched %d of %d ranges (%s)", tk.RangeCount, n, tk.Ranges)
	}
	point := Op{Service: Table, Account: "acct", Container: "t", Key: "bucket03", Kind: KindPartition}
	if tk := l.Admit(&point, now); tk.RangeCount != 1 {
		t.Fatalf("partition query touched %d ranges", tk.RangeCount)
	}
}

// Heat cools only after the heat period below target: a pause shorter than that (clients
// backing off) resumes throttled; a longer one resumes cold, served for a new heat period.
func TestHeatCoolsAfterHeatPeriod(t *testing.T) {
	o := Options{Emulate: true, PartitionTarget: 100, ServerCapacity: 1_000_000, Heat: 5 * time.Second}
	l := New(o)
	hot := func(int) string { return "hot" }
	drive(l, t0, 8, 300, hot)                                   // hot and throttled from tick 5
	refused, _ := drive(l, t0.Add(11*time.Second), 1, 300, hot) // after 3 silent ticks
	if refused[0] != 200 {
		t.Fatalf("after a short pause: %d refused, want 200 (still hot)", refused[0])
	}
	refused, _ = drive(l, t0.Add(30*time.Second), 1, 300, hot) // after 18 silent ticks
	if refused[0] != 0 {
		t.Fatalf("after a long pause: %d refused, want 0 (cooled)", refused[0])
	}
}

// A deleted table is forgotten: its state and its ranges' places on servers are released.
func TestDeleteTableForgets(t *testing.T) {
	l := New(Options{})
	drive(l, t0, 1, 10, func(i int) string { return fmt.Sprint(i) })
	del := Op{Service: Table, Account: "acct", Container: "t", Kind: KindOther, DeleteContainer: true}
	tk := l.Admit(&del, t0)
	l.Finish(&tk, Result{Status: 204, Now: t0})
	s := l.Snapshot(t0, 1)
	if len(s.Tables) != 0 || len(l.tables) != 0 {
		t.Fatalf("deleted table still tracked: %+v", s.Tables)
	}
	for _, sv := range s.Servers {
		if sv.Ranges != 0 {
			t.Fatalf("server %d still holds %d ranges", sv.ID, sv.Ranges)
		}
	}
	if s.Accounts[0].Tables != 0 {
		t.Fatalf("account still counts %d tables", s.Accounts[0].Tables)
	}
}

// Requests for tables that do not exist leave no state behind.
func TestMissingTableForgotten(t *testing.T) {
	l := New(Options{})
	for i := range 100 {
		op := Op{Service: Table, Account: "acct", Container: fmt.Sprintf("nope%d", i), Key: "k", Kind: KindPointRead}
		tk := l.Admit(&op, t0)
		l.Finish(&tk, Result{Status: 404, Now: t0})
	}
	if len(l.tables) != 0 {
		t.Fatalf("%d missing tables tracked", len(l.tables))
	}
	op := Op{Service: Table, Account: "acct", Container: "real", Key: "k", Kind: KindInsert, Entities: 1}
	tk := l.Admit(&op, t0)
	l.Finish(&tk, Result{Status: 201, Now: t0})
	get := Op{Service: Table, Account: "acct", Container: "real", Key: "gone", Kind: KindPointRead}
	tk = l.Admit(&get, t0)
	l.Finish(&tk, Result{Status: 404, Now: t0}) // a missing entity in an existing table
	if len(l.tables) != 1 {
		t.Fatalf("existing table dropped on an entity's 404")
	}
}

// Zero durations take the defaults; durations given are kept.
func TestOptionsDefaults(t *testing.T) {
	o := New(Options{}).Options()
	if o.Heat != DefaultHeat || o.Move != DefaultMove || o.Tick != DefaultTick || o.Servers != DefaultServers ||
		o.PartitionTarget != DefaultPartitionTarget || o.TrackedKeys != DefaultTrackedKeys {
		t.Fatalf("defaults %+v", o)
	}
	o = New(Options{Heat: 7 * time.Second, Move: 2 * time.Second, Tick: 500 * time.Millisecond}).Options()
	if o.Heat != 7*time.Second || o.Move != 2*time.Second || o.Tick != 500*time.Millisecond {
		t.Fatalf("given durations not kept: %+v", o)
	}
}

// A range split off to another server is offline for exactly the move period (3 ticks here):
// refused while moving, served again from the tick the move ends.
func TestSplitRangeOfflineForMovePeriod(t *testing.T) {
	o := Options{Emulate: true, PartitionTarget: 1000, ServerCapacity: 400, Servers: 8, Heat: 2 * time.Second, Move: 3 * time.Second}
	l := New(o)
	key := func(i int) string { return fmt.Sprintf("bucket%02d", i*7%16) }
	for tick := 0; len(l.events) == 0; tick++ {
		if tick == 30 {
			t.Fatal("no split in 30 ticks")
		}
		drive(l, t0.Add(time.Duration(tick)*time.Second), 1, 1000, key)
	}
	ev := l.events[0]
	if ev.Kind != "split" {
		t.Fatalf("first event %+v, want a split", ev)
	}
	for k := int64(0); k <= 4; k++ {
		s := l.Snapshot(time.Unix(ev.Tick+k, 0), 1)
		var rv *RangeView
		for i, r := range s.Tables[0].Ranges {
			if r.Name == ev.New {
				rv = &s.Tables[0].Ranges[i]
			}
		}
		if rv == nil || rv.Offline != (k < 3) {
			t.Fatalf("%d ticks after the split: range %s %+v, want offline for 3 ticks", k, ev.New, rv)
		}
		read := Op{Service: Table, Account: "acct", Container: "T", Key: ev.Key, Kind: KindPointRead}
		if tk := l.Admit(&read, time.Unix(ev.Tick+k, 0)); (tk.Err != nil) != (k < 3) {
			t.Fatalf("%d ticks after the split: a read of %q answered %v, want a refusal only while moving", k, ev.Key, tk.Err)
		}
	}
}

// A request a fault refused is not served load; one a fault only delays is.
func TestFaultRefusalNotServed(t *testing.T) {
	written := func(spec string) float64 {
		t.Helper()
		fs, err := ParseFaults(spec)
		if err != nil {
			t.Fatal(err)
		}
		l := New(Options{})
		l.SetFaults(fs)
		for range 9 {
			op := Op{Service: Table, Account: "a", Container: "t", Key: "k", Kind: KindInsert, Entities: 1}
			tk := l.Admit(&op, t0)
			l.Finish(&tk, Result{Status: 204, Now: t0})
		}
		s := l.Snapshot(t0.Add(time.Second), 1)
		return s.Tables[0].Rates.WriteEntities * 9 // 9 complete ticks in the window
	}
	if n := written("fault=busy every=1"); n != 0 {
		t.Errorf("requests refused by a fault counted as %v written entities", n)
	}
	if n := written("fault=drop every=1"); n != 0 {
		t.Errorf("requests dropped by a fault counted as %v written entities", n)
	}
	if n := written("fault=latency every=1"); n != 9 {
		t.Errorf("delayed requests counted as %v written entities, want 9", n)
	}
}

// tableWithRanges returns the layer's table "t" of account "a" cut into ranges at los (each
// on server servers[i]) with ids ids[i]; the first range keeps id 0.
func tableWithRanges(t *testing.T, l *Layer, los []string, ids, servers []int) *tableState {
	t.Helper()
	op := Op{Service: Table, Account: "a", Container: "t", Key: "a", Kind: KindInsert, Entities: 1}
	tk := l.Admit(&op, t0)
	l.Finish(&tk, Result{Status: 201, Now: t0})
	tb := l.tables[tableKey{Table, "a", "t"}]
	for i, lo := range los {
		tb.ranges = append(tb.ranges, &rangeState{id: ids[i], lo: lo, server: servers[i]})
		l.servers[servers[i]].ranges++
	}
	return tb
}

// A snapshot counts each table's requests by kind (with their shares) and by how many range
// partitions they touched, five or more in the last bucket.
func TestSnapshotKindsAndRangesTouched(t *testing.T) {
	l := New(Options{})
	// Six ranges: [.., b), [b, c), ... [f, ..).
	tableWithRanges(t, l, []string{"b", "c", "d", "e", "f"}, []int{1, 2, 3, 4, 5}, []int{1, 2, 3, 4, 5})
	now := t0.Add(time.Second)
	for _, q := range []Op{
		{Kind: KindPointRead, Key: "a"},
		{Kind: KindPartitionRange, Key: "a", HiKey: "b"},
		{Kind: KindPartitionRange, Key: "b", HiKey: "dd"},
		{Kind: KindPartitionRange, Key: "a", HiKey: "d"},
		{Kind: KindTableScan, Open: true},
		{Kind: KindUnion, Key: "b", HiKey: "z"},
	} {
		q.Service, q.Account, q.Container = Table, "a", "t"
		tk := l.Admit(&q, now)
		l.Finish(&tk, Result{Status: 200, Now: now})
	}
	tv := l.Snapshot(now, 1).Tables[0]
	if tv.RangesHist != [5]uint64{0, 2, 1, 1, 3} {
		t.Errorf("requests by ranges touched %v, want [0 2 1 1 3]", tv.RangesHist)
	}
	want := map[string]uint64{"insert": 1, "point-read": 1, "partition-range": 3, "table-scan": 1, "union": 1}
	if fmt.Sprint(tv.Kinds) != fmt.Sprint(want) {
		t.Errorf("requests by kind %v, want %v", tv.Kinds, want)
	}
	if s := tv.KindShares["partition-range"]; s != 3.0/7 {
		t.Errorf("partition-range share %v, want 3/7", s)
	}
}

// A query's plan names the range partitions it touched until the list reaches 200 bytes.
func TestQueryRangeNamesBounded(t *testing.T) {
	l := New(Options{})
	var los []string
	var ids, servers []int
	add := func(id, server int) {
		los = append(los, fmt.Sprintf("k%03d", len(los)+1))
		ids, servers = append(ids, id), append(servers, server)
	}
	add(1, 1) // "r1@s1"
	for id := 10; id <= 12; id++ {
		add(id, 1) // "r1x@s1"
	}
	for id := 13; id <= 34; id++ {
		add(id, 10) // "rxx@s10"
	}
	tb := tableWithRanges(t, l, los, ids, servers)
	tb.ranges[0].server = 0 // "r0@s0"
	var names []string
	for _, r := range tb.ranges {
		names = append(names, r.name())
	}
	q := Op{Service: Table, Account: "a", Container: "t", Kind: KindTableScan, Open: true}
	tk := l.Admit(&q, t0)
	// The first 26 names take exactly 200 bytes: 5 + 6 + 3×7 + 21×8.
	if want := strings.Join(names[:26], ","); tk.Ranges != want || len(want) != 200 || tk.RangeCount != 27 {
		t.Fatalf("ranges %q (%d of them), want %q", tk.Ranges, tk.RangeCount, want)
	}
}

// What the layer keeps of a table follows whether its requests succeeded, not the reply an
// after-fault made of them: an insert whose reply was dropped or replaced shows the table
// exists (a later 404 of a missing entity keeps its state), and a Delete Table whose reply
// was dropped or replaced forgets it, ranges and all, so that a table created again under
// its name starts afresh.
func TestAfterFaultSuccessCounts(t *testing.T) {
	for _, spec := range []string{"fault=drop every=1 when=after", "fault=internal every=1 when=after"} {
		fs, err := ParseFaults(spec)
		if err != nil {
			t.Fatal(err)
		}
		l := New(Options{})
		l.SetFaults(fs)
		// run admits op and finishes it as the wire packages do: a success (ok) asks for
		// the after-fault, which turns the reply into no answer (status 0) or its error.
		run := func(op Op, ok int) {
			op.Service, op.Account, op.Container = Table, "acct", "t"
			tk := l.Admit(&op, t0)
			status := ok
			if ok < 300 {
				drop, _, ferr := l.AfterFault(&tk)
				switch {
				case drop:
					status = 0
				case ferr != nil:
					status = azerr.From(ferr).Status()
				}
			}
			l.Finish(&tk, Result{Status: status, Now: t0})
		}
		run(Op{Key: "k", Kind: KindInsert, Entities: 1}, 201)
		run(Op{Key: "gone", Kind: KindPointRead}, 404)
		if len(l.tables) != 1 {
			t.Fatalf("%s: a table whose insert succeeded was forgotten on a missing entity's 404", spec)
		}
		run(Op{Kind: KindOther, DeleteContainer: true}, 204)
		s := l.Snapshot(t0, 1)
		if len(l.tables) != 0 || len(s.Tables) != 0 {
			t.Fatalf("%s: a deleted table is still tracked: %+v", spec, s.Tables)
		}
		for _, sv := range s.Servers {
			if sv.Ranges != 0 {
				t.Fatalf("%s: server %d still holds %d ranges", spec, sv.ID, sv.Ranges)
			}
		}
	}
}

// Requests for a table that does not exist leave nothing behind, those a fault refused by
// dropping their connection (no status) included.
func TestMissingTableForgottenAfterDroppedRequests(t *testing.T) {
	fs, err := ParseFaults("fault=drop every=1")
	if err != nil {
		t.Fatal(err)
	}
	l := New(Options{})
	l.SetFaults(fs)
	op := Op{Service: Table, Account: "acct", Container: "nope", Key: "k", Kind: KindPointRead}
	tk := l.Admit(&op, t0)
	if !tk.Drop {
		t.Fatalf("the fault did not drop the request: %+v", tk)
	}
	l.Finish(&tk, Result{Status: 0, Now: t0})
	l.SetFaults(nil)
	tk = l.Admit(&op, t0)
	l.Finish(&tk, Result{Status: 404, Now: t0})
	if len(l.tables) != 0 {
		t.Fatalf("a missing table is tracked after a dropped request and a 404: %d tables", len(l.tables))
	}
}

// The event log keeps the last maxEvents splits and moves, oldest first.
func TestEventLogBounded(t *testing.T) {
	l := New(Options{})
	for i := range maxEvents + 3 {
		l.event(Event{Tick: t0.Unix() + int64(i), Kind: "split", Range: fmt.Sprintf("r%d", i)})
	}
	ev := l.Snapshot(t0, 1).Events
	if len(ev) != maxEvents || ev[0].Range != "r3" || ev[len(ev)-1].Range != fmt.Sprintf("r%d", maxEvents+2) {
		t.Fatalf("%d events, from %s to %s; want %d, from r3 to r%d", len(ev), ev[0].Range, ev[len(ev)-1].Range, maxEvents, maxEvents+2)
	}
}
