package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

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

// TestRequestLogBlob: the Blob service writes the same request line, and a streamed body
// is counted by its length without being buffered for the log.
func TestRequestLogBlob(t *testing.T) {
	var logs syncBuffer
	cfg := config.Config{Host: "127.0.0.1", InMemory: true, Services: []string{"blob"}, Accounts: []auth.Account{auth.DevAccount()}}
	a, err := app.Start(context.Background(), cfg, logging.New(&logs, logging.JSON, slog.LevelInfo))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	ts := &testServer{app: a}
	c := blobClient(t, ts)
	ctx := context.Background()
	if _, err := c.CreateContainer(ctx, "logged", nil); err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20 // above the 8 KiB the streaming server reads ahead
	if _, err := c.UploadStream(ctx, "logged", "dir/b", bytes.NewReader(randomBytes(size, 1)), &azblob.UploadStreamOptions{BlockSize: size}); err != nil {
		t.Fatal(err)
	}
	resp, err := c.DownloadStream(ctx, "logged", "dir/b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != size {
		t.Fatalf("download: %d bytes, %v", n, err)
	}
	_ = resp.Body.Close()
	time.Sleep(50 * time.Millisecond) // the last line is written after the response

	var put, get map[string]any
	for _, r := range logs.records(t, "request") {
		switch {
		case r["operation"] == "WriteBlob" && r["bytes_in"] == float64(size):
			put = r
		case r["operation"] == "ReadBlob" && r["status"] == 200.0:
			get = r
		}
	}
	if put == nil || put["service"] != "blob" || put["resource"] != "logged/dir/b" || put["account"] != devAccount {
		t.Errorf("no Put Blob line with the body's size: %v", logs.records(t, "request"))
	}
	if get == nil || get["bytes_out"] != float64(size) || get["resource"] != "logged/dir/b" {
		t.Errorf("Get Blob line: %v", get)
	}
}
