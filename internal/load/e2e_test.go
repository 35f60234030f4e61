package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// startNull runs a null server on a loopback port for the test's lifetime and returns its
// connection string.
func startNull(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NullServer(ctx, ln, NullConfig{EntitySize: 32, Pages: 2, ScanSize: 5}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("null server: %v", err)
		}
	})
	return "AccountName=devstoreaccount1;AccountKey=" + devKey + ";TableEndpoint=http://" + ln.Addr().String() + "/devstoreaccount1"
}

func runMain(t *testing.T, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = Main(ctx, args, &out, &errOut)
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return out.String(), err
}

func decodeLines(t *testing.T, s string) (results []Result, ratios []Ratio) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var kind struct{ Kind string }
		if err := json.Unmarshal(sc.Bytes(), &kind); err != nil {
			t.Fatalf("bad JSON line %q: %v", sc.Text(), err)
		}
		switch kind.Kind {
		case "result":
			var r Result
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			results = append(results, r)
		case "ratio":
			var r Ratio
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			ratios = append(ratios, r)
		default:
			t.Fatalf("unknown kind in %q", sc.Text())
		}
	}
	return results, ratios
}

// TestEndToEndAllWorkloadsAgainstNull runs every workload through the SDK against the null
// server: each must complete its operations without an error.
func TestEndToEndAllWorkloadsAgainstNull(t *testing.T) {
	conn := startNull(t)
	out, err := runMain(t, "--conn", conn, "--label", "null", "--ops", "12", "--duration", "1m",
		"--concurrency", "3", "--preload", "250", "--entity-size", "40", "--json", "-")
	if err != nil {
		t.Fatal(err)
	}
	results, ratios := decodeLines(t, out)
	if len(results) != len(workloads()) || len(ratios) != 0 {
		t.Fatalf("got %d results and %d ratios, want %d and 0:\n%s", len(results), len(ratios), len(workloads()), out)
	}
	for _, r := range results {
		if r.Ops != 12 || r.Errors != 0 || r.FailedToRun != "" || r.Target != "null" || r.Concurrency != 3 {
			t.Errorf("%s: ops %d errors %d failed %q first error %q", r.Workload, r.Ops, r.Errors, r.FailedToRun, r.FirstError)
		}
		if r.Entities < r.Ops && r.Workload != "page-partition" {
			t.Errorf("%s: %d entities for %d ops", r.Workload, r.Entities, r.Ops)
		}
		if r.P50Ms <= 0 || r.P99Ms < r.P50Ms {
			t.Errorf("%s: p50 %v p99 %v", r.Workload, r.P50Ms, r.P99Ms)
		}
	}
}

// TestEndToEndCompare runs two workloads against two null servers with --compare and server CPU
// accounting (this process stands in for the server pid).
func TestEndToEndCompare(t *testing.T) {
	a, b := startNull(t), startNull(t)
	out, err := runMain(t, "--conn", a, "--label", "one", "--compare", b, "--compare-label", "two",
		"--pid", "1", "--compare-pid", "1", "--workloads", "insert-one-pk,batch-insert",
		"--ops", "5", "--rounds", "2", "--concurrency", "2")
	if err != nil {
		// pid 1 may be unreadable in some sandboxes; the run itself must still have worked.
		if !strings.Contains(err.Error(), "server cpu") {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"insert-one-pk", "batch-insert", "one", "two", "ratios one/two"} {
		if !strings.Contains(out, want) {
			t.Errorf("table output lacks %q:\n%s", want, out)
		}
	}
}

// TestEndToEndNamedTable loads a kept table once (--preload-only), refuses to load it twice,
// then measures it without loading (--skip-preload).
func TestEndToEndNamedTable(t *testing.T) {
	conn := startNull(t)
	load := []string{"--conn", conn, "--label", "null", "--table", "Scale250", "--single-partition",
		"--preload", "250", "--entity-size", "40", "--unique-data", "--concurrency", "3", "--json", "-"}
	out, err := runMain(t, append(load, "--preload-only")...)
	if err != nil {
		t.Fatal(err)
	}
	results, _ := decodeLines(t, out)
	if len(results) != 1 {
		t.Fatalf("preload-only: %d results, want 1:\n%s", len(results), out)
	}
	if r := results[0]; r.Workload != "preload" || r.Ops != 3 || r.Entities != 250 || r.Errors != 0 || r.Concurrency != 3 {
		t.Errorf("preload result: %+v", r)
	}
	if _, err := runMain(t, append(load, "--preload-only")...); err == nil || !strings.Contains(err.Error(), "TableAlreadyExists") {
		t.Errorf("second load of a kept table: error %v, want TableAlreadyExists", err)
	}
	out, err = runMain(t, append(load, "--skip-preload", "--workloads", "page-partition,filter-scan,get", "--ops", "6")...)
	if err != nil {
		t.Fatal(err)
	}
	results, _ = decodeLines(t, out)
	if len(results) != 3 {
		t.Fatalf("skip-preload: %d results, want 3:\n%s", len(results), out)
	}
	for _, r := range results {
		if r.Ops != 6 || r.Errors != 0 || r.FailedToRun != "" || r.Preload != 250 {
			t.Errorf("%s: %+v", r.Workload, r)
		}
	}
}

func TestNullServerTableLifecycle(t *testing.T) {
	h := NewNullHandler(NullConfig{})
	steps := []struct {
		method, path, body string
		hdr                map[string]string
		want               int
	}{
		{"POST", "/acct/Tables", `{"TableName":"t1"}`, nil, 201},
		{"POST", "/acct/Tables", `{"TableName":"T1"}`, nil, 409},
		{"POST", "/acct/Tables", `{"TableName":"t2"}`, map[string]string{"Prefer": "return-no-content"}, 204},
		{"POST", "/acct/t1", `{"PartitionKey":"a","RowKey":"b"}`, nil, 201},
		{"POST", "/acct/t1", `{"PartitionKey":"a","RowKey":"b"}`, map[string]string{"Prefer": "return-no-content"}, 204},
		{"GET", "/acct/t1(PartitionKey='a',RowKey='b')", "", nil, 200},
		{"PATCH", "/acct/t1(PartitionKey='a',RowKey='b')", `{}`, nil, 204},
		{"PUT", "/acct/t1(PartitionKey='a',RowKey='b')", `{}`, nil, 204},
		{"PUT", "/acct/t1(PartitionKey='a',RowKey='b')", strings.Repeat("x", maxEntityBody+1), nil, 413},
		{"POST", "/acct/t1", strings.Repeat("x", maxEntityBody+1), nil, 413},
		{"GET", "/acct/t1(PartitionKey='a%2F%2Fb',RowKey='%ZZ')", "", nil, 400},
		{"DELETE", "/acct/t1(PartitionKey='a',RowKey='b')", "", nil, 204},
		{"GET", "/acct/t1()?$top=10", "", nil, 200},
		{"GET", "/acct/t1()?$top=10&NextPartitionKey=null&NextRowKey=n9999", "", nil, 400},
		{"GET", "/acct/t1()?$top=0", "", nil, 400},
		{"DELETE", "/acct/Tables('t1')", "", nil, 204},
		{"POST", "/acct/Tables", `{"TableName":"t1"}`, nil, 201},
		{"GET", "/acct?restype=service&comp=properties", "", nil, 501},
		{"POST", "/acct/$batch", "garbage", map[string]string{"Content-Type": "text/plain"}, 400},
		{"PUT", "/acct/Tables", "", nil, 405},
	}
	for _, s := range steps {
		var req fasthttp.Request
		req.Header.SetMethod(s.method)
		req.SetRequestURI("http://127.0.0.1" + s.path)
		req.SetBodyString(s.body)
		for k, v := range s.hdr {
			req.Header.Set(k, v)
		}
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, nil, nil)
		h(&ctx)
		code, body := ctx.Response.StatusCode(), ctx.Response.Body()
		if code != s.want {
			t.Errorf("%s %s = %d, want %d", s.method, s.path, code, s.want)
		}
		if code >= 400 && len(ctx.Response.Header.Peek("x-ms-error-code")) == 0 {
			t.Errorf("%s %s: error without x-ms-error-code", s.method, s.path)
		}
		if s.method == "GET" && code == 200 && !json.Valid(body) {
			t.Errorf("%s %s: body is not JSON: %s", s.method, s.path, body)
		}
	}
}

// TestEndToEndQueueWorkloadsAgainstNull runs the Queue workloads through azqueue against the
// null server's canned Queue answers.
func TestEndToEndQueueWorkloadsAgainstNull(t *testing.T) {
	conn := startNull(t)
	out, err := runMain(t, "--conn", conn, "--label", "null", "--ops", "12", "--duration", "1m",
		"--workloads", "queue", "--preload", "20", "--concurrency", "2", "--json", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	results, _ := decodeLines(t, out)
	if len(results) != len(queueWorkloads()) {
		t.Fatalf("%d results, want %d:\n%s", len(results), len(queueWorkloads()), out)
	}
	for _, r := range results {
		if r.Errors != 0 || r.Ops != 12 {
			t.Errorf("%s: %d ops, %d errors (%s)", r.Workload, r.Ops, r.Errors, r.FirstError)
		}
	}
}

// startNullBlob runs the null server's Blob listener and returns a connection string naming
// it as the Blob endpoint.
func startNullBlob(t *testing.T, listBlobs int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NullBlobServer(ctx, ln, listBlobs) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("null blob server: %v", err)
		}
	})
	return "AccountName=devstoreaccount1;AccountKey=" + devKey + ";TableEndpoint=http://127.0.0.1:1/devstoreaccount1;BlobEndpoint=http://" + ln.Addr().String() + "/devstoreaccount1"
}

// TestEndToEndBlobWorkloadsAgainstNull runs the Blob workloads (but the 256 MiB ones) through
// azblob against the null Blob listener, and the disk ceiling of the uploads: every op
// succeeds, transfers report MB/s, and a listing sees every preloaded blob.
func TestEndToEndBlobWorkloadsAgainstNull(t *testing.T) {
	conn := startNullBlob(t, 5001)
	wls := "blob-upload-1k,blob-download-1k,blob-upload-1m,blob-download-1m,blob-list"
	out, err := runMain(t, "--conn", conn, "--label", "null", "--ops", "6", "--duration", "1m",
		"--concurrency", "3", "--list-preload", "5001", "--workloads", wls, "--json", "-")
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	results, _ := decodeLines(t, out)
	if len(results) != 5 {
		t.Fatalf("got %d results, want 5:\n%s", len(results), out)
	}
	for _, r := range results {
		if r.Ops != 6 || r.Errors != 0 || r.FailedToRun != "" {
			t.Errorf("%s: %+v", r.Workload, r)
		}
		switch {
		case r.Workload == "blob-list":
			if r.Entities != 6*5001 || r.Preload != 5001 {
				t.Errorf("blob-list listed %d blobs of %d, want 6 listings of 5001", r.Entities, r.Preload)
			}
		case r.BlobSize == 0 || r.MBPerSec <= 0:
			t.Errorf("%s: no blob size or MB/s: %+v", r.Workload, r)
		}
	}
	disk, err := runMain(t, "--disk-dir", t.TempDir(), "--ops", "4", "--duration", "1m",
		"--concurrency", "2", "--workloads", "blob-upload-1k,blob-upload-1m", "--json", "-")
	if err != nil {
		t.Fatalf("disk: %v\n%s", err, disk)
	}
	results, _ = decodeLines(t, disk)
	if len(results) != 2 || results[0].Target != "disk" || results[1].Ops != 4 || results[1].MBPerSec <= 0 {
		t.Fatalf("disk results: %+v", results)
	}
	if _, err := runMain(t, "--disk-dir", t.TempDir(), "--ops", "1", "--workloads", "blob-download-1k"); err == nil {
		t.Fatal("--disk-dir accepted a download workload")
	}
}
