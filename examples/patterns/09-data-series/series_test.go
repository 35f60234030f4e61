package main

import (
	"context"
	"testing"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestDataSeries(t *testing.T) {
	svc, rec := tablotest.Start(t).TableService(t, true)
	res, err := Run(context.Background(), svc, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	// Every increment of every concurrent writer is in the series: none lost to a race.
	total := 0
	for h := range 24 {
		if res.Series[hour(h)] != res.Sent[hour(h)] {
			t.Errorf("%s: stored %d, sent %d", hour(h), res.Series[hour(h)], res.Sent[hour(h)])
		}
		total += res.Series[hour(h)]
	}
	if total != 96 {
		t.Errorf("%d messages stored, want 96", total)
	}
	// The whole day is one entity read by one point query; an entity per hour reads 24.
	p := rec.Plans()
	if len(p) != 2 || p[0].Kind != "point" || p[0].Returned != 1 || p[1].Scanned != 24 || res.PerHour != 24 {
		t.Errorf("plans %v, per-hour entities %d", p, res.PerHour)
	}
}
