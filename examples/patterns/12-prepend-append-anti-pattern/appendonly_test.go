package main

import (
	"context"
	"testing"
	"time"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestPrependAppendAntiPattern(t *testing.T) {
	// Targets scaled down (a partition 100 entities/s, a partition server 200) and periods
	// shortened, so that a second of modest load (350 inserts/s, within reach of a busy
	// 2-core machine under the race detector) shows what minutes at Azure's targets would.
	srv := tablotest.StartEmulating(t, "partition=100,server=200,heat=200ms,move=150ms,tick=50ms")
	svc, _ := srv.TableService(t, false)
	outs, err := Run(context.Background(), svc, srv.PartitionsURL, Load{Rate: 350, Duration: time.Second, Writers: 4}, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	hour, emp := outs[0], outs[1]
	// Append-only: one partition takes every insert, is refused beyond its target, and its
	// range cannot be split (every new key is past the split point any sample proposes).
	if len(hour.PerPartition) != 1 || hour.Reasons["partition"] == 0 || len(hour.Stats.Ranges) != 1 {
		t.Errorf("append-only: %d partitions, refusals %v, %d ranges; want one partition refusing beyond its target, one range",
			len(hour.PerPartition), hour.Reasons, len(hour.Stats.Ranges))
	}
	// Spread: no partition goes over its target; the range, hot for its server, is split
	// and its halves served by two servers (refusing for a moment while hot and moving, as
	// on Azure).
	if len(emp.PerPartition) != 20 || emp.Reasons["partition"] != 0 || len(emp.Stats.Ranges) < 2 ||
		emp.Stats.Ranges[0].Server == emp.Stats.Ranges[1].Server {
		t.Errorf("spread: %d partitions, refusals %v, ranges %+v", len(emp.PerPartition), emp.Reasons, emp.Stats.Ranges)
	}
	if hour.Appended != hour.Inserts || emp.Appended*5 > emp.Inserts {
		t.Errorf("appended at the end: %d of append-only's, %d of spread's", hour.Appended, emp.Appended)
	}
}
