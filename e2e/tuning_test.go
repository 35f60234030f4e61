package e2e

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// fillTable writes n entities with V = i%100 in partitions of 100, by batches.
func fillTable(t *testing.T, tc *aztables.Client, n int) {
	t.Helper()
	for b := 0; b < n; b += 100 {
		var actions []aztables.TransactionAction
		for i := b; i < min(b+100, n); i++ {
			actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
				Entity: fmt.Appendf(nil, `{"PartitionKey":"p%03d","RowKey":"r%05d","V":%d}`, b/100, i, i%100)})
		}
		if _, err := tc.SubmitTransaction(ctx, actions, nil); err != nil {
			t.Fatal(err)
		}
	}
}

var timestampRE = regexp.MustCompile(`"Timestamp":"[^"]*",`)

// filteredScan runs a filtered whole-table query and returns its plan header and body.
func filteredScan(t *testing.T, ts *testServer, table string) (string, string) {
	t.Helper()
	status, h, body := ts.do(t, http.MethodGet, "/"+table+"()?$filter=V%20eq%207", map[string]string{"Accept": "application/json;odata=nometadata"}, "")
	if status != 200 {
		t.Fatalf("scan: %d %s", status, body)
	}
	return h.Get("x-tablo-query-plan"), body
}

// TestColumnCacheFlag: --column-cache-mb reaches the Table service. With a budget, repeated
// filtered scans of a large table come to be served from the column cache (the plan says
// "+columns") with the same results; with 0, never.
func TestColumnCacheFlag(t *testing.T) {
	// Scans of 5,000 entities pass the 20,000 examined that trigger a build after 4; the
	// build runs in the background, so the cached run scans until 3 pages came from it.
	const n, scans = 5000, 12
	var want string
	for _, mb := range []string{"16", "0"} {
		ts := startServerArgs(t, "--column-cache-mb", mb)
		tc := ts.newTable(t)
		name := tableNameOf(t, tc)
		fillTable(t, tc, n)
		cached, limit := 0, scans
		if mb != "0" {
			limit = 40
		}
		for range limit {
			if mb != "0" && cached == 3 {
				break
			}
			plan, body := filteredScan(t, ts, name)
			body = timestampRE.ReplaceAllString(body, "") // the two servers wrote at other times
			if want == "" {
				want = body
			}
			if body != want || strings.Count(body, `"V":7`) != n/100 {
				t.Fatalf("cache %s MiB: results differ (plan %q)\n%.300s", mb, plan, body)
			}
			if strings.Contains(plan, "+columns") {
				cached++
			}
		}
		t.Logf("--column-cache-mb %s: %d scans from the column cache", mb, cached)
		if mb == "0" && cached != 0 {
			t.Fatalf("--column-cache-mb 0: %d scans used the column cache", cached)
		}
		if mb != "0" && cached == 0 {
			t.Fatalf("--column-cache-mb %s: no scan used the column cache", mb)
		}
	}
}

// TestGroupCommitWindowFlag: --group-commit-window reaches the engine, and with more
// concurrent writers than the CPUs can run WAL syncs are made to wait for it; a negative
// window turns waiting off.
func TestGroupCommitWindowFlag(t *testing.T) {
	for _, tt := range []struct {
		flag      string
		window    string
		wantWaits bool
	}{
		{"2ms", "2ms", true},
		{"-1ns", "0s", false},
	} {
		ts := startServerArgs(t, "--group-commit-window", tt.flag)
		tc := ts.newTable(t)
		window, _ := ts.app.Engine().GroupCommit()
		if window.String() != tt.window {
			t.Fatalf("--group-commit-window %s: engine window %v, want %s", tt.flag, window, tt.window)
		}
		// 32 writers, far above the policy's threshold (twice the CPUs), until a sync waited
		// (bounded: each round is 32 × 10 inserts).
		var waits int64
		for round := 0; round < 20 && (waits == 0 || !tt.wantWaits); round++ {
			var wg sync.WaitGroup
			errs := make(chan error, 32)
			for w := range 32 {
				wg.Go(func() {
					for i := range 10 {
						if _, err := tc.AddEntity(ctx, fmt.Appendf(nil, `{"PartitionKey":"w%d","RowKey":"%d-%d"}`, w, round, i), nil); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			_, waits = ts.app.Engine().GroupCommit()
			if !tt.wantWaits && round == 2 {
				break
			}
		}
		t.Logf("--group-commit-window %s: %d syncs waited", tt.flag, waits)
		if (waits > 0) != tt.wantWaits {
			t.Fatalf("--group-commit-window %s: %d syncs waited for the window", tt.flag, waits)
		}
	}
}
