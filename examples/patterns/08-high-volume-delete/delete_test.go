package main

import (
	"context"
	"slices"
	"testing"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestHighVolumeDelete(t *testing.T) {
	svc, rec := tablotest.Start(t).TableService(t, true)
	res, err := Run(context.Background(), svc, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	day := []string{"LoginAttempts20261122", "LoginAttempts20261123", "LoginAttempts20261124"}
	if !slices.Equal(res.TablesBefore, append(day, "LoginAttemptsAllDays")) {
		t.Errorf("tables before: %v", res.TablesBefore)
	}
	// One request removed the day's 1,000 entities; the other days are untouched.
	if res.DeleteRequests != 1 || !slices.Equal(res.TablesAfter, []string{day[1], day[2], "LoginAttemptsAllDays"}) {
		t.Errorf("after one delete: %v", res.TablesAfter)
	}
	if !isNotFound(res.OldDayAfter) {
		t.Errorf("query of the purged day: %v, want 404", res.OldDayAfter)
	}
	if !slices.Equal(res.Remaining, []int{res.PerDay, res.PerDay}) {
		t.Errorf("remaining days hold %v entities, want %d each", res.Remaining, res.PerDay)
	}
	// The shared table needed a scan of every day and a transaction per 100 entities.
	if res.SingleTableReqs < 1+res.PerDay/100 {
		t.Errorf("shared-table purge took %d requests", res.SingleTableReqs)
	}
	p := rec.Plans()
	p = p[len(p)-1:] // the last page of the scan
	if p[0].Kind != "table-scan" || p[0].Scanned < res.PerDay {
		t.Errorf("finding the day in the shared table: %q, want a table scan", p[0].Raw)
	}
}
