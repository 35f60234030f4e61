package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestLogDataAntiPattern(t *testing.T) {
	// A partition's target scaled down to 100 entities/s and the heat period to 200 ms.
	srv := tablotest.StartEmulating(t, "partition=100,server=1000000,heat=200ms,move=100ms,tick=50ms")
	svc, rec := srv.TableService(t, false)
	outs, err := Run(context.Background(), svc, srv.PartitionsURL, Load{Rate: 300, Duration: 600 * time.Millisecond, Writers: 4}, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	byTime, bySource := outs[0], outs[1]
	// Keyed by time: one partition takes every write and refuses beyond its target.
	if byTime.Partitions != 1 || byTime.Refused == 0 || len(byTime.Hottest) != 1 {
		t.Errorf("by time: %d partitions, %d refused, hottest %v", byTime.Partitions, byTime.Refused, byTime.Hottest)
	}
	// Keyed by source: sixteen partitions under their target.
	if bySource.Partitions != 16 || bySource.Refused != 0 {
		t.Errorf("by source: %d partitions, %d refused", bySource.Partitions, bySource.Refused)
	}
	// Both find exactly the stored errors of the window...
	for _, o := range outs {
		slices.Sort(o.Found)
		slices.Sort(o.Expected)
		if len(o.Expected) == 0 || !slices.Equal(o.Found, o.Expected) {
			t.Errorf("%s: found %v, want %v", o.Design, o.Found, o.Expected)
		}
	}
	// ...but keyed by source the query reads the whole table.
	p := rec.Plans()
	if len(p) != 2 || p[0].Kind != "row-range" || p[1].Kind != "table-scan" || p[1].Scanned != bySource.Written {
		t.Errorf("plans %v", p)
	}
	if p[0].Scanned*3 > byTime.Written-byTime.Refused {
		t.Errorf("by time the window read %d of %d", p[0].Scanned, byTime.Written-byTime.Refused)
	}
}

func TestLogDataInBlobs(t *testing.T) {
	srv := tablotest.StartWith(t, "blob")
	blobs, err := azblob.NewClientFromConnectionString(srv.Conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err := RunBlobs(context.Background(), blobs, 3000, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	// Ten minute blobs; the window lists and reads two of them and finds exactly its errors.
	slices.Sort(o.Found)
	if o.Blobs != 10 || o.Listed != 2 || len(o.Expected) == 0 || !slices.Equal(o.Found, o.Expected) {
		t.Errorf("%d blobs, %d read; found %d of %d", o.Blobs, o.Listed, len(o.Found), len(o.Expected))
	}
}
