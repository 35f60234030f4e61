package partition

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Rates are per second whatever the tick: 10 entities per tick of 500 ms are 20 per second;
// a partition's share of its target, its count and its range bounds are shown as such.
func TestSnapshotRatesAndViews(t *testing.T) {
	const tick = 500 * time.Millisecond
	l := New(Options{Tick: tick, PartitionTarget: 100})
	for i := range 9 {
		now := t0.Add(time.Duration(i) * tick)
		for range 10 {
			op := Op{Service: Queue, Account: "acct", Container: "q", Key: "k", Kind: KindInsert, Entities: 1}
			tk := l.Admit(&op, now)
			l.Finish(&tk, Result{Status: 201, Now: now})
		}
		get := Op{Service: Queue, Account: "acct", Container: "q", Key: "k", Kind: KindDequeue}
		tk := l.Admit(&get, now)
		l.Finish(&tk, Result{Status: 200, Entities: 1, Now: now})
	}
	s := l.Snapshot(t0.Add(9*tick), 5)
	if s.Window != "4.5s" || len(s.Tables) != 1 || len(s.Accounts) != 1 {
		t.Fatalf("snapshot %+v", s)
	}
	tv := s.Tables[0]
	if tv.Service != "queue" || tv.Rates.WriteEntities != 20 || tv.Rates.WriteOps != 20 || tv.Rates.Demand != 22 || tv.Rates.ReadOps != 2 || tv.Rates.ReadEntities != 2 {
		t.Errorf("table %+v", tv)
	}
	if a := s.Accounts[0]; a.RequestsPerSec != 22 || a.Requests != 99 || a.RequestsByService["queue"] != 99 || len(a.RequestsByService) != 1 || a.Tables != 1 {
		t.Errorf("account %+v", a)
	}
	p := tv.Partitions[0]
	if p.Key != "k" || p.OfTarget != 0.011 || p.Count != 99 || p.Err != 0 || !p.Exact || p.Hot || p.Service != "queue" {
		t.Errorf("partition %+v (queue target 2000/s: 22/s is 1.1%%)", p)
	}
	if len(s.Servers) != DefaultServers || s.Servers[0].Ranges != 1 || s.Servers[0].Rates.Entities() != 22 || s.Servers[0].Hot {
		t.Errorf("servers %+v", s.Servers[:2])
	}
}

// Ranges show their bounds: each range's high key is the next one's low key, the last is open.
func TestSnapshotRangeBounds(t *testing.T) {
	l := New(Options{})
	tableWithRanges(t, l, []string{"m", "t"}, []int{1, 2}, []int{2, 3})
	var got []string
	for _, r := range l.Snapshot(t0, 1).Tables[0].Ranges {
		got = append(got, fmt.Sprintf("%s[%s,%s)", r.Name, r.Low, r.High))
	}
	if want := "[r0@s0[,m) r1@s2[m,t) r2@s3[t,)]"; fmt.Sprint(got) != want {
		t.Fatalf("ranges %v, want %s", got, want)
	}
}

// The snapshot lists at most top partitions per table and in the hottest list, hottest
// first; GET /partitions?top=N takes 0 to 10000 and ignores anything else (20).
func TestSnapshotTop(t *testing.T) {
	l := New(Options{})
	for i := range 30 {
		for range i + 1 { // key k29 is the hottest
			op := Op{Service: Table, Account: "a", Container: "t", Key: fmt.Sprintf("k%02d", i), Kind: KindInsert, Entities: 1}
			tk := l.Admit(&op, t0)
			l.Finish(&tk, Result{Status: 201, Now: t0})
		}
	}
	srv := httptest.NewServer(l.Handler())
	defer srv.Close()
	for q, want := range map[string]int{"": 20, "?top=0": 0, "?top=3": 3, "?top=10000": 30, "?top=10001": 20, "?top=-1": 20, "?top=x": 20} {
		resp, err := http.Get(srv.URL + "/partitions" + q)
		if err != nil {
			t.Fatal(err)
		}
		var s Snapshot
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil || len(s.Hottest) != want || len(s.Tables[0].Partitions) != want {
			t.Errorf("%q: %d hottest, %d in the table, want %d (%v)", q, len(s.Hottest), len(s.Tables[0].Partitions), want, err)
		}
		if want > 0 && (s.Hottest[0].Key != "k29" || s.Tables[0].Partitions[0].Key != "k29") {
			t.Errorf("%q: hottest %s, want k29", q, s.Hottest[0].Key)
		}
	}
}

// The terminal view: the mode, each account, table (queues and containers marked), range
// (the last one open), the busy servers only, the hottest partitions, ServerBusy and fault
// counts with the fault spec, and the last five events.
func TestWriteText(t *testing.T) {
	l := New(Options{Emulate: true, Servers: 4})
	fs, err := ParseFaults("fault=busy every=2 service=blob")
	if err != nil {
		t.Fatal(err)
	}
	l.SetFaults(fs)
	for _, op := range []Op{
		{Service: Table, Container: "Orders", Key: "p1"},
		{Service: Queue, Container: "jobs", Key: "jobs"},
		{Service: Blob, Container: "logs", Key: "a.txt"},
		{Service: Blob, Container: "logs", Key: "b.txt"},
	} {
		op.Account, op.Kind, op.Entities = "acct", KindInsert, 1
		tk := l.Admit(&op, t0)
		l.Finish(&tk, Result{Status: 201, Now: t0})
	}
	for i := range 7 {
		l.event(Event{Tick: t0.Unix() + int64(i), Kind: "split", Account: "acct", Table: "Orders", Range: fmt.Sprintf("r%d@s1", i)})
	}
	var b bytes.Buffer
	s := l.Snapshot(t0.Add(time.Second), 5)
	WriteText(&b, &s)
	out := b.String()
	for _, want := range []string{
		"emulating targets; partition 2000 entities/s, queue 2000 messages/s, blob 500 requests/s, account 20000 requests/s, server 10000 entities/s, 4 servers, heat 3m0s, move 5s; rates over 9s",
		"\nacct     0           4         1      1      2     0\n", // a fault is not ServerBusy
		"\nacct/Orders ", "\nqueue:acct/jobs ", "\nblob:acct/logs ",
		`""    "(end)"`,
		"\ns0      1 ", "\ns2      1 ",
		`"p1"`, "blob:logs",
		"ServerBusy: account 0, partition 0, server 0, moving range 0; faults injected: map[busy:1 drop:0 internal:0 latency:0 timeout:0] (seed=0; fault=busy every=2 service=blob)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\ns3 ") {
		t.Errorf("an idle server is listed:\n%s", out)
	}
	if strings.Contains(out, "r1@s1") || !strings.Contains(out, "r2@s1") || !strings.HasSuffix(out, "split acct/Orders r6@s1  \n") {
		t.Errorf("want the last five events only:\n%s", out)
	}
	b.Reset()
	s = New(Options{}).Snapshot(t0, 1)
	WriteText(&b, &s)
	if out := b.String(); !strings.Contains(out, "observing (targets not enforced)") || strings.Contains(out, "(seed=") || strings.Contains(out, "\ns0 ") {
		t.Errorf("an idle layer:\n%s", out)
	}
}

// Refusals are a per-second rate too: 2 refused per tick of 500 ms are 4 per second.
func TestBusyRateScaled(t *testing.T) {
	const tick = 500 * time.Millisecond
	l := New(Options{Emulate: true, Tick: tick, AccountTarget: 20}) // 10 requests per tick
	for i := range 9 {
		now := t0.Add(time.Duration(i) * tick)
		for j := range 12 {
			op := Op{Service: Table, Account: "a", Container: "t", Key: fmt.Sprint(j), Kind: KindInsert, Entities: 1}
			tk := l.Admit(&op, now)
			l.Finish(&tk, Result{Status: 201, Now: now})
		}
	}
	if b := l.Snapshot(t0.Add(9*tick), 1).Tables[0].Rates.Busy; b != 4 {
		t.Fatalf("busy %v per second, want 4", b)
	}
}

// Latency percentiles: none before any request finished; a minute lands in the last bucket
// (2^25 µs); p is rounded to the nearest request.
func TestLatencyPercentiles(t *testing.T) {
	l := New(Options{})
	op := Op{Service: Table, Account: "a", Container: "t", Key: "k", Kind: KindInsert, Entities: 1}
	l.Admit(&op, t0) // never finished
	if tv := l.Snapshot(t0, 1).Tables[0]; tv.LatencyP50 != "0s" {
		t.Errorf("p50 %s before any request finished, want 0s", tv.LatencyP50)
	}
	for i, d := range []time.Duration{time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond, time.Minute} {
		op := Op{Service: Table, Account: "a", Container: "t", Key: fmt.Sprint(i), Kind: KindInsert, Entities: 1}
		tk := l.Admit(&op, t0)
		l.Finish(&tk, Result{Status: 201, Now: t0.Add(d)})
	}
	// 4 requests: p25 is the first (1 ms: up to 1.024 ms), p50 the second (up to 4.096 ms),
	// p90 rounds to the fourth (a minute: the last bucket).
	h := &l.tables[tableKey{Table, "a", "t"}].stats.lat
	for p, want := range map[float64]time.Duration{0.25: 1024 * time.Microsecond, 0.5: 4096 * time.Microsecond, 0.8: 4096 * time.Microsecond, 0.9: (1 << 25) * time.Microsecond} {
		if got := percentile(h, p); got != want {
			t.Errorf("p%.0f = %v, want %v", 100*p, got, want)
		}
	}
}

// The terminal view shows a hot partition's demand as a percentage of its target.
func TestWriteTextOfTarget(t *testing.T) {
	s := Snapshot{Hottest: []PartitionView{{Key: "k", Table: "t", OfTarget: 1.5}}}
	var b bytes.Buffer
	WriteText(&b, &s)
	if out := b.String(); !strings.Contains(out, "150%") {
		t.Errorf("a partition at 1.5 times its target is not shown at 150%%:\n%s", out)
	}
}
