package e2e

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablo/tablo/internal/admin"
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
)

func (s *opsServer) tables(t testing.TB, account, key string) *aztables.ServiceClient {
	t.Helper()
	cs := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s/%s;", account, key, s.base, account)
	c, err := aztables.NewServiceClientFromConnectionString(cs, clientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (s *opsServer) adminClient() *admin.Client { return &admin.Client{BaseURL: s.admin} }

func httpGet(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAdminProbesAndMetrics: /healthz, /readyz and /metrics on the admin listener; the
// metrics count the SDK's requests by service, operation and status class, and report the
// engine, the column cache and open connections.
func TestAdminProbesAndMetrics(t *testing.T) {
	s := startOpsServer(t, t.TempDir(), func(c *config.Config) { c.ColumnCacheBytes = 8 << 20 })
	if code, body := httpGet(t, s.admin+"/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("healthz: %d %q", code, body)
	}
	if code, body := httpGet(t, s.admin+"/readyz"); code != 200 {
		t.Fatalf("readyz: %d %q", code, body)
	}
	svc := s.tables(t, devAccount, devKey)
	if _, err := svc.CreateTable(ctx, "metered", nil); err != nil {
		t.Fatal(err)
	}
	tc := svc.NewClient("metered")
	for i := range 3 {
		if _, err := tc.AddEntity(ctx, []byte(fmt.Sprintf(`{"PartitionKey":"p","RowKey":"%d","V":%d}`, i, i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tc.GetEntity(ctx, "p", "missing", nil); err == nil {
		t.Fatal("missing entity found")
	}
	pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: ptr("V gt 0")})
	for pager.More() {
		if _, err := pager.NextPage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := httpGet(t, s.admin+"/partitions"); code != 200 || !strings.Contains(body, "metered") {
		t.Errorf("partitions on the admin listener: %d %.200s", code, body)
	}
	code, m := httpGet(t, s.admin+"/metrics")
	if code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	for _, want := range []string{
		`tablo_requests_total{operation="CreateTable",service="table",status_class="2xx"} 1`,
		`tablo_requests_total{operation="InsertEntity",service="table",status_class="2xx"} 3`,
		`tablo_requests_total{operation="GetEntity",service="table",status_class="4xx"} 1`,
		`tablo_request_duration_seconds_count{operation="InsertEntity",service="table",status_class="2xx"} 3`,
		`tablo_request_duration_seconds_bucket{operation="InsertEntity",service="table",status_class="2xx",le="+Inf"} 3`,
		`tablo_request_body_bytes_total{service="table"}`,
		`tablo_response_body_bytes_total{service="table"}`,
		`tablo_open_connections{service="table"}`,
		`tablo_engine_commits_total`,
		`tablo_engine_wal_syncs_total`,
		`tablo_engine_compactions_total`,
		`tablo_engine_disk_bytes`,
		`tablo_column_cache_misses_total 1`,
		`tablo_column_cache_hits_total 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(m, `tablo_engine_commits_total 0`) || strings.Contains(m, `tablo_engine_wal_syncs_total 0`) {
		t.Errorf("engine counters did not move:\n%s", grepLines(m, "tablo_engine"))
	}
	if strings.Contains(m, `tablo_open_connections{service="table"} 0`) {
		t.Errorf("no open connection counted")
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestResetThroughCLI: `tablo reset --account NAME` drops one account's tables and leaves the
// others'; `tablo reset` drops everything; both through the command's client logic.
func TestResetThroughCLI(t *testing.T) {
	other := auth.Account{Name: "other", Keys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}
	otherKey := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	s := startOpsServer(t, t.TempDir(), func(c *config.Config) { c.Accounts = append(c.Accounts, other) })
	dev, oth := s.tables(t, devAccount, devKey), s.tables(t, "other", otherKey)
	for _, svc := range []*aztables.ServiceClient{dev, oth} {
		if _, err := svc.CreateTable(ctx, "keep", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.NewClient("keep").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	cli := func(args ...string) string {
		var out, errOut strings.Builder
		env := func(k string) string {
			if k == "TABLO_ADMIN_URL" {
				return s.admin
			}
			return ""
		}
		if err := admin.Run(ctx, args[0], args[1:], env, &out, &errOut); err != nil {
			t.Fatalf("tablo %v: %v %s", args, err, errOut.String())
		}
		return out.String()
	}
	cors := []*aztables.CorsRule{{AllowedOrigins: ptr("https://example.com"), AllowedMethods: ptr("GET"),
		AllowedHeaders: ptr("*"), ExposedHeaders: ptr("*"), MaxAgeInSeconds: ptr(int32(60))}}
	if _, err := oth.SetProperties(ctx, aztables.ServiceProperties{Cors: cors}, nil); err != nil {
		t.Fatal(err)
	}
	if out := cli("reset", "--account", "other"); !strings.HasPrefix(out, "reset account other in ") {
		t.Fatalf("output %q", out)
	}
	if names := listTableNames(t, oth); len(names) != 0 {
		t.Fatalf("other's tables after its reset: %v", names)
	}
	if p, err := oth.GetProperties(ctx, nil); err != nil || len(p.Cors) != 0 {
		t.Fatalf("other's service properties after its reset: %v %v", err, p.Cors)
	}
	if _, err := dev.NewClient("keep").GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("devstoreaccount1 lost data in other's reset: %v", err)
	}
	// The name is free again and the new table is empty.
	if _, err := oth.CreateTable(ctx, "keep", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := oth.NewClient("keep").GetEntity(ctx, "p", "r", nil); err == nil {
		t.Fatal("re-created table holds the old entity")
	}
	if err := admin.Run(ctx, "reset", []string{"--account", "nobody", "--admin", s.admin}, func(string) string { return "" }, io.Discard, io.Discard); err == nil {
		t.Fatal("reset of an unknown account succeeded")
	}
	cli("reset")
	for _, svc := range []*aztables.ServiceClient{dev, oth} {
		if names := listTableNames(t, svc); len(names) != 0 {
			t.Fatalf("tables after a full reset: %v", names)
		}
	}
	if _, err := dev.CreateTable(ctx, "keep", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.NewClient("keep").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotSaveRestore: save, change, restore through the SDK and the CLI's client; the
// restored state is the saved one, tables created since are gone, snapshots list and
// delete. On disk and in memory.
func TestSnapshotSaveRestore(t *testing.T) {
	for _, mem := range []bool{false, true} {
		t.Run(map[bool]string{false: "disk", true: "memory"}[mem], func(t *testing.T) {
			s := startOpsServer(t, t.TempDir(), func(c *config.Config) { c.InMemory = mem })
			ac := s.adminClient()
			svc := s.tables(t, devAccount, devKey)
			if _, err := svc.CreateTable(ctx, "snap", nil); err != nil {
				t.Fatal(err)
			}
			tc := svc.NewClient("snap")
			if _, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","V":"saved"}`), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := ac.SaveSnapshot(ctx, "base"); err != nil {
				t.Fatal(err)
			}
			if _, err := ac.SaveSnapshot(ctx, "base"); err == nil || !strings.Contains(err.Error(), "exists") {
				t.Fatalf("second save: %v", err)
			}
			if _, err := tc.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","V":"changed"}`), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.CreateTable(ctx, "later", nil); err != nil {
				t.Fatal(err)
			}
			// Service properties are cached above the store: the restore must drop them.
			if _, err := svc.GetProperties(ctx, nil); err != nil {
				t.Fatal(err)
			}
			cors := []*aztables.CorsRule{{AllowedOrigins: ptr("https://example.com"), AllowedMethods: ptr("GET"),
				AllowedHeaders: ptr("*"), ExposedHeaders: ptr("*"), MaxAgeInSeconds: ptr(int32(60))}}
			if _, err := svc.SetProperties(ctx, aztables.ServiceProperties{Cors: cors}, nil); err != nil {
				t.Fatal(err)
			}
			if p, err := svc.GetProperties(ctx, nil); err != nil || len(p.Cors) != 1 {
				t.Fatalf("properties before restore: %v %+v", err, p)
			}
			if _, err := ac.RestoreSnapshot(ctx, "base"); err != nil {
				t.Fatal(err)
			}
			got, err := tc.GetEntity(ctx, "p", "r", nil)
			if err != nil || !strings.Contains(string(got.Value), `"V":"saved"`) {
				t.Fatalf("after restore: %v %s", err, got.Value)
			}
			if names := listTableNames(t, svc); len(names) != 1 || names[0] != "snap" {
				t.Fatalf("tables after restore: %v", names)
			}
			if p, err := svc.GetProperties(ctx, nil); err != nil || len(p.Cors) != 0 {
				t.Fatalf("properties after restore: %v %+v", err, p.Cors)
			}
			// Writes go on after a restore; "later" can be created again (its name is free).
			if _, err := svc.CreateTable(ctx, "later", nil); err != nil {
				t.Fatal(err)
			}
			if names, err := ac.Snapshots(ctx); err != nil || len(names) != 1 || names[0] != "base" {
				t.Fatalf("list: %v %v", names, err)
			}
			if _, err := ac.RestoreSnapshot(ctx, "missing"); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Fatalf("restore of a missing snapshot: %v", err)
			}
			if _, err := ac.SaveSnapshot(ctx, "../escape"); err == nil {
				t.Fatal("path-like snapshot name accepted")
			}
			// The command's client: flags before or after the arguments.
			run := func(args ...string) (string, error) {
				var out strings.Builder
				err := admin.Run(ctx, "snapshot", args, func(string) string { return "" }, &out, io.Discard)
				return out.String(), err
			}
			if out, err := run("--admin", s.admin, "save", "cli"); err != nil || !strings.HasPrefix(out, "snapshot cli saved in ") {
				t.Fatalf("snapshot save: %q %v", out, err)
			}
			if out, err := run("list", "--admin", s.admin); err != nil || out != "base\ncli\n" {
				t.Fatalf("snapshot list: %q %v", out, err)
			}
			if out, err := run("restore", "cli", "--admin", s.admin); err != nil || !strings.HasPrefix(out, "snapshot cli restored in ") {
				t.Fatalf("snapshot restore: %q %v", out, err)
			}
			if _, err := run("restore", "nosuch", "--admin", s.admin); err == nil {
				t.Fatal("restore of a missing snapshot through the command succeeded")
			}
			if _, err := run("frobnicate", "x", "--admin", s.admin); err == nil {
				t.Fatal("unknown action accepted")
			}
			if _, err := run("delete", "cli", "--admin", s.admin); err != nil {
				t.Fatal(err)
			}
			if _, err := ac.DeleteSnapshot(ctx, "base"); err != nil {
				t.Fatal(err)
			}
			if names, _ := ac.Snapshots(ctx); len(names) != 0 {
				t.Fatalf("after delete: %v", names)
			}
		})
	}
}

// TestSnapshotRestoreIsAtomicForClients: while a restore happens, concurrent readers see the
// old state or the restored one, never a mix (e.g. a table the restored state lacks, resolved
// through a stale catalog cache), and once a reader has seen the restored state it never sees
// the old one again. No request fails with a server error meanwhile.
func TestSnapshotRestoreIsAtomicForClients(t *testing.T) {
	s := startOpsServer(t, t.TempDir(), nil)
	ac := s.adminClient()
	svc := s.tables(t, devAccount, devKey)
	if _, err := svc.CreateTable(ctx, "base", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.NewClient("base").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","State":"old"}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.SaveSnapshot(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	const rounds = 5
	for round := range rounds {
		// The "new" state: a changed entity and a table the snapshot lacks.
		if _, err := svc.NewClient("base").UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","State":"new"}`), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CreateTable(ctx, "added", nil); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, err := svc.NewClient("added").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
			t.Fatal(err)
		}
		var (
			stop     atomic.Bool
			wg       sync.WaitGroup
			failures = make(chan string, 100)
		)
		fail := func(msg string) {
			select {
			case failures <- msg:
			default: // enough reported
			}
		}
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sawOld := false
				for !stop.Load() {
					// One request each: the entity of "added" exists exactly in the new state;
					// its table missing means the old state; a missing entity in an existing
					// table is neither.
					_, err := svc.NewClient("added").GetEntity(ctx, "p", "r", nil)
					var re *azcore.ResponseError
					switch {
					case err == nil:
						if sawOld {
							fail("new state seen after the restored one")
						}
					case errors.As(err, &re) && re.ErrorCode == "TableNotFound":
						sawOld = true
					case errors.As(err, &re):
						fail(fmt.Sprintf("mixed state: %d %s", re.StatusCode, re.ErrorCode))
					default:
						fail(err.Error())
					}
					got, err := svc.NewClient("base").GetEntity(ctx, "p", "r", nil)
					switch {
					case err != nil:
						fail("base entity: " + err.Error())
					case strings.Contains(string(got.Value), `"State":"new"`):
						if sawOld {
							fail("old base entity after the restore")
						}
					}
				}
			}()
		}
		time.Sleep(20 * time.Millisecond)
		if _, err := ac.RestoreSnapshot(ctx, "old"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		close(failures)
		for f := range failures {
			t.Fatalf("round %d: %s", round, f)
		}
	}
}

// TestRestoreWithColumnCache: a restore while the column cache holds a table (its base pins
// an engine snapshot) neither hangs nor serves the old columns afterwards.
func TestRestoreWithColumnCache(t *testing.T) {
	s := startOpsServer(t, t.TempDir(), func(c *config.Config) { c.ColumnCacheBytes = 8 << 20 })
	svc := s.tables(t, devAccount, devKey)
	if _, err := svc.CreateTable(ctx, "cols", nil); err != nil {
		t.Fatal(err)
	}
	tc := svc.NewClient("cols")
	insert := func(from, to int, v string) {
		for b := from; b < to; b += 100 {
			var actions []aztables.TransactionAction
			for i := b; i < min(b+100, to); i++ {
				actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace,
					Entity: []byte(fmt.Sprintf(`{"PartitionKey":"p","RowKey":"%05d","V":"%s"}`, i, v))})
			}
			if _, err := tc.SubmitTransaction(ctx, actions, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(filter string) (int, string) {
		n, plan := 0, ""
		pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n += len(page.Entities)
		}
		// The plan header is on the raw response; ask once more, raw.
		status, h, _ := (&testServer{endpoint: s.base + "/" + devAccount}).do(t, "GET", "/cols()?$filter="+strings.ReplaceAll(filter, " ", "%20"), nil, "")
		if status == 200 {
			plan = h.Get("x-tablo-query-plan")
		}
		return n, plan
	}
	insert(0, 500, "old")
	cached := false
	for range 200 {
		if _, plan := count("V eq 'old'"); strings.Contains(plan, "+columns") {
			cached = true
			break
		}
	}
	if !cached {
		t.Fatal("the column cache never served the filter")
	}
	ac := s.adminClient()
	if _, err := ac.SaveSnapshot(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	insert(0, 500, "new")
	if n, _ := count("V eq 'new'"); n != 500 {
		t.Fatalf("%d new before restore", n)
	}
	done := make(chan error, 1)
	go func() { _, err := ac.RestoreSnapshot(ctx, "old"); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("restore hung")
	}
	if n, _ := count("V eq 'new'"); n != 0 {
		t.Fatalf("%d new entities after restoring the old state", n)
	}
	if n, _ := count("V eq 'old'"); n != 500 {
		t.Fatalf("%d old entities after restore", n)
	}
}

// TestSnapshotRestoreQueues: a restore brings queues and messages back as saved, through the
// azqueue SDK; the Queue service's caches (catalog, visibility hints) follow, and its requests
// are in the metrics under service="queue".
func TestSnapshotRestoreQueues(t *testing.T) {
	s := startOpsServer(t, t.TempDir(), nil)
	ts := &testServer{app: s.app, endpoint: s.base + "/" + devAccount}
	qs := ts.queueService(t)
	q := qs.NewQueueClient("keep")
	if _, err := q.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := q.EnqueueMessage(ctx, "old", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.adminClient().SaveSnapshot(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	// Take the old message (its visibility moves on), add one, add a queue.
	if _, err := q.DequeueMessage(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := q.EnqueueMessage(ctx, "new", nil); err != nil {
		t.Fatal(err)
	}
	later := qs.NewQueueClient("later")
	if _, err := later.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.adminClient().RestoreSnapshot(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	got, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: ptr(int32(32))})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || *got.Messages[0].MessageText != "old" {
		var texts []string
		for _, m := range got.Messages {
			texts = append(texts, *m.MessageText)
		}
		t.Fatalf("after restore: %q, want [old]", texts)
	}
	if _, err := later.GetProperties(ctx, nil); err == nil {
		t.Fatal("a queue created after the snapshot survived its restore")
	}
	_, m := httpGet(t, s.admin+"/metrics")
	if !strings.Contains(m, `tablo_requests_total{operation="PutMessage",service="queue",status_class="2xx"} 2`) {
		t.Errorf("queue metrics:\n%s", grepLines(m, `service="queue"`))
	}
}
