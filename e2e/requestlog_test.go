package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/internal/app"
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/logging"
)

// syncBuffer is a log destination safe for concurrent handlers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records returns the JSON log records with the given msg.
func (b *syncBuffer) records(t *testing.T, msg string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(b.buf.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// TestRequestLogLine: one line per request at info with the fields an operator filters on,
// an authentication failure's reason, at debug the string-to-sign, and never a key.
func TestRequestLogLine(t *testing.T) {
	var logs syncBuffer
	cfg := config.Config{Host: "127.0.0.1", InMemory: true, Accounts: []auth.Account{auth.DevAccount()}}
	a, err := app.Start(context.Background(), cfg, logging.New(&logs, logging.JSON, slogDebug))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	endpoint := "http://" + a.Addr().String() + "/" + devAccount
	ts := &testServer{app: a, endpoint: endpoint}
	ctx := context.Background()
	if _, err := ts.service(t).CreateTable(ctx, "logged", nil); err != nil {
		t.Fatal(err)
	}
	client := ts.service(t).NewClient("logged")
	if _, err := client.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","V":1}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.GetEntity(ctx, "p", "missing", nil); err == nil {
		t.Fatal("want 404")
	}
	// A wrong key: signed correctly, with another key.
	const wrongKey = "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ=="
	cred, err := aztables.NewSharedKeyCredential(devAccount, wrongKey)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := aztables.NewClientWithSharedKey(endpoint+"/logged", cred, clientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.GetEntity(ctx, "p", "r", nil); err == nil {
		t.Fatal("want 403")
	}
	time.Sleep(50 * time.Millisecond) // the last line is written after the response

	byOp := map[string]map[string]any{}
	for _, r := range logs.records(t, "request") {
		key := r["operation"].(string)
		if r["status"].(float64) >= 400 {
			key += "/" + r["error_code"].(string)
		}
		byOp[key] = r
	}
	ins := byOp["InsertEntity"]
	if ins == nil {
		t.Fatalf("no InsertEntity line in %v", byOp)
	}
	for k, want := range map[string]any{"service": "table", "account": devAccount, "resource": "logged", "status": 201.0, "error_code": "", "level": "INFO"} {
		if ins[k] != want {
			t.Errorf("InsertEntity %s = %v, want %v", k, ins[k], want)
		}
	}
	for _, k := range []string{"duration_ms", "bytes_in", "bytes_out", "client", "user_agent", "request_id"} {
		if _, ok := ins[k]; !ok {
			t.Errorf("InsertEntity line lacks %s: %v", k, ins)
		}
	}
	if ins["bytes_in"].(float64) == 0 || !strings.Contains(ins["user_agent"].(string), "azsdk-go") {
		t.Errorf("bytes_in or user_agent wrong: %v", ins)
	}
	if miss := byOp["GetEntity/ResourceNotFound"]; miss == nil || miss["resource"] != "logged(p,missing)" || miss["status"] != 404.0 {
		t.Errorf("GetEntity 404 line: %v", miss)
	}
	denied := byOp["GetEntity/AuthenticationFailed"]
	if denied == nil || denied["auth_failure"] != "signature mismatch" {
		t.Errorf("authentication failure line lacks its reason: %v", denied)
	}
	sts := logs.records(t, "authentication failed")
	if len(sts) != 1 || !strings.Contains(sts[0]["string_to_sign"].(string), "/devstoreaccount1/devstoreaccount1/logged(PartitionKey='p',RowKey='r')") || sts[0]["level"] != "DEBUG" {
		t.Errorf("debug string-to-sign: %v", sts)
	}
	logs.mu.Lock()
	all := logs.buf.String()
	logs.mu.Unlock()
	if strings.Contains(all, wrongKey) || strings.Contains(all, devKey) {
		t.Error("a key was logged")
	}
}

const slogDebug = slog.LevelDebug
