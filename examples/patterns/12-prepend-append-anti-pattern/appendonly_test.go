package main

import (
	"context"
	"testing"
	"time"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestPrependAppendAntiPattern(t *testing.T) {
	// Targets scaled down (a partition 200 entities/s, a partition server 400) and periods
	// shortened, so that a second of load shows what minutes at Azure's targets would.
	srv := tablotest.StartEmulating(t, "partition=200,server=400,heat=200ms,move=150ms,tick=50ms")
	svc, _ := srv.TableService(t, false)
	outs, err := Run(context.Background(), svc, srv.PartitionsURL, Load{Rate: 600, Duration: 700 * time.Millisecond, Writers: 4}, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	hour, emp := outs[0], outs[1]
	// Append-only: one partition takes every insert, is refused beyond its target, and its
	// range cannot be split (every new key is past the split point any sample proposes).
	if len(hour.PerPartition) != 1 || hour.Busy == 0 || len(hour.Stats.Ranges) != 1 {
		t.Errorf("append-only: %d partitions, %d refused, %d ranges; want one partition, refusals, one range",
			len(hour.PerPartition), hour.Busy, len(hour.Stats.Ranges))
	}
	// Spread: every employee's partition stays under its target; the hot range is split and
	// its halves served by two servers (the moving half refuses for a moment, as on Azure).
	if len(emp.PerPartition) != 20 || emp.Busy >= hour.Busy || len(emp.Stats.Ranges) < 2 ||
		emp.Stats.Ranges[0].Server == emp.Stats.Ranges[1].Server {
		t.Errorf("spread: %d partitions, %d refused (append-only %d), ranges %+v",
			len(emp.PerPartition), emp.Busy, hour.Busy, emp.Stats.Ranges)
	}
	// (Concurrent writers reorder a few of the append-only design's inserts.)
	hourStored := hour.Inserts - hour.Busy
	if hour.Appended*10 < hourStored*7 || emp.Appended*5 > emp.Inserts {
		t.Errorf("appended at the end: %d of append-only's, %d of spread's", hour.Appended, emp.Appended)
	}
}
