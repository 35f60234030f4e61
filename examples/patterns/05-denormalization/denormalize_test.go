package main

import (
	"context"
	"testing"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestDenormalization(t *testing.T) {
	svc, rec := tablotest.Start(t).TableService(t, true)
	res, err := Run(context.Background(), svc, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	p := rec.Plans()
	// Normalized: two point queries; denormalized: one, answering the same question; then
	// three to read the update back.
	if len(p) != 6 {
		t.Fatalf("plans %v", p)
	}
	for _, pl := range p {
		if pl.Kind != "point" || pl.Scanned != 1 {
			t.Errorf("plan %q, want a point query", pl.Raw)
		}
	}
	if d := res.Denormalized; d.ManagerName != "Jun Cao" || d.ManagerEmail != "junc@contoso.com" {
		t.Errorf("department %+v", d)
	}
	// The transaction kept the copy equal to the original.
	if res.Manager.Email != "jun.cao@contoso.com" || res.AfterUpdate.ManagerEmail != res.Manager.Email || res.Manager.LastName != "Cao" {
		t.Errorf("after the update: manager %+v, department %+v", res.Manager, res.AfterUpdate)
	}
}
