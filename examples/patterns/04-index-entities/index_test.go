package main

import (
	"context"
	"testing"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestIndexEntities(t *testing.T) {
	svc, rec := tablotest.Start(t).TableService(t, true)
	res, err := Run(context.Background(), svc, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	// The index finds exactly the employees the full filter finds: no id lost to a racing
	// writer, none listed twice.
	if len(res.Jones) != 20 || len(res.Scanned) != 20 {
		t.Fatalf("index found %d, filter found %d, want 20 each", len(res.Jones), len(res.Scanned))
	}
	for i := range res.Jones {
		if res.Jones[i] != res.Scanned[i] || res.Jones[i].LastName != "Jones" {
			t.Errorf("%d: index %+v, filter %+v", i, res.Jones[i], res.Scanned[i])
		}
	}
	// Two reads that touch only what they return, against one that reads the partition.
	p := rec.Plans()
	if len(p) != 3 {
		t.Fatalf("plans %v", p)
	}
	if p[0].Kind != "point" || p[0].Scanned != 1 {
		t.Errorf("index read: %q", p[0].Raw)
	}
	if p[1].Kind != "union" || p[1].Scanned != 20 || p[1].Returned != 20 {
		t.Errorf("employee fetch: %q", p[1].Raw)
	}
	if p[2].Kind != "partition" || p[2].Scanned != 105 {
		t.Errorf("filter: %q", p[2].Raw)
	}
}
