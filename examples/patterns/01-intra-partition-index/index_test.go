package main

import (
	"context"
	"testing"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestIntraPartitionIndex(t *testing.T) {
	svc, rec := tablotest.Start(t).TableService(t, true)
	res, err := Run(context.Background(), svc, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	// Both indexes find the same employee, each with a point query reading one entity.
	if res.ByID.EmployeeID != "000223" || res.ByEmail.EmployeeID != "000223" || res.ByEmail.LastName != "Jones" ||
		res.ByID.Email != res.ByEmail.Email || res.ByID.Age != res.ByEmail.Age {
		t.Errorf("by id %+v, by email %+v", res.ByID, res.ByEmail)
	}
	p := rec.Plans()
	for _, i := range []int{0, 1} {
		if p[i].Kind != "point" || p[i].Scanned != 1 || p[i].Returned != 1 {
			t.Errorf("lookup %d: plan %q, want a point query reading one entity", i, p[i].Raw)
		}
	}
	// Ranges come back in the order of the index asked for and read only what they return.
	if len(res.IDRange) != 100 || res.IDRange[0].EmployeeID != "000100" || res.IDRange[99].EmployeeID != "000199" {
		t.Errorf("id range: %d employees", len(res.IDRange))
	}
	for i, e := range res.EmailsA {
		if e.Email[0] != 'a' || i > 0 && res.EmailsA[i-1].Email >= e.Email {
			t.Errorf("address range out of order or off prefix at %d: %s", i, e.Email)
		}
	}
	for _, i := range []int{2, 3} {
		if p[i].Kind != "row-range" || p[i].Scanned != p[i].Returned {
			t.Errorf("range %d: plan %q, want a row range reading only what it returns", i, p[i].Raw)
		}
	}
	// The property filter finds the same employee (both copies) only by reading the whole
	// partition.
	if len(res.Scan) != 2 || res.Scan[0].EmployeeID != "000223" || p[4].Kind != "partition" || p[4].Scanned != 400 {
		t.Errorf("scan found %d, plan %q", len(res.Scan), p[4].Raw)
	}
	// The transaction kept the copies consistent.
	if res.AfterEmailMove.EmployeeID != "000223" || res.OldEmailMatches != 0 {
		t.Errorf("after the move: %+v, %d entities under the old address", res.AfterEmailMove, res.OldEmailMatches)
	}
}
