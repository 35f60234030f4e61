// Package e2e drives a live Tablo on loopback through the official Azure SDK for Go.
package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
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
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

const (
	devAccount = "devstoreaccount1"
	devKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// testServer is a Tablo started in-process on a free loopback port.
type testServer struct {
	app      *app.App
	endpoint string // http://127.0.0.1:port/devstoreaccount1
	dataDir  string
}

// startServer starts Tablo on a temporary data directory (durable engine, as in production).
func startServer(t testing.TB) *testServer {
	t.Helper()
	return startServerAt(t, t.TempDir())
}

func startServerAt(t testing.TB, dir string) *testServer {
	t.Helper()
	cfg := config.Config{Host: "127.0.0.1", TablePort: 0, DataDir: dir, Accounts: []auth.Account{auth.DevAccount()}}
	cfg.PostgresURL = postgresFor(t, dir)
	level := slog.LevelWarn
	if os.Getenv("TABLO_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
	a, err := app.Start(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{app: a, endpoint: "http://" + a.Addr().String() + "/" + devAccount, dataDir: dir}
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

func (ts *testServer) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.app.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
}

// engineEnv selects the engine of every server the tests start: unset (Pebble on a temporary
// data directory) or "postgres" (a private schema in TABLO_TEST_POSTGRES_URL per data
// directory, so that a restart on the same directory finds the same data).
const engineEnv = "TABLO_E2E_ENGINE"

var (
	pgSchemasMu sync.Mutex
	pgSchemas   = map[string]string{}
)

// postgresFor returns the PostgreSQL URL standing for data directory dir, or "" when the
// tests run on Pebble.
func postgresFor(t testing.TB, dir string) string {
	t.Helper()
	switch os.Getenv(engineEnv) {
	case "":
		return ""
	case "postgres":
	default:
		t.Fatalf("%s=%q: want postgres or nothing", engineEnv, os.Getenv(engineEnv))
	}
	pgSchemasMu.Lock()
	defer pgSchemasMu.Unlock()
	if u, ok := pgSchemas[dir]; ok {
		return u
	}
	u := pgtest.URL(t)
	pgSchemas[dir] = u
	return u
}

// onPostgres reports whether the tests run on the PostgreSQL engine.
func onPostgres() bool { return os.Getenv(engineEnv) == "postgres" }

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func clientOptions() *aztables.ClientOptions {
	return &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1},
	}}
}

func (ts *testServer) connString() string {
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;", devAccount, devKey, ts.endpoint)
}

func (ts *testServer) service(t testing.TB) *aztables.ServiceClient {
	t.Helper()
	c, err := aztables.NewServiceClientFromConnectionString(ts.connString(), clientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var tableSeq atomic.Int64

// newTable creates a fresh table and returns its client.
func (ts *testServer) newTable(t testing.TB) *aztables.Client {
	t.Helper()
	name := fmt.Sprintf("t%d%d", time.Now().UnixNano()%1e9, tableSeq.Add(1))
	svc := ts.service(t)
	if _, err := svc.CreateTable(context.Background(), name, nil); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	c := svc.NewClient(name)
	tableNamesMu.Lock()
	tableNames[c] = name
	tableNamesMu.Unlock()
	return c
}

// do sends a raw request signed with Shared Key Lite (as the Go and JS SDKs sign) and returns
// status, headers and body.
func (ts *testServer) do(t testing.TB, method, pathAndQuery string, header map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.endpoint+pathAndQuery, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if _, ok := header["Authorization"]; !ok {
		signLite(req)
	}
	return send(t, req)
}

// send performs req and returns status, headers and body.
func send(t testing.TB, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func signLite(req *http.Request) {
	raw := req.URL.EscapedPath()
	if req.URL.Opaque != "" {
		raw = req.URL.Opaque
	}
	acct := auth.DevAccount()
	info := auth.RequestInfo{Method: req.Method, RawPath: raw, RawQuery: req.URL.RawQuery, Header: req.Header, Account: devAccount, PathStyle: true}
	req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKeyLite, info, acct.Keys[0]))
}

var ctx = context.Background()
