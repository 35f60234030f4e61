package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/server"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/table"
)

// panicStore is the real engine, except that a point read of a key containing "panic!"
// panics: a fault the server must contain.
type panicStore struct{ *pebblestore.DB }

func (p panicStore) Get(ctx context.Context, key []byte) ([]byte, error) {
	if bytes.Contains(key, []byte("panic!")) {
		panic("injected fault")
	}
	return p.DB.Get(ctx, key)
}

var _ store.Store = panicStore{}

// logRecorder keeps every log record with its attributes by key.
type logRecorder struct {
	mu      sync.Mutex
	records []loggedRecord
}

type loggedRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	rec := loggedRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, rec)
	return nil
}

// withAttr returns the records whose attribute key has value.
func (l *logRecorder) withAttr(key, value string) []loggedRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []loggedRecord
	for _, r := range l.records {
		if r.attrs[key] == value {
			out = append(out, r)
		}
	}
	return out
}

// TestPanicRecovered: a panic while serving a request is answered 500 InternalError in
// Azure's JSON error format (x-ms-error-code equal to the body's code, the request id in the
// message), is logged at Error level with the request id, and leaves the connection usable
// for the next request. Every request gets its log line with its status.
func TestPanicRecovered(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	logs := &logRecorder{}
	svc := table.New(panicStore{db}, table.Options{})
	addr := startHTTP(t, server.New(server.Options{Service: svc, Accounts: []auth.Account{auth.DevAccount()}, Logger: slog.New(logs)}))
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	do := func(method, path, body string) (*http.Response, string, bool) {
		t.Helper()
		req := signed(method, path, body, nil)
		req.RequestURI = ""
		req.URL.Host = addr
		reused := false
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
		}))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b), reused
	}
	if resp, body, _ := do("POST", "/devstoreaccount1/Tables", `{"TableName":"boom"}`); resp.StatusCode != 201 {
		t.Fatalf("create table: %d %s", resp.StatusCode, body)
	}

	resp, body, _ := do("GET", "/devstoreaccount1/boom(PartitionKey='panic!',RowKey='r')", "")
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	id := resp.Header.Get("x-ms-request-id")
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("panic answer is not Azure's JSON error: %v: %q", err, body)
	}
	if resp.StatusCode != 500 || resp.Header.Get("x-ms-error-code") != "InternalError" || e.Error.Code != "InternalError" ||
		id == "" || !strings.Contains(e.Error.Message.Value, "RequestId:"+id) ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("panic answer: %d %q %q %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), resp.Header.Get("Content-Type"), body)
	}

	// The same connection serves the next request.
	resp, body, reused := do("GET", "/devstoreaccount1/boom(PartitionKey='p',RowKey='r')", "")
	if resp.StatusCode != 404 || resp.Header.Get("x-ms-error-code") != "ResourceNotFound" || !reused {
		t.Fatalf("after the panic: %d %s, connection reused %v", resp.StatusCode, body, reused)
	}
	next := resp.Header.Get("x-ms-request-id")

	// Logs: the panic at Error level with its request id, and one request line per request
	// carrying its status (the panicked one at Error level).
	var panicked, line500, line404 bool
	for _, r := range logs.withAttr("request_id", id) {
		switch {
		case r.level == slog.LevelError && strings.Contains(r.attrs["panic"], "injected fault"):
			panicked = true
		case r.attrs["status"] == "500" && r.attrs["operation"] == "GetEntity" && r.level >= slog.LevelError:
			line500 = true
		}
	}
	for _, r := range logs.withAttr("request_id", next) {
		if r.attrs["status"] == "404" && r.attrs["operation"] == "GetEntity" && r.level < slog.LevelError {
			line404 = true
		}
	}
	if !panicked || !line500 || !line404 {
		t.Fatalf("logs: panic logged %v, request line 500 %v, request line 404 %v\n%+v", panicked, line500, line404, logs.records)
	}
}

// TestRequestLineNamesOperation: the request log line names the operation as Azure's
// logs do, an If-Match telling an update or merge from an upsert.
func TestRequestLineNamesOperation(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	svc := table.New(db, table.Options{})
	t.Cleanup(func() {
		svc.Close()
		db.Close()
	})
	logs := &logRecorder{}
	ts := &testServer{t: t, h: server.New(server.Options{Service: svc, Accounts: []auth.Account{auth.DevAccount()}, Logger: slog.New(logs)})}
	ts.createTable("ops")
	path := "/devstoreaccount1/ops(PartitionKey='p',RowKey='r')"
	ifMatch := map[string]string{"If-Match": "*"}
	for _, tc := range []struct {
		method string
		hdr    map[string]string
		op     string
	}{
		{"PUT", nil, "InsertOrReplace"},
		{"PUT", ifMatch, "UpdateEntity"},
		{"MERGE", nil, "InsertOrMerge"},
		{"MERGE", ifMatch, "MergeEntity"},
	} {
		rec := ts.ok(ts.do(tc.method, path, `{}`, tc.hdr), 204, tc.op)
		lines := logs.withAttr("request_id", rec.Header().Get("x-ms-request-id"))
		if len(lines) != 1 || lines[0].attrs["operation"] != tc.op {
			t.Errorf("%s with If-Match %v: request lines %+v, want operation %s", tc.method, tc.hdr != nil, lines, tc.op)
		}
	}
}
