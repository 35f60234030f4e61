package e2e

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/internal/auth"
)

// secondaryService is a client of the account's secondary endpoint, path style, as the SDKs
// build it from a connection string.
func (ts *testServer) secondaryService(t testing.TB) *aztables.ServiceClient {
	t.Helper()
	cs := strings.Replace(ts.connString(), "/"+devAccount+";", "/"+devAccount+"-secondary;", 1)
	sec, err := aztables.NewServiceClientFromConnectionString(cs, clientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

// sendSharedKey sends a request signed with Shared Key the way the Python SDK signs: the
// canonical resource is "/" + account + the path exactly as sent (+ ?comp=).
func sendSharedKey(t testing.TB, method, url, host string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	info := auth.RequestInfo{Method: method, RawPath: req.URL.EscapedPath(), RawQuery: req.URL.RawQuery, Header: req.Header, Account: devAccount}
	req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKey, info, auth.DevAccount().Keys[0]))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestServiceStatsSecondaryForms: the stats document through every form of the secondary
// endpoint that SDKs and tools use.
func TestServiceStatsSecondaryForms(t *testing.T) {
	ts := startServer(t)
	addr := strings.TrimPrefix(strings.TrimSuffix(ts.endpoint, "/"+devAccount), "http://")
	_, port, _ := net.SplitHostPort(addr)
	forms := []struct{ name, url, host string }{
		// Python SDK and az CLI: the account repeated after the secondary segment.
		{"path style, account repeated", "http://" + addr + "/" + devAccount + "-secondary/" + devAccount + "/?restype=service&comp=stats", ""},
		{"path style", "http://" + addr + "/" + devAccount + "-secondary/?restype=service&comp=stats", ""},
		{"host style", "http://" + addr + "/?restype=service&comp=stats", devAccount + "-secondary.table.localhost:" + port},
	}
	for _, f := range forms {
		status, h, body := sendSharedKey(t, http.MethodGet, f.url, f.host)
		if status != 200 || !strings.Contains(body, "<GeoReplication><Status>live</Status><LastSyncTime>") || !strings.HasPrefix(h.Get("Content-Type"), "application/xml") {
			t.Errorf("%s: %d %s", f.name, status, body)
		}
	}
	// The primary has no stats (Azure: only the secondary answers them).
	status, h, _ := sendSharedKey(t, http.MethodGet, "http://"+addr+"/"+devAccount+"/?restype=service&comp=stats", "")
	if status != 400 || h.Get("x-ms-error-code") != "InvalidQueryParameterValue" {
		t.Errorf("stats on the primary: %d %s", status, h.Get("x-ms-error-code"))
	}
}

// TestSecondaryIsReadOnly: every read works through the secondary account name; every write
// is refused with 403, as Azure refuses writes to the read-only secondary, and changes nothing.
func TestSecondaryIsReadOnly(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	mustAdd(t, tc, "p", "r", 1)
	before := ts.tableSnapshot(t, name)

	sec := ts.secondaryService(t)
	stc := sec.NewClient(name)

	// Reads.
	if n := len(listTableNames(t, sec)); n != 1 {
		t.Errorf("list tables through the secondary: %d tables", n)
	}
	if _, err := stc.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Errorf("get entity: %v", err)
	}
	if n := countFilter(t, stc, "PartitionKey eq 'p'"); n != 1 {
		t.Errorf("query through the secondary: %d entities", n)
	}
	if _, err := stc.GetAccessPolicy(ctx, nil); err != nil {
		t.Errorf("get ACL: %v", err)
	}
	if _, err := sec.GetProperties(ctx, nil); err != nil {
		t.Errorf("get service properties: %v", err)
	}

	// Writes.
	entity := mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 2})
	newEntity := mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "new"})
	writes := map[string]func() error{
		"create table": func() error { _, err := sec.CreateTable(ctx, "fromsecondary", nil); return err },
		"delete table": func() error { _, err := sec.DeleteTable(ctx, name, nil); return err },
		"insert":       func() error { _, err := stc.AddEntity(ctx, newEntity, nil); return err },
		"upsert": func() error {
			_, err := stc.UpsertEntity(ctx, entity, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
			return err
		},
		"update": func() error {
			_, err := stc.UpdateEntity(ctx, entity, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: to.Ptr(azcore.ETagAny)})
			return err
		},
		"delete entity": func() error { _, err := stc.DeleteEntity(ctx, "p", "r", nil); return err },
		"batch": func() error {
			_, err := stc.SubmitTransaction(ctx, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: newEntity}}, nil)
			return err
		},
		"set ACL": func() error {
			_, err := stc.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{{ID: to.Ptr("id1"),
				AccessPolicy: &aztables.AccessPolicy{Permission: to.Ptr("r"), Start: to.Ptr(time.Now()), Expiry: to.Ptr(time.Now().Add(time.Hour))}}}})
			return err
		},
		"set service properties": func() error {
			_, err := sec.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{sdkCorsRule()}}, nil)
			return err
		},
	}
	for what, w := range writes {
		err := w()
		var re *azcore.ResponseError
		if what == "batch" {
			// aztables reports a refused transaction with the outer status only.
			if err == nil || !strings.Contains(err.Error(), "403") {
				t.Errorf("batch through the secondary: %v", err)
			}
			continue
		}
		if !asQueryResponseError(err, &re) || re.StatusCode != 403 || re.ErrorCode != "InsufficientAccountPermissions" {
			t.Errorf("%s through the secondary: want 403 InsufficientAccountPermissions, got %v", what, err)
		}
	}
	if after := ts.tableSnapshot(t, name); after != before {
		t.Errorf("writes through the secondary changed the table:\n%s\nwas\n%s", after, before)
	}
	if n := len(listTableNames(t, ts.service(t))); n != 1 {
		t.Errorf("%d tables after refused creates", n)
	}
	props, err := ts.service(t).GetProperties(ctx, nil)
	if err != nil || len(props.Cors) != 0 {
		t.Errorf("service properties changed: %v %+v", err, props)
	}
	acl, err := tc.GetAccessPolicy(ctx, nil)
	if err != nil || len(acl.SignedIdentifiers) != 0 {
		raw, _ := json.Marshal(acl)
		t.Errorf("ACL changed: %v %s", err, raw)
	}
}
