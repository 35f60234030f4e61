package load

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Every line of the results table has its columns in the same places, however long the
// labels and however large the numbers.
func TestResultTableIsAligned(t *testing.T) {
	var b bytes.Buffer
	tb := newResultTable(&b, []string{"preload", "get", "insert-many-pk"}, []string{"a-rather-long-target-label", "b"})
	tb.header()
	cpu, opc := 123.45, 98765.4
	tb.row(&Result{Workload: "get", Target: "b", Concurrency: 4, Ops: 5, Seconds: 1, OpsPerSec: 5, EntsPerSec: 5, P50Ms: 0.1, P99Ms: 0.2})
	tb.row(&Result{Workload: "insert-many-pk", Target: "a-rather-long-target-label", Concurrency: 128, Ops: 123456789,
		Errors: 12345, Seconds: 3600, OpsPerSec: 34293.5, EntsPerSec: 3429350.5, P50Ms: 1234.567, P99Ms: 99999.999,
		ServerCPU: &cpu, OpsPerCPUSec: &opc})
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines:\n%s", b.String())
	}
	for _, l := range lines[1:] {
		if len(l) != len(lines[0]) {
			t.Errorf("misaligned:\n%s", b.String())
			break
		}
	}
	// Each heading ends where its values end.
	for _, col := range []string{"ops/s", "p99 ms", "ops/cpu-s"} {
		end := strings.Index(lines[0], col) + len(col)
		for _, l := range lines[1:] {
			if l[end-1] == ' ' || (end < len(l) && l[end] != ' ') {
				t.Errorf("column %s does not end at %d in %q", col, end, l)
			}
		}
	}
}

// Ctrl-C (ctx cancelled) during a long workload prints what was measured so far, marked as
// interrupted, and returns ErrInterrupted promptly; nothing of the progress line is written
// when stderr is not a terminal.
func TestInterruptPrintsResultsSoFar(t *testing.T) {
	conn := startNull(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	var out, errOut bytes.Buffer
	err := Main(ctx, []string{"--conn", conn, "--label", "null", "--workloads", "get,insert-one-pk",
		"--duration", "10m", "--preload", "100"}, &out, &errOut)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "get ") || !strings.Contains(out.String(), "(interrupted)") {
		t.Errorf("no interrupted get row:\n%s", out.String())
	}
	if strings.Contains(out.String(), "insert-one-pk") {
		t.Errorf("a workload after the interruption ran:\n%s", out.String())
	}
	if errOut.Len() != 0 {
		t.Errorf("progress written to a non-terminal: %q", errOut.String())
	}
}

// A failing endpoint's error appears once: in the table, not again in the returned error.
func TestEachErrorOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-ms-error-code", "AuthenticationFailed")
		w.WriteHeader(http.StatusForbidden)
	}), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	conn := "AccountName=devstoreaccount1;AccountKey=" + devKey + ";TableEndpoint=http://" + ln.Addr().String() + "/devstoreaccount1"
	var out, errOut bytes.Buffer
	err = Main(context.Background(), []string{"--conn", conn, "--label", "denied", "--workloads", "get,insert-one-pk", "--ops", "5"}, &out, &errOut)
	if err == nil {
		t.Fatal("want an error")
	}
	all := out.String() + errOut.String() + err.Error()
	if n := strings.Count(all, "HTTP 403 AuthenticationFailed"); n != 2 { // one per workload
		t.Errorf("the error appears %d times, want once per workload:\n%s\nreturned: %v", n, out.String(), err)
	}
}
