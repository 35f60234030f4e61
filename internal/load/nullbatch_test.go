package load

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
)

// buildBatch renders a $batch body the way the Go SDK lays it out, with n insert operations.
func buildBatch(t testing.TB, n int) (body []byte, contentType string) {
	t.Helper()
	var cs bytes.Buffer
	cw := multipart.NewWriter(&cs)
	for i := range n {
		h := make(textproto.MIMEHeader)
		h.Set("Content-Type", "application/http")
		h.Set("Content-Transfer-Encoding", "binary")
		pw, err := cw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(pw, "POST http://127.0.0.1/acct/t HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"r%d\"}", i)
	}
	cw.Close()
	var out bytes.Buffer
	bw := multipart.NewWriter(&out)
	h := make(textproto.MIMEHeader)
	h.Set("Content-Type", "multipart/mixed; boundary="+cw.Boundary())
	pw, err := bw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	pw.Write(cs.Bytes())
	bw.Close()
	return out.Bytes(), "multipart/mixed; boundary=" + bw.Boundary()
}

func TestCountBatchOps(t *testing.T) {
	for _, n := range []int{1, 2, 100} {
		body, ct := buildBatch(t, n)
		got, err := countBatchOps(ct, bytes.NewReader(body))
		if err != nil || got != n {
			t.Errorf("countBatchOps(%d ops) = %d, %v", n, got, err)
		}
	}
	body, ct := buildBatch(t, 101)
	if _, err := countBatchOps(ct, bytes.NewReader(body)); err == nil {
		t.Error("101 operations: want error")
	}
	bad := []struct{ name, ct, body string }{
		{"not multipart", "application/json", "{}"},
		{"no boundary", "multipart/mixed", ""},
		{"empty body", "multipart/mixed; boundary=b", ""},
		{"first part not a changeset", "multipart/mixed; boundary=b", "--b\r\nContent-Type: application/http\r\n\r\nGET / HTTP/1.1\r\n\r\n--b--\r\n"},
		{"empty changeset", "multipart/mixed; boundary=b", "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c--\r\n--b--\r\n"},
	}
	for _, tc := range bad {
		if n, err := countBatchOps(tc.ct, strings.NewReader(tc.body)); err == nil {
			t.Errorf("%s: got %d operations, want error", tc.name, n)
		}
	}
}

// TestBatchResponseParses reads the rendered response the way the SDK does: outer part, inner
// parts, one HTTP response each.
func TestBatchResponseParses(t *testing.T) {
	for _, n := range []int{1, 3, 100} {
		body, ct := batchResponse("abc", n, cannedETag)
		if ct != "multipart/mixed; boundary=batchresponse_abc" || !strings.HasPrefix(body, "--batchresponse_abc\r\n") {
			t.Fatalf("content type %q / body start %q", ct, body[:30])
		}
		got := countResponses(t, body)
		if got != n {
			t.Fatalf("parsed %d responses, want %d", got, n)
		}
	}
}

func countResponses(t *testing.T, body string) int {
	t.Helper()
	outer := multipart.NewReader(strings.NewReader(body), "batchresponse_abc")
	part, err := outer.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	inner := multipart.NewReader(part, "changesetresponse_abc")
	n := 0
	for {
		p, err := inner.NextPart()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(p), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("ETag") != cannedETag {
			t.Fatalf("status %d etag %q", resp.StatusCode, resp.Header.Get("ETag"))
		}
		n++
	}
}

// FuzzCountBatchOps checks that no body panics and that a count, when given, is within limits.
func FuzzCountBatchOps(f *testing.F) {
	body, ct := buildBatch(f, 3)
	f.Add(ct, body)
	f.Add("multipart/mixed; boundary=b", []byte("--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\n\r\nx\r\n--c--\r\n--b--\r\n"))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		n, err := countBatchOps(ct, bytes.NewReader(body))
		if err == nil && (n < 1 || n > maxBatchOps) {
			t.Fatalf("count %d outside [1, %d] without error", n, maxBatchOps)
		}
	})
}
