package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/internal/app"
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/partition"
)

// startServerWith starts Tablo in memory with the partition layer configured by the specs.
func startServerWith(t testing.TB, emulate, faults string) *testServer {
	t.Helper()
	cfg := config.Config{Host: "127.0.0.1", InMemory: true, Accounts: []auth.Account{auth.DevAccount()}}
	var err error
	if cfg.Partition, err = partition.ParseOptions(emulate); err != nil {
		t.Fatal(err)
	}
	if cfg.Faults, err = partition.ParseFaults(faults); err != nil {
		t.Fatal(err)
	}
	a, err := app.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError + 4})))
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{app: a, endpoint: "http://" + a.Addr().String() + "/" + devAccount}
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// attemptCounter counts every HTTP attempt the SDK makes, retries included.
type attemptCounter struct{ n atomic.Int64 }

func (a *attemptCounter) Do(req *policy.Request) (*http.Response, error) {
	a.n.Add(1)
	return req.Next()
}

// Emulated targets: a single hot partition is served flat out for the heat period, then
// throttled with ServerBusy; the Go SDK's default retry policy completes every insert, and
// reading back finds each exactly once.
func TestEmulatedTargetsDefaultRetryLosesNothing(t *testing.T) {
	ts := startServerWith(t, "partition=40,server=1000000,heat=1s,move=200ms,tick=100ms", "")
	attempts := &attemptCounter{}
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{PerRetryPolicies: []policy.Policy{attempts}}}
	svc, err := aztables.NewServiceClientFromConnectionString(ts.connString(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "hot", nil); err != nil {
		t.Fatal(err)
	}
	client := svc.NewClient("hot")
	const writers = 4
	deadline := time.Now().Add(2500 * time.Millisecond)
	var (
		mu      sync.Mutex
		written = map[string]bool{}
		wg      sync.WaitGroup
		calls   atomic.Int64
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				rk := fmt.Sprintf("w%d-%06d", w, i)
				calls.Add(1)
				_, err := client.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"`+rk+`","N":1}`), nil)
				if err != nil {
					t.Errorf("insert %s: %v", rk, err)
					return
				}
				mu.Lock()
				written[rk] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	snap := ts.app.Partitions().Snapshot(time.Now(), 5)
	if snap.Busy["partition"] == 0 {
		t.Fatalf("no ServerBusy from the hot partition: %+v", snap.Busy)
	}
	if attempts.n.Load() <= calls.Load() {
		t.Fatalf("%d attempts for %d calls: no retries", attempts.n.Load(), calls.Load())
	}
	seen := map[string]int{}
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: ptr("PartitionKey eq 'p'")})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			rk := string(e)
			_, rk, _ = strings.Cut(rk, `"RowKey":"`)
			rk, _, _ = strings.Cut(rk, `"`)
			seen[rk]++
		}
	}
	if len(seen) != len(written) {
		t.Fatalf("%d entities read back, %d written", len(seen), len(written))
	}
	for rk, n := range seen {
		if n != 1 || !written[rk] {
			t.Fatalf("row %s read %d times, written %v", rk, n, written[rk])
		}
	}
	t.Logf("%d inserts, %d attempts, ServerBusy %v", len(written), attempts.n.Load(), snap.Busy)
}

func ptr[T any](v T) *T { return &v }

// statusOf is the HTTP status of an SDK error (0 for a transport error, 200 for none).
func statusOf(err error) int {
	var re *azcore.ResponseError
	switch {
	case err == nil:
		return 200
	case errors.As(err, &re):
		return re.StatusCode
	}
	return 0
}

// A seeded fault run meets the same faults twice.
func TestFaultSequenceReproducible(t *testing.T) {
	run := func() string {
		ts := startServerWith(t, "", "seed=11; fault=busy op=write p=0.3; fault=internal op=point-read p=0.2")
		client := ts.newTable(t)
		ctx := context.Background()
		var b strings.Builder
		for i := range 60 {
			var err error
			if i%2 == 0 {
				_, err = client.UpsertEntity(ctx, []byte(fmt.Sprintf(`{"PartitionKey":"p","RowKey":"r%d"}`, i)), nil)
			} else {
				_, err = client.GetEntity(ctx, "p", fmt.Sprintf("r%d", i-1), nil)
			}
			fmt.Fprintf(&b, "%d ", statusOf(err))
		}
		return b.String()
	}
	a, b := run(), run()
	if a != b {
		t.Fatalf("same seed, different outcomes:\n%s\n%s", a, b)
	}
	if !strings.Contains(a, "503") || !strings.Contains(a, "500") {
		t.Fatalf("no faults met: %s", a)
	}
}

// An after-apply fault loses the reply of an applied write: the client sees the error, the
// write is there. A before-apply fault on a batch applies none of it.
func TestFaultAfterApplyAndBatch(t *testing.T) {
	ts := startServerWith(t, "", "fault=timeout when=after every=1 op=update; fault=drop when=after every=1 op=insert; fault=busy every=1 op=batch")
	client := ts.newTable(t) // no retries (clientOptions)
	ctx := context.Background()
	_, err := client.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"u","V":1}`), nil)
	if statusOf(err) != 500 || !strings.Contains(err.Error(), "OperationTimedOut") {
		t.Fatalf("upsert: %v, want 500 OperationTimedOut", err)
	}
	if _, err := client.GetEntity(ctx, "p", "u", nil); err != nil {
		t.Fatalf("the upsert whose reply was lost is not applied: %v", err)
	}
	_, err = client.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"i"}`), nil)
	if statusOf(err) != 0 {
		t.Fatalf("insert: %v, want a dropped connection", err)
	}
	if _, err := client.GetEntity(ctx, "p", "i", nil); err != nil {
		t.Fatalf("the insert whose connection dropped is not applied: %v", err)
	}
	actions := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"b","RowKey":"1"}`)},
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"b","RowKey":"2"}`)},
	}
	if _, err := client.SubmitTransaction(ctx, actions, nil); statusOf(err) != 503 {
		t.Fatalf("batch: %v, want 503", err)
	}
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: ptr("PartitionKey eq 'b'")})
	page, err := pager.NextPage(ctx)
	if err != nil || len(page.Entities) != 0 {
		t.Fatalf("refused batch left %d entities (%v)", len(page.Entities), err)
	}
	injected := ts.app.Partitions().Snapshot(time.Now(), 1).Faults.Injected
	if injected["timeout"] != 1 || injected["drop"] != 1 || injected["busy"] != 1 {
		t.Fatalf("fault counts %v", injected)
	}
}

// An append-only load lands in one range partition, and the query plan names it.
func TestAppendOnlyOneRangeReported(t *testing.T) {
	ts := startServerWith(t, "", "")
	client := ts.newTable(t)
	ctx := context.Background()
	for i := range 50 {
		if _, err := client.AddEntity(ctx, []byte(fmt.Sprintf(`{"PartitionKey":"%06d","RowKey":"r"}`, i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	name := tableNames[client]
	status, h, _ := ts.queryEntitiesRaw(t, name, nil)
	plan := h.Get("x-tablo-query-plan")
	if status != 200 || !strings.Contains(plan, "; ranges=1 r0@s") || !strings.HasSuffix(plan, "; returned=50") {
		t.Fatalf("plan %q", plan)
	}
	snap := ts.app.Partitions().Snapshot(time.Now(), 100)
	for _, tv := range snap.Tables {
		if tv.Name != name {
			continue
		}
		if len(tv.Ranges) != 1 || tv.Kinds["insert"] != 50 || len(tv.Partitions) != 50 || tv.PartsPerQ != 50 {
			t.Fatalf("table %+v", tv)
		}
		return
	}
	t.Fatalf("table %s not in the snapshot", name)
}

// A hashed design above one server's capacity is split at a key that divides its load and
// spread over servers; every write still completes under the SDK's default retry policy.
func TestHashedLoadSplitsThroughSDK(t *testing.T) {
	ts := startServerWith(t, "server=150,servers=8,heat=300ms,move=100ms,tick=100ms", "")
	svc, err := aztables.NewServiceClientFromConnectionString(ts.connString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "hashed", nil); err != nil {
		t.Fatal(err)
	}
	client := svc.NewClient("hashed")
	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	var written atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				pk := fmt.Sprintf("b%02d", (i*4+w)*7%16)
				if _, err := client.AddEntity(ctx, []byte(fmt.Sprintf(`{"PartitionKey":"%s","RowKey":"w%d-%d"}`, pk, w, i)), nil); err != nil {
					t.Errorf("insert: %v", err)
					return
				}
				written.Add(1)
			}
		}()
	}
	wg.Wait()
	snap := ts.app.Partitions().Snapshot(time.Now(), 1)
	for _, tv := range snap.Tables {
		if tv.Name != "hashed" {
			continue
		}
		servers := map[int]bool{}
		for _, r := range tv.Ranges {
			servers[r.Server] = true
		}
		if len(tv.Ranges) < 2 || len(servers) < 2 {
			t.Fatalf("%d writes left %d ranges on %d servers: %+v; events %+v", written.Load(), len(tv.Ranges), len(servers), tv.Ranges, snap.Events)
		}
		return
	}
	t.Fatal("table not in the snapshot")
}
