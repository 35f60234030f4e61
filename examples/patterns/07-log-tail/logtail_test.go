package main

import (
	"context"
	"testing"
	"time"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestLogTail(t *testing.T) {
	svc, rec := tablotest.Start(t).TableService(t, true)
	res, err := Run(context.Background(), svc, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	// The ten newest, newest first, from one query that read only them.
	n := len(res.Written)
	if len(res.Latest) != 10 {
		t.Fatalf("%d expenses, want 10", len(res.Latest))
	}
	for i, e := range res.Latest {
		if want := res.Written[n-1-i]; !e.Submitted.Equal(want) || e.PartitionKey != "000123" {
			t.Errorf("%d: %s %s, want %s", i, e.PartitionKey, e.Submitted, want)
		}
		if at, err := FromInvertedTicks(e.RowKey); err != nil || !at.Equal(e.Submitted) {
			t.Errorf("%d: RowKey %s reads back as %s", i, e.RowKey, at)
		}
	}
	p := rec.Plans()
	// (The eleventh entity read tells the server that a continuation is due.)
	if len(p) != 2 || p[0].Kind != "partition" || p[0].Scanned > 11 || p[0].Returned != 10 {
		t.Fatalf("newest ten: plans %v, want one query reading ten entities (and one more)", p)
	}
	// "Since" is a row range from the partition's start, reading only what it returns.
	if len(res.LastHour) != 3 || !res.LastHour[0].Submitted.Equal(res.Written[n-1]) ||
		res.LastHour[2].Submitted.Before(res.Written[n-1].Add(-time.Hour)) {
		t.Errorf("last hour: %v", res.LastHour)
	}
	if p[1].Kind != "row-range" || p[1].Scanned != 3 {
		t.Errorf("last hour: %q, want a row range reading 3", p[1].Raw)
	}
}

func TestInvertedTicksMatchDotNet(t *testing.T) {
	// DateTime(2014, 7, 31, 18, 0, 0, DateTimeKind.Utc).Ticks = 635424264000000000 (the Unix epoch is
	// 621355968000000000 ticks).
	at := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	if got, want := InvertedTicks(at), "2519954711999999999"; got != want {
		t.Errorf("InvertedTicks = %s, want %s", got, want)
	}
	if InvertedTicks(at) <= InvertedTicks(at.Add(100*time.Nanosecond)) {
		t.Error("a later time must sort first")
	}
}
