package main

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestInterPartitionIndex(t *testing.T) {
	srv := tablotest.StartWith(t, "queue")
	tables, rec := srv.TableService(t, true)
	queues, err := azqueue.NewServiceClientFromConnectionString(srv.Conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), tables, queues, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	// Eventually: absent before the worker, then both indexes find the same employee.
	if res.BeforeWork != 0 {
		t.Errorf("index copy present before the worker ran")
	}
	if res.ByID.EmployeeID != "000223" || res.ByEmail.EmployeeID != "000223" || res.ByEmail.Name != res.ByID.Name {
		t.Errorf("by id %+v, by email %+v", res.ByID, res.ByEmail)
	}
	for i, e := range res.EmailsA {
		if e.Email[0] != 'a' || e.RowKey != e.Email || i > 0 && res.EmailsA[i-1].Email >= e.Email {
			t.Errorf("address range at %d: %+v", i, e)
		}
	}
	if res.AfterMove.EmployeeID != "000223" || res.OldAddressHits != 0 {
		t.Errorf("after the move: %+v, %d copies under the old address", res.AfterMove, res.OldAddressHits)
	}
	for _, p := range rec.Plans() {
		if p.Kind != "point" && p.Kind != "row-range" || p.Scanned != p.Returned {
			t.Errorf("plan %q reads more than it returns", p.Raw)
		}
	}
}
