package e2e

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
)

// TestHostStyleURLs addresses the account by the Host header's first label, as production
// endpoints (account.table.core.windows.net) and devstoreaccount1.table.localhost do.
func TestHostStyleURLs(t *testing.T) {
	ts := startServer(t)
	addr := strings.TrimPrefix(strings.TrimSuffix(ts.endpoint, "/"+devAccount), "http://")
	_, port, _ := net.SplitHostPort(addr)
	host := devAccount + ".table.localhost:" + port
	send := func(method, path, body string) (int, string) {
		req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("Content-Type", "application/json")
		info := auth.RequestInfo{Method: method, RawPath: req.URL.EscapedPath(), RawQuery: req.URL.RawQuery, Header: req.Header, Account: devAccount}
		req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKeyLite, info, auth.DevAccount().Keys[0]))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := send("POST", "/Tables", `{"TableName":"hoststyle"}`); status != 201 || !strings.Contains(body, `"odata.metadata":"http://`+host+`/$metadata#Tables/@Element"`) {
		t.Fatalf("create: %d %s", status, body)
	}
	if status, body := send("POST", "/hoststyle", `{"PartitionKey":"p","RowKey":"r"}`); status != 201 {
		t.Fatalf("insert: %d %s", status, body)
	}
	// The same table is visible through the path-style endpoint of the same account.
	if status, _, body := ts.do(t, "GET", "/hoststyle(PartitionKey='p',RowKey='r')", nil, ""); status != 200 {
		t.Fatalf("path-style read: %d %s", status, body)
	}
}
