package partition

import (
	"fmt"
	"testing"
	"time"
)

// hotAt reports whether the snapshot at tick (seconds after t0) shows partition "hot" as hot.
func hotAt(t *testing.T, l *Layer, tick int) bool {
	t.Helper()
	s := l.Snapshot(t0.Add(time.Duration(tick)*time.Second), 1)
	if len(s.Hottest) == 0 || s.Hottest[0].Key != "hot" {
		t.Fatalf("tick %d: hottest %+v", tick, s.Hottest)
	}
	return s.Hottest[0].Hot
}

// A partition is hot while its demand is above its target (at the target is not above); once
// hot, it cools after exactly the heat period (3 ticks) of ticks below the target.
func TestHeatEdges(t *testing.T) {
	o := Options{PartitionTarget: 100, ServerCapacity: 1_000_000, Heat: 3 * time.Second}
	hot := func(int) string { return "hot" }
	l := New(o)
	drive(l, t0, 5, 100, hot)
	if hotAt(t, l, 5) {
		t.Fatal("a partition exactly at its target is hot")
	}
	l = New(o)
	drive(l, t0, 5, 150, hot)                   // hot from tick 0
	drive(l, t0.Add(5*time.Second), 3, 50, hot) // ticks 5, 6, 7 below the target
	if !hotAt(t, l, 7) {                        // ticks 5 and 6 judged: 2 below
		t.Fatal("cooled after 2 ticks below the target, want 3")
	}
	if hotAt(t, l, 8) { // tick 7 judged: 3 below
		t.Fatal("still hot after 3 ticks below the target")
	}
}

// Two ranges on one server, each one hot PartitionKey (no key divides either): once the server
// has been hot for the heat period, the hotter range moves to another server.
func TestHotterRangeMoves(t *testing.T) {
	for _, c := range []struct {
		loads [2]int
		moved string
	}{{[2]int{350, 250}, "r0@s1"}, {[2]int{250, 350}, "r1@s1"}} {
		l := New(Options{Emulate: true, PartitionTarget: 1000, ServerCapacity: 400, Servers: 4, Heat: 2 * time.Second, Move: time.Second})
		tb := tableWithRanges(t, l, []string{"m"}, []int{1}, []int{0})
		for tick := range 4 {
			now := t0.Add(time.Duration(tick) * time.Second)
			for i, key := range []string{"a", "n"} {
				for range c.loads[i] {
					op := Op{Service: Table, Account: "a", Container: "t", Key: key, Kind: KindInsert, Entities: 1}
					tk := l.Admit(&op, now)
					l.Finish(&tk, Result{Status: 204, Now: now})
				}
			}
		}
		if len(l.events) != 1 || l.events[0].Kind != "move" || l.events[0].Range != c.moved || l.events[0].From != 0 {
			t.Fatalf("loads %v: events %+v, want %s (moved from s0)", c.loads, l.events, c.moved)
		}
		if tb.ranges[0].server == tb.ranges[1].server {
			t.Fatalf("loads %v: both ranges still on s%d", c.loads, tb.ranges[0].server)
		}
		// Each server counts the ranges it holds after the move, and the moved range is
		// offline for the move period (one tick) from the tick it moved.
		ev := l.events[0]
		for k := int64(0); k <= 1; k++ {
			s := l.Snapshot(time.Unix(ev.Tick+k, 0), 1)
			if s.Servers[0].Ranges != 1 || s.Servers[ev.To].Ranges != 1 {
				t.Fatalf("loads %v: s0 holds %d ranges and s%d %d, want 1 each", c.loads, s.Servers[0].Ranges, ev.To, s.Servers[ev.To].Ranges)
			}
			for _, r := range s.Tables[0].Ranges {
				if r.Name == c.moved && r.Offline != (k == 0) {
					t.Fatalf("loads %v: %d ticks after the move, range %+v, want offline only in the move's tick", c.loads, k, r)
				}
			}
		}
	}
}

// A hashed load splits the hot range again and again: every range gets its own id, each
// split is counted on the range split, every server counts the ranges it holds, and each
// event's time is its tick's.
func TestSplitsBookkeeping(t *testing.T) {
	o := Options{Emulate: true, PartitionTarget: 1000, ServerCapacity: 400, Servers: 8, Heat: 2 * time.Second, Move: time.Second}
	l := New(o)
	drive(l, t0, 30, 1000, func(i int) string { return fmt.Sprintf("bucket%02d", i*7%16) })
	s := l.Snapshot(t0.Add(30*time.Second), 5)
	rs := s.Tables[0].Ranges
	names, splits, held := map[string]bool{}, 0, 0
	for _, r := range rs {
		names[fmt.Sprint(r.Name[:len(r.Name)-len(fmt.Sprint(r.Server))-2])] = true // "rN"
		splits += r.Splits
	}
	for _, sv := range s.Servers {
		held += sv.Ranges
	}
	events := 0
	for _, e := range s.Events {
		if e.Kind == "split" {
			events++
		}
		if want := time.Unix(e.Tick, 0).UTC().Format(time.RFC3339Nano); e.Time != want {
			t.Errorf("event at tick %d has time %s, want %s", e.Tick, e.Time, want)
		}
	}
	if len(rs) < 3 || len(names) != len(rs) || splits != len(rs)-1 || events != splits || held != len(rs) {
		t.Fatalf("%d ranges, %d distinct ids, %d splits counted, %d split events, %d held by servers: %+v", len(rs), len(names), splits, events, held, rs)
	}
}

// A server that cannot be relieved (an append-only load) is looked at again exactly once per
// heat period, and only while its last tick was above its capacity (at it is not above).
func TestRebalanceCadence(t *testing.T) {
	o := Options{Emulate: true, PartitionTarget: 1000, ServerCapacity: 400, Servers: 8, Heat: 2 * time.Second, Move: time.Second}
	l := New(o)
	seq := func(i int) string { return fmt.Sprintf("%010d", i) }
	drive(l, t0, 7, 1000, seq)
	var ticks []int64
	for _, e := range l.events {
		ticks = append(ticks, e.Tick-t0.Unix())
	}
	if fmt.Sprint(ticks) != "[2 4 6]" {
		t.Fatalf("no-split events at ticks %v, want [2 4 6]", ticks)
	}
	if sv := l.Snapshot(t0.Add(6*time.Second), 1).Servers; !sv[0].Hot || sv[1].Hot {
		t.Fatalf("servers %+v, want s0 hot and s1 not", sv[:2])
	}
	drive(l, t0.Add(7*time.Second), 1, 400, seq) // tick 7 exactly at capacity
	l.Snapshot(t0.Add(8*time.Second), 1)
	if len(l.events) != 3 {
		t.Fatalf("a server exactly at capacity was rebalanced: %+v", l.events[3:])
	}
}

// A new table goes to the server with the least load in the last tick, before the one with
// the fewest ranges.
func TestNewTableOnLeastLoadedServer(t *testing.T) {
	l := New(Options{Servers: 2})
	insert := func(table string, now time.Time) {
		op := Op{Service: Table, Account: "a", Container: table, Key: "k", Kind: KindInsert, Entities: 1}
		tk := l.Admit(&op, now)
		l.Finish(&tk, Result{Status: 201, Now: now})
	}
	insert("busy", t0) // s0
	insert("idle", t0) // s1
	for range 10 {
		insert("busy", t0)
	}
	insert("b", t0.Add(time.Second))
	insert("c", t0.Add(time.Second))
	want := map[string]int{"busy": 0, "idle": 1, "b": 1, "c": 1}
	for _, tv := range l.Snapshot(t0.Add(time.Second), 1).Tables {
		if tv.Ranges[0].Server != want[tv.Name] {
			t.Errorf("table %s on s%d, want s%d", tv.Name, tv.Ranges[0].Server, want[tv.Name])
		}
	}
}

// The split finder samples a whole tick before it picks a key: with a heat period of one tick,
// the first look at the hot server finds no key yet, the next one splits.
func TestFinderSamplesATickBeforeSplitting(t *testing.T) {
	o := Options{Emulate: true, PartitionTarget: 1000, ServerCapacity: 400, Servers: 8, Heat: time.Second, Move: time.Second}
	l := New(o)
	drive(l, t0, 3, 1000, func(i int) string { return fmt.Sprintf("bucket%02d", i*7%16) })
	var got []string
	for _, e := range l.events {
		got = append(got, fmt.Sprintf("%s@%d", e.Kind, e.Tick-t0.Unix()))
	}
	if len(got) < 2 || got[0] != "no-split@1" || got[1] != "split@2" {
		t.Fatalf("events %v, want no-split@1 then split@2", got)
	}
}

// The heavy-hitter counts decay by half every 60 ticks (at multiples of 60 since the epoch).
func TestKeyCountsHalveEvery60Ticks(t *testing.T) {
	l := New(Options{})
	count := func(at time.Time) uint64 {
		t.Helper()
		s := l.Snapshot(at, 1)
		return s.Hottest[0].Count
	}
	start := time.Unix(60*(t0.Unix()/60+1), 0) // a multiple of 60
	drive(l, start, 3, 10, func(int) string { return "k" })
	if n := count(start.Add(59 * time.Second)); n != 30 {
		t.Fatalf("count %d within the 60 ticks, want 30", n)
	}
	if n := count(start.Add(60 * time.Second)); n != 15 {
		t.Fatalf("count %d after 60 ticks, want 15", n)
	}
}
