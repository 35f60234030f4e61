package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/internal/app"
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
)

// multiServer is a Tablo configured with several accounts.
type multiServer struct {
	app  *app.App
	base string // http://127.0.0.1:port
}

// startServerWithAccounts starts Tablo (in memory) with the accounts of an --accounts value,
// parsed by the real configuration loader.
func startServerWithAccounts(t testing.TB, accounts string) *multiServer {
	t.Helper()
	var stderr strings.Builder
	cfg, err := config.Load(freePorts("--accounts", accounts, "--in-memory"),
		func(string) string { return "" }, &stderr)
	if err != nil {
		t.Fatalf("config: %v %s", err, stderr.String())
	}
	log, _ := serverLogger(t)
	a, err := app.Start(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return &multiServer{app: a, base: "http://" + a.Addr().String()}
}

func (m *multiServer) service(t testing.TB, account, key string) *aztables.ServiceClient {
	t.Helper()
	cs := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s/%s;", account, key, m.base, account)
	c, err := aztables.NewServiceClientFromConnectionString(cs, clientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func randomKey(t testing.TB) string {
	b := make([]byte, 64)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func listTableNames(t testing.TB, svc *aztables.ServiceClient) []string {
	t.Helper()
	var names []string
	pager := svc.NewListTablesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range page.Tables {
			names = append(names, *tp.Name)
		}
	}
	return names
}

func TestSeveralAccounts(t *testing.T) {
	k1, k2, k3 := randomKey(t), randomKey(t), randomKey(t)
	m := startServerWithAccounts(t, fmt.Sprintf("acct1:%s:%s,acct2:%s", k1, k2, k3))
	a1k1, a1k2, a2 := m.service(t, "acct1", k1), m.service(t, "acct1", k2), m.service(t, "acct2", k3)

	// Same table name in both accounts: separate tables.
	for _, svc := range []*aztables.ServiceClient{a1k1, a2} {
		if _, err := svc.CreateTable(ctx, "shared", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a1k1.CreateTable(ctx, "onlyone", nil); err != nil {
		t.Fatal(err)
	}
	// Either key of acct1 works.
	if _, err := a1k2.NewClient("shared").AddEntity(ctx, acEntity("p", "r", 1), nil); err != nil {
		t.Fatalf("acct1 with its second key: %v", err)
	}
	if _, err := a1k1.NewClient("shared").GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("acct1 key1 reads what key2 wrote: %v", err)
	}
	_, err := a2.NewClient("shared").GetEntity(ctx, "p", "r", nil)
	wantAzErr(t, "acct2 sees acct1's entity", err, 404, "ResourceNotFound")
	if got := strings.Join(listTableNames(t, a1k2), ","); got != "onlyone,shared" {
		t.Fatalf("acct1 tables: %s", got)
	}
	if got := strings.Join(listTableNames(t, a2), ","); got != "shared" {
		t.Fatalf("acct2 tables: %s", got)
	}

	// Keys are per account; the development account is not configured.
	_, err = m.service(t, "acct2", k1).NewListTablesPager(nil).NextPage(ctx)
	wantAzErr(t, "acct2 with acct1's key", err, 403, "AuthenticationFailed")
	_, err = m.service(t, devAccount, devKey).NewListTablesPager(nil).NextPage(ctx)
	wantAzErr(t, "unconfigured dev account", err, 403, "AuthenticationFailed")

	// SAS: signed with either key of the account, never with another account's key.
	sign := func(account, key string) string {
		cred, err := aztables.NewSharedKeyCredential(account, key)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := aztables.SASSignatureValues{TableName: "shared", Permissions: "r", ExpiryTime: time.Now().Add(time.Hour)}.Sign(cred)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	for _, key := range []string{k1, k2} {
		c := sasTableClient(t, m.base+"/acct1", "shared", sign("acct1", key), nil)
		if _, err := c.GetEntity(ctx, "p", "r", nil); err != nil {
			t.Fatalf("acct1 SAS: %v", err)
		}
	}
	_, err = sasTableClient(t, m.base+"/acct1", "shared", sign("acct1", k3), nil).GetEntity(ctx, "p", "r", nil)
	wantAzErr(t, "acct1 SAS signed with acct2's key", err, 403, "AuthenticationFailed")
	_, err = sasTableClient(t, m.base+"/acct2", "shared", sign("acct1", k1), nil).GetEntity(ctx, "p", "r", nil)
	wantAzErr(t, "acct1's SAS used on acct2", err, 403, "AuthenticationFailed")
	cred2, _ := aztables.NewSharedKeyCredential("acct1", k2)
	qp, err := aztables.AccountSASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, Services: "t", ResourceTypes: "c",
		Permissions: "l", ExpiryTime: time.Now().Add(time.Hour)}.Sign(cred2)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(listTableNames(t, sasServiceClient(t, m.base+"/acct1", qp.Encode(), nil)), ","); got != "onlyone,shared" {
		t.Fatalf("acct1 account SAS (key2): %s", got)
	}

	// Service properties are per account.
	if _, err := a1k1.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{sdkCorsRule()}}, nil); err != nil {
		t.Fatal(err)
	}
	p1, err := a1k2.GetProperties(ctx, nil)
	if err != nil || len(p1.Cors) != 1 {
		t.Fatalf("acct1 properties: %v %+v", err, p1)
	}
	p2, err := a2.GetProperties(ctx, nil)
	if err != nil || len(p2.Cors) != 0 {
		t.Fatalf("acct2 properties: %v %+v", err, p2)
	}
}

// sharedKeyRequest sends a request signed with scheme and key as the SDKs sign it: Python
// (Shared Key) sends x-ms-date and Date, Go and JS (Shared Key Lite) only x-ms-date.
func sharedKeyRequest(t testing.TB, ts *testServer, scheme auth.Scheme, key []byte, method, pathAndQuery, contentType, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.endpoint+pathAndQuery, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	if scheme == auth.SchemeSharedKey {
		req.Header.Set("Date", date)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != nil {
		info := auth.RequestInfo{Method: method, RawPath: req.URL.EscapedPath(), RawQuery: req.URL.RawQuery,
			Header: req.Header, Account: devAccount, PathStyle: true}
		req.Header.Set("Authorization", auth.SignSharedKey(scheme, info, key))
	}
	return send(t, req)
}

func TestSharedKeySchemes(t *testing.T) {
	ts := startServer(t)
	key := auth.DevAccount().Keys[0]
	wrong, _ := base64.StdEncoding.DecodeString(randomKey(t))
	tests := []struct {
		name         string
		scheme       auth.Scheme
		key          []byte
		method, path string
		contentType  string
		body         string
		status       int
		code         string
	}{
		{"SharedKey create table", auth.SchemeSharedKey, key, "POST", "/Tables", "application/json;odata=nometadata", `{"TableName":"skpython"}`, 201, ""},
		{"SharedKey insert", auth.SchemeSharedKey, key, "POST", "/skpython", "application/json", `{"PartitionKey":"p 1","RowKey":"it's"}`, 201, ""},
		{"SharedKey get with encoded keys", auth.SchemeSharedKey, key, "GET", "/skpython(PartitionKey='p%201',RowKey='it%27%27s')", "", "", 200, ""},
		{"SharedKey acl", auth.SchemeSharedKey, key, "GET", "/skpython?comp=acl", "", "", 200, ""},
		{"SharedKey service properties (Python path)", auth.SchemeSharedKey, key, "GET", "/?restype=service&comp=properties", "", "", 200, ""},
		{"SharedKeyLite list", auth.SchemeSharedKeyLite, key, "GET", "/Tables", "", "", 200, ""},
		{"SharedKeyLite service properties (Go path)", auth.SchemeSharedKeyLite, key, "GET", "?comp=properties&restype=service", "", "", 200, ""},
		{"SharedKeyLite merge", auth.SchemeSharedKeyLite, key, "MERGE", "/skpython(PartitionKey='p%201',RowKey='it%27%27s')", "application/json", `{"X":1}`, 204, ""},
		{"SharedKey wrong key", auth.SchemeSharedKey, wrong, "GET", "/Tables", "", "", 403, "AuthenticationFailed"},
		{"SharedKeyLite wrong key", auth.SchemeSharedKeyLite, wrong, "GET", "/Tables", "", "", 403, "AuthenticationFailed"},
		{"SharedKey wrong key on XML endpoint", auth.SchemeSharedKey, wrong, "GET", "/skpython?comp=acl", "", "", 403, "AuthenticationFailed"},
		{"no credentials", auth.SchemeSharedKey, nil, "GET", "/Tables", "", "", 403, "AuthenticationFailed"},
		{"no credentials insert", auth.SchemeSharedKey, nil, "POST", "/skpython", "application/json", `{"PartitionKey":"x","RowKey":"y"}`, 403, "AuthenticationFailed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := sharedKeyRequest(t, ts, tt.scheme, tt.key, tt.method, tt.path, tt.contentType, tt.body)
			if status != tt.status || h.Get("x-ms-error-code") != tt.code {
				t.Fatalf("got %d %q, want %d %q: %s", status, h.Get("x-ms-error-code"), tt.status, tt.code, body)
			}
			if tt.code != "" && !strings.Contains(body, tt.code) {
				t.Fatalf("body lacks the code: %s", body)
			}
		})
	}
	// The entity written through a path-with-spaces insert is really there for the SDK.
	if _, err := ts.service(t).NewClient("skpython").GetEntity(ctx, "p 1", "it's", nil); err != nil {
		t.Fatal(err)
	}
}
