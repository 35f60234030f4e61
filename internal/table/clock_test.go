package table

import (
	"context"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// testClock is a clock the test moves by hand, backwards included.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

var clockT0 = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

// clockedService opens an in-memory store and a Service over it with a hand-moved clock.
func clockedService(t *testing.T) (*Service, *pebblestore.DB, *testClock) {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clk := &testClock{t: clockT0}
	svc := New(db, Options{Now: clk.Now})
	if _, err := svc.CreateTable(context.Background(), "a", "Clock"); err != nil {
		t.Fatal(err)
	}
	return svc, db, clk
}

func writeRow(t *testing.T, svc *Service, kind OpKind, rk string, m IfMatch) (int64, error) {
	t.Helper()
	e := &entity.Entity{PartitionKey: "p", RowKey: rk, Props: []entity.Property{{Name: "N", Value: entity.Int32Value(1)}}}
	r, err := svc.Write(context.Background(), "a", "Clock", Op{Kind: kind, Entity: e, IfMatch: m})
	if err != nil || r.Entity == nil {
		return 0, err
	}
	return r.Entity.Timestamp, nil
}

func mustWrite(t *testing.T, svc *Service, kind OpKind, rk string, m IfMatch) int64 {
	t.Helper()
	ts, err := writeRow(t, svc, kind, rk, m)
	if err != nil {
		t.Fatalf("%v %s: %v", kind, rk, err)
	}
	return ts
}

// TestTimestampsIncreaseWhenClockGoesBack: within one process, a clock that goes back or
// stands still never yields a Timestamp at or before one already handed out, even to another
// entity (the process-wide guard; the per-entity one cannot help a new entity).
func TestTimestampsIncreaseWhenClockGoesBack(t *testing.T) {
	svc, _, clk := clockedService(t)
	a := mustWrite(t, svc, Insert, "a", IfMatch{})
	clk.Set(clockT0.Add(-time.Hour))
	b := mustWrite(t, svc, Insert, "b", IfMatch{})
	if b <= a {
		t.Fatalf("clock went back: Timestamp %d not after %d", b, a)
	}
	c := mustWrite(t, svc, Insert, "c", IfMatch{}) // clock stands still
	if c <= b {
		t.Fatalf("clock stood still: Timestamp %d not after %d", c, b)
	}
}

// TestRestartWithEarlierClock restarts the service (a new Service over the same store) with a
// clock an hour before the stored Timestamps: a replace still gets a later Timestamp and a new
// ETag, the old ETag no longer matches, and a deleted then re-inserted entity gets a
// Timestamp after every one handed out before (the stored clock floor).
func TestRestartWithEarlierClock(t *testing.T) {
	svc, db, _ := clockedService(t)
	old := mustWrite(t, svc, Insert, "r", IfMatch{})
	gone := mustWrite(t, svc, Insert, "gone", IfMatch{})
	svc.Close()

	clk := &testClock{t: clockT0.Add(-time.Hour)}
	svc = New(db, Options{Now: clk.Now})
	defer svc.Close()
	replaced := mustWrite(t, svc, Replace, "r", IfMatch{Ticks: old})
	if replaced <= old {
		t.Fatalf("replace after restart: Timestamp %d not after %d", replaced, old)
	}
	if entity.ETag(replaced) == entity.ETag(old) {
		t.Fatal("replace after restart kept the ETag")
	}
	if _, err := writeRow(t, svc, Replace, "r", IfMatch{Ticks: old}); !azerr.Is(err, azerr.UpdateConditionNotSatisfied) {
		t.Fatalf("old ETag after replace: %v, want UpdateConditionNotSatisfied", err)
	}
	if _, err := svc.Write(context.Background(), "a", "Clock", Op{Kind: Delete, Entity: &entity.Entity{PartitionKey: "p", RowKey: "gone"}, IfMatch: IfMatch{Ticks: gone}}); err != nil {
		t.Fatal(err)
	}
	again := mustWrite(t, svc, Insert, "gone", IfMatch{})
	if again <= gone || again <= replaced {
		t.Fatalf("re-insert after restart: Timestamp %d, want after %d and %d", again, gone, replaced)
	}
	if _, err := writeRow(t, svc, Replace, "gone", IfMatch{Ticks: gone}); !azerr.Is(err, azerr.UpdateConditionNotSatisfied) {
		t.Fatalf("ETag of the deleted entity matched its re-insert: %v", err)
	}
}

// TestRestartWithoutStoredFloor: data written before the clock floor existed (no floor key)
// and a restarted clock that is earlier than, or exactly at, the stored Timestamp: each
// write to an existing entity still moves its Timestamp forward (the per-entity guard).
func TestRestartWithoutStoredFloor(t *testing.T) {
	for _, back := range []time.Duration{time.Hour, 0} {
		svc, db, _ := clockedService(t)
		old := mustWrite(t, svc, Insert, "r", IfMatch{})
		svc.Close()
		if err := db.Update(context.Background(), []store.Lock{{Name: clockFloorKey}}, func(tx store.Txn) error {
			return tx.Delete(keys.Meta(clockFloorKey))
		}); err != nil {
			t.Fatal(err)
		}
		clk := &testClock{t: entity.TimeOf(old).Add(-back)}
		svc = New(db, Options{Now: clk.Now})
		for _, kind := range []OpKind{Replace, Merge, InsertOrReplace, InsertOrMerge} {
			ts := mustWrite(t, svc, kind, "r", IfMatch{Ticks: old})
			if ts <= old {
				t.Fatalf("clock back %v, %v: Timestamp %d not after %d", back, kind, ts, old)
			}
			if _, err := writeRow(t, svc, Replace, "r", IfMatch{Ticks: old}); !azerr.Is(err, azerr.UpdateConditionNotSatisfied) {
				t.Fatalf("clock back %v, %v: old ETag still matches (%v)", back, kind, err)
			}
			old = ts
		}
		svc.Close()
	}
}

// TestClockFloorStored: the floor a run stores is above every Timestamp it handed out, and
// it is raised as the clock moves on (not written once and left behind).
func TestClockFloorStored(t *testing.T) {
	svc, db, clk := clockedService(t)
	floor := func() int64 {
		v, err := db.Get(context.Background(), keys.Meta(clockFloorKey))
		if err != nil {
			t.Fatal(err)
		}
		return int64(binary.BigEndian.Uint64(v))
	}
	for i := range 5 {
		clk.Set(clockT0.Add(time.Duration(i) * time.Minute))
		ts := mustWrite(t, svc, InsertOrReplace, "r", IfMatch{})
		if f := floor(); f < ts {
			t.Fatalf("write %d: stored floor %d below Timestamp %d", i, f, ts)
		}
	}
}

// steppingClock moves forward by step at every reading, like a write that waits long for its
// locks between reserving Timestamps and taking one.
type steppingClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// TestWriteOutrunsReservedFloor: when the clock has moved past the reserved floor by the time
// the write takes its Timestamp, the write reserves further ahead and succeeds, and the
// stored floor still covers its Timestamp.
func TestWriteOutrunsReservedFloor(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clk := &steppingClock{t: clockT0, step: 3 * time.Second}
	svc := New(db, Options{Now: clk.Now})
	defer svc.Close()
	if _, err := svc.CreateTable(context.Background(), "a", "Clock"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ts := mustWrite(t, svc, InsertOrReplace, "r", IfMatch{})
		v, err := db.Get(context.Background(), keys.Meta(clockFloorKey))
		if err != nil {
			t.Fatal(err)
		}
		if f := int64(binary.BigEndian.Uint64(v)); f < ts {
			t.Fatalf("write %d: stored floor %d below Timestamp %d", i, f, ts)
		}
	}
}

// TestClockFloorNeverLowered: two services on one store (as front ends share a database):
// the one whose clock is behind does not lower the floor the other stored since it last
// looked.
func TestClockFloorNeverLowered(t *testing.T) {
	ahead, db, _ := clockedService(t)
	defer ahead.Close()
	bclk := &testClock{t: clockT0.Add(-time.Hour)}
	behind := New(db, Options{Now: bclk.Now})
	defer behind.Close()
	mustWrite(t, behind, InsertOrReplace, "b", IfMatch{}) // behind loads and raises the floor
	ts := mustWrite(t, ahead, InsertOrReplace, "a", IfMatch{})
	bclk.Set(clockT0.Add(-time.Hour + time.Minute)) // past behind's own floor: it reserves again
	mustWrite(t, behind, InsertOrReplace, "b", IfMatch{})
	v, err := db.Get(context.Background(), keys.Meta(clockFloorKey))
	if err != nil {
		t.Fatal(err)
	}
	if f := int64(binary.BigEndian.Uint64(v)); f < ts {
		t.Fatalf("stored floor %d below Timestamp %d of the service ahead", f, ts)
	}
}

// TestClockFloorReserve: under steady writes the stored clock floor is raised about once per
// floorReserve/2 of clock time and is never more than floorReserve ahead of the clock, so
// that after a restart Timestamps run at most that far ahead of it.
func TestClockFloorReserve(t *testing.T) {
	svc, db, clk := clockedService(t)
	floor := func() int64 {
		v, err := db.Get(context.Background(), keys.Meta(clockFloorKey))
		if err != nil || len(v) != 8 {
			t.Fatalf("stored floor %x: %v", v, err)
		}
		return int64(binary.BigEndian.Uint64(v))
	}
	const step = 100 * time.Millisecond
	steps := int(10 * time.Duration(floorReserve) * 100 / step) // ten reserves' worth of clock
	raises, prev := 0, int64(0)
	now := clockT0
	for i := range steps {
		now = clockT0.Add(time.Duration(i) * step)
		clk.Set(now)
		mustWrite(t, svc, InsertOrReplace, "r", IfMatch{})
		f := floor()
		if f != prev {
			raises, prev = raises+1, f
		}
		if ahead := f - entity.Ticks(now); ahead > floorReserve {
			t.Fatalf("the stored floor is %d ticks ahead of the clock; at most %d", ahead, floorReserve)
		}
	}
	// One raise per floorReserve/2 of clock: about 20 here; raising on every write is 200.
	if raises > 25 {
		t.Fatalf("the floor was raised %d times in %d writes over %v", raises, steps, now.Sub(clockT0))
	}
	svc.Close()
	svc = New(db, Options{Now: clk.Now})
	defer svc.Close()
	ts := mustWrite(t, svc, InsertOrReplace, "r", IfMatch{})
	if ahead := ts - entity.Ticks(now); ahead > floorReserve {
		t.Fatalf("after a restart, a Timestamp %d ticks ahead of the clock; at most %d", ahead, floorReserve)
	}
}
