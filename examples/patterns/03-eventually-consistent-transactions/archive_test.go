package main

import (
	"context"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestEventuallyConsistentArchive(t *testing.T) {
	srv := tablotest.StartWith(t, "queue")
	tables, _ := srv.TableService(t, true)
	queues, err := azqueue.NewServiceClientFromConnectionString(srv.Conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), tables, queues, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	// Both crashes happened, and every request completed exactly once: each archived
	// employee is in Archive once and gone from Current, the others untouched.
	if res.Crashes != 2 {
		t.Errorf("%d crashes, want 2", res.Crashes)
	}
	if !slices.Equal(res.Current, []string{"000454", "000458"}) || !slices.Equal(res.Archive, []string{"000455", "000456", "000457"}) {
		t.Errorf("Current %v, Archive %v", res.Current, res.Archive)
	}
	if res.Left != 0 || res.Poisoned != 0 {
		t.Errorf("%d messages left, %d poisoned", res.Left, res.Poisoned)
	}
}
