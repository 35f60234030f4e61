// Package e2e drives a live Tablo on loopback through the official Azure SDK for Go.
package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
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
	"github.com/tablo/tablo/internal/store/postgres"
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
	errs     *errorWatch
}

// expectServerErrors declares that this test provokes server errors (a 5xx answer, a
// recovered panic): without it, any Error-level server log fails the test.
func (ts *testServer) expectServerErrors() { ts.errs.expect() }

// startServer starts Tablo on a temporary data directory (durable engine, as in production).
func startServer(t testing.TB) *testServer {
	t.Helper()
	return startServerAt(t, t.TempDir())
}

func startServerAt(t testing.TB, dir string) *testServer {
	t.Helper()
	cfg := config.Config{Host: "127.0.0.1", TablePort: 0, DataDir: dir, Accounts: []auth.Account{auth.DevAccount()}}
	cfg.PostgresURL = postgresFor(t, dir)
	return startServerConfig(t, cfg)
}

// startServerArgs starts Tablo on a temporary data directory with a configuration made by
// the real loader from command-line arguments (as `tablo` parses them). It stays on Pebble
// in the PostgreSQL pass: its callers test flags, some of them Pebble's.
// freePorts is args after flags that put every listener on a free port, so that a test
// server never meets another Tablo (or an emulator) on a default port; a later flag in args
// overrides its port.
func freePorts(args ...string) []string {
	return append([]string{"--table-port", "0", "--queue-port", "0", "--blob-port", "0", "--admin-port", "0"}, args...)
}

func startServerArgs(t testing.TB, args ...string) *testServer {
	t.Helper()
	var stderr strings.Builder
	base := freePorts("--host", "127.0.0.1", "--data-dir", t.TempDir())
	cfg, err := config.Load(append(base, args...), func(string) string { return "" }, &stderr)
	if err != nil {
		t.Fatalf("config %q: %v %s", args, err, stderr.String())
	}
	return startServerConfig(t, cfg)
}

func startServerConfig(t testing.TB, cfg config.Config) *testServer {
	t.Helper()
	log, errs := serverLogger(t)
	// On PostgreSQL every path is checked for a connection held while another is acquired
	// (the deadlock of a full pool); a report fails the test even if it expects errors.
	cfg.PostgresCheckNesting = cfg.PostgresURL != ""
	if n, err := strconv.Atoi(os.Getenv(poolEnv)); err == nil && cfg.PostgresURL != "" && cfg.PostgresPoolSize == 0 {
		cfg.PostgresPoolSize = n
	}
	a, err := app.Start(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{app: a, endpoint: "http://" + a.Addr().String() + "/" + devAccount, dataDir: cfg.DataDir, errs: errs}
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// serverLogger is the logger of an in-process server: its records go to t.Log (Warn and up,
// everything with TABLO_TEST_LOG set), and an Error-level record fails t when the test ends
// unless the test declared it expects errors. The server logs every 5xx answer, recovered
// panic and failed write at Error level, so no such thing passes unseen.
func serverLogger(t testing.TB) (*slog.Logger, *errorWatch) {
	level := slog.LevelWarn
	if os.Getenv("TABLO_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	w := &errorWatch{}
	t.Cleanup(func() { w.check(t) }) // registered first, so it runs after the server stopped
	return slog.New(&watchHandler{Handler: slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}), w: w}), w
}

// errorWatch collects a server's Error-level log records.
type errorWatch struct {
	mu       sync.Mutex
	expected bool
	records  []string
	nested   []string // the PostgreSQL engine's reports of a nested acquisition: never expected
}

func (w *errorWatch) expect() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expected = true
}

func (w *errorWatch) add(r slog.Record) {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "stack" {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	w.records = append(w.records, b.String())
	if r.Message == postgres.NestingMessage {
		w.nested = append(w.nested, b.String())
	}
}

func (w *errorWatch) check(t testing.TB) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.nested) > 0 {
		t.Errorf("%d nested connection acquisition(s) (the stack is in the server log); first: %s", len(w.nested), w.nested[0])
	}
	if len(w.records) > 0 && !w.expected {
		t.Errorf("the server logged %d unexpected error(s) (a test that provokes them must call expectServerErrors); first: %s", len(w.records), w.records[0])
	}
}

// watchHandler passes records on and shows Error-level ones to its errorWatch.
type watchHandler struct {
	slog.Handler
	w *errorWatch
}

func (h *watchHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.w.add(r)
	}
	return h.Handler.Handle(ctx, r)
}

func (h *watchHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &watchHandler{Handler: h.Handler.WithAttrs(as), w: h.w}
}

func (h *watchHandler) WithGroup(name string) slog.Handler {
	return &watchHandler{Handler: h.Handler.WithGroup(name), w: h.w}
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

// poolEnv, when set, is the connection pool size of every test server on PostgreSQL (1 makes
// any request that holds a connection while it asks for another deadlock, not just report).
const poolEnv = "TABLO_E2E_POSTGRES_POOL"

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

// recordingTB is a testing.TB whose failures and cleanups the harness's own test inspects.
type recordingTB struct {
	testing.TB
	failures []string
	cleanups []func()
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Log(...any)       {}
func (r *recordingTB) finish() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestHarnessFailsOnServerErrors: an Error-level server record fails the test unless the test
// declared it expects errors (the engine's report of a nested connection acquisition fails it
// even then); warnings never do.
func TestHarnessFailsOnServerErrors(t *testing.T) {
	for _, tt := range []struct {
		level    slog.Level
		msg      string
		expected bool
		fails    bool
	}{
		{slog.LevelError, "request", false, true},
		{slog.LevelError, "request", true, false},
		{slog.LevelWarn, "request", false, false},
		{slog.LevelError, postgres.NestingMessage, true, true},
	} {
		r := &recordingTB{TB: t}
		log, w := serverLogger(r)
		if tt.expected {
			(&testServer{errs: w}).expectServerErrors()
		}
		log.With("request_id", "x").Log(context.Background(), tt.level, tt.msg, "status", 500)
		r.finish()
		if got := len(r.failures) > 0; got != tt.fails {
			t.Errorf("level %v, %q, expected %v: failed %v (%q)", tt.level, tt.msg, tt.expected, got, r.failures)
		}
	}
}
