package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// Raw $batch requests and responses, written in the Go SDK's wire format
// (spec/wire-samples/go/29-batch-mixed.txt, 30-batch-fails.txt), so tests can assert what the
// Go SDK hides: each sub-response's status, code and "N:" index (spec/batch.md §4).

// changesetOp is one application/http sub-request of a changeset.
type changesetOp struct {
	method string
	url    string
	header [][2]string // written in this order
	body   string
}

const goFormatQuery = "?%24format=application%2Fjson%3Bodata%3Dminimalmetadata"

// entityURL is the absolute, path-style URL of one entity, keys quoted as the JS SDK does
// (quotes doubled, left literal).
func (ts *testServer) entityURL(table, pk, rk string) string {
	q := func(s string) string { return strings.ReplaceAll(s, "'", "''") }
	return fmt.Sprintf("%s/%s(PartitionKey='%s',RowKey='%s')", ts.endpoint, table, q(pk), q(rk))
}

// insertOp is a Go SDK batch insert (Prefer: return-no-content, $format on the URL).
func (ts *testServer) insertOp(table, body string) changesetOp {
	return changesetOp{
		method: "POST",
		url:    ts.endpoint + "/" + table + goFormatQuery,
		header: [][2]string{
			{"Accept", "application/json;odata=minimalmetadata"},
			{"Content-Length", fmt.Sprint(len(body))},
			{"Content-Type", "application/json"},
			{"DataServiceVersion", ""},
			{"Prefer", "return-no-content"},
			{"x-ms-version", ""},
		},
		body: body,
	}
}

// writeOp is a PUT or PATCH of one entity; ifMatch "" sends no If-Match (an upsert).
func (ts *testServer) writeOp(method, table, pk, rk, ifMatch, body string) changesetOp {
	h := [][2]string{
		{"Accept", "application/json"},
		{"Content-Length", fmt.Sprint(len(body))},
		{"Content-Type", "application/json"},
		{"DataServiceVersion", ""},
	}
	if ifMatch != "" {
		h = append(h, [2]string{"If-Match", ifMatch})
	}
	h = append(h, [2]string{"x-ms-version", ""})
	return changesetOp{method: method, url: ts.entityURL(table, pk, rk), header: h, body: body}
}

// deleteOp is a batch delete as the Go SDK writes it; ifMatch "" sends no If-Match.
func (ts *testServer) deleteOp(table, pk, rk, ifMatch string) changesetOp {
	h := [][2]string{
		{"Accept", "application/json;odata=minimalmetadata"},
		{"DataServiceVersion", ""},
	}
	if ifMatch != "" {
		h = append(h, [2]string{"If-Match", ifMatch})
	}
	h = append(h, [2]string{"x-ms-version", ""})
	return changesetOp{method: "DELETE", url: ts.entityURL(table, pk, rk) + goFormatQuery, header: h}
}

const (
	testBatchBoundary     = "batch_d5cec1af-7c54-4b1b-4f4d-c28530a275a3"
	testChangesetBoundary = "changeset_5bdf6223-7302-4979-545d-c96c51269a7e"
)

// batchBody renders a $batch body with one changeset holding ops, byte for byte in the Go
// SDK's layout (part headers Content-Transfer-Encoding first, blank line before the close).
func batchBody(ops []changesetOp) string {
	var b strings.Builder
	b.WriteString("--" + testBatchBoundary + "\r\n")
	b.WriteString("Content-Type: multipart/mixed; boundary=" + testChangesetBoundary + "\r\n\r\n")
	for _, op := range ops {
		b.WriteString("--" + testChangesetBoundary + "\r\n")
		b.WriteString("Content-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n")
		b.WriteString(op.method + " " + op.url + " HTTP/1.1\r\n")
		for _, h := range op.header {
			b.WriteString(h[0] + ": " + h[1] + "\r\n")
		}
		b.WriteString("\r\n" + op.body + "\r\n")
	}
	b.WriteString("--" + testChangesetBoundary + "--\r\n\r\n")
	b.WriteString("--" + testBatchBoundary + "--\r\n")
	return b.String()
}

// batchReply is a $batch response; parts is set when it is a well-formed multipart reply.
type batchReply struct {
	status int
	header http.Header
	raw    string
	parts  []subReply
}

type subReply struct {
	status int
	header http.Header
	body   string
}

// postBatch sends a raw $batch with the given body under the Go SDK's outer headers.
func (ts *testServer) postBatch(t testing.TB, body string) batchReply {
	t.Helper()
	return ts.postBatchAs(t, "multipart/mixed; boundary="+testBatchBoundary, body)
}

func (ts *testServer) postBatchAs(t testing.TB, contentType, body string) batchReply {
	t.Helper()
	status, h, raw := ts.do(t, "POST", "/$batch", map[string]string{
		"Content-Type":       contentType,
		"Accept":             "application/json;odata=minimalmetadata",
		"DataServiceVersion": "3.0",
	}, body)
	r := batchReply{status: status, header: h, raw: raw}
	if status == http.StatusAccepted {
		parts, err := parseBatchReply(h.Get("Content-Type"), raw)
		if err != nil {
			t.Fatalf("malformed batch response: %v\n%s", err, raw)
		}
		r.parts = parts
	}
	return r
}

// parseBatchReply checks the framing every SDK relies on (spec/batch.md checklist 2–3) and
// decodes each sub-response with http.ReadResponse, as Go aztables does.
func parseBatchReply(contentType, raw string) ([]subReply, error) {
	media, params, err := mime.ParseMediaType(contentType)
	if err != nil || media != "multipart/mixed" || !strings.HasPrefix(params["boundary"], "batchresponse_") {
		return nil, fmt.Errorf("outer Content-Type %q", contentType)
	}
	if !strings.HasPrefix(raw, "--"+params["boundary"]+"\r\n") {
		return nil, errors.New("body does not start with the batch delimiter")
	}
	outer, err := multipart.NewReader(strings.NewReader(raw), params["boundary"]).NextPart()
	if err != nil {
		return nil, fmt.Errorf("batch part: %w", err)
	}
	media, inner, err := mime.ParseMediaType(outer.Header.Get("Content-Type"))
	if err != nil || media != "multipart/mixed" || !strings.HasPrefix(inner["boundary"], "changesetresponse_") {
		return nil, fmt.Errorf("changeset Content-Type %q", outer.Header.Get("Content-Type"))
	}
	content, err := io.ReadAll(outer)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(content, []byte("--"+inner["boundary"])) {
		return nil, errors.New("changeset does not start with its delimiter")
	}
	mr := multipart.NewReader(bytes.NewReader(content), inner["boundary"])
	var subs []subReply
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return subs, nil
		}
		if err != nil {
			return nil, err
		}
		if p.Header.Get("Content-Type") != "application/http" {
			return nil, fmt.Errorf("part Content-Type %q", p.Header.Get("Content-Type"))
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil)
		if err != nil {
			return nil, fmt.Errorf("sub-response %d: %w", len(subs), err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		subs = append(subs, subReply{status: resp.StatusCode, header: resp.Header, body: string(body)})
	}
}

// odataError is the JSON error body of a failed operation or request.
type odataError struct {
	Error struct {
		Code    string `json:"code"`
		Message struct {
			Lang  string `json:"lang"`
			Value string `json:"value"`
		} `json:"message"`
	} `json:"odata.error"`
}

// wantBatchFailure asserts the 202 failure shape of spec/batch.md §4: exactly one
// sub-response with the failing operation's status, a one-line JSON odata.error with the
// code, and a message starting with "<index>:".
func wantBatchFailure(t testing.TB, r batchReply, status int, code string, index int) {
	t.Helper()
	if r.status != http.StatusAccepted {
		t.Fatalf("outer status %d, want 202 (body %.300s)", r.status, r.raw)
	}
	if len(r.parts) != 1 {
		t.Fatalf("%d sub-responses, want exactly 1:\n%s", len(r.parts), r.raw)
	}
	p := r.parts[0]
	var e odataError
	if err := json.Unmarshal([]byte(p.body), &e); err != nil {
		t.Fatalf("failure body is not JSON: %v: %q", err, p.body)
	}
	prefix := fmt.Sprintf("%d:", index)
	if p.status != status || e.Error.Code != code || !strings.HasPrefix(e.Error.Message.Value, prefix) {
		t.Fatalf("got %d %s %q, want %d %s %q…", p.status, e.Error.Code, e.Error.Message.Value, status, code, prefix)
	}
	if strings.ContainsAny(strings.TrimRight(p.body, "\r\n"), "\r\n") {
		t.Errorf("failure body spans lines: %q", p.body)
	}
	if !strings.HasPrefix(p.header.Get("Content-Type"), "application/json") {
		t.Errorf("failure Content-Type %q", p.header.Get("Content-Type"))
	}
}

// wantRequestError asserts a whole-request error (spec/batch.md §4.2): a plain status with
// x-ms-error-code and a JSON odata.error body, not a multipart reply.
func wantRequestError(t testing.TB, r batchReply, status int, code string) {
	t.Helper()
	var e odataError
	_ = json.Unmarshal([]byte(r.raw), &e)
	if r.status != status || r.header.Get("x-ms-error-code") != code || e.Error.Code != code {
		t.Fatalf("got %d %s (body %.300q), want %d %s", r.status, r.header.Get("x-ms-error-code"), r.raw, status, code)
	}
}

// wantSDKBatchError asserts how Go aztables v1.4.1 reports a failed transaction: a
// ResponseError with the outer status 202 and the failing part only in the text.
func wantSDKBatchError(t testing.TB, err error, code string, index int) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want a failed transaction (%s at %d), got %v", code, index, err)
	}
	msg := err.Error()
	if re.StatusCode != http.StatusAccepted || !strings.Contains(msg, `"code":"`+code+`"`) ||
		!strings.Contains(msg, fmt.Sprintf(`"value":"%d:`, index)) {
		t.Fatalf("want %s at %d, got status %d:\n%s", code, index, re.StatusCode, msg)
	}
}

// tableSnapshot is the raw full-metadata query response for a whole table: entities, ETags and
// Timestamps, byte for byte.
func (ts *testServer) tableSnapshot(t testing.TB, table string) string {
	t.Helper()
	status, _, body := ts.do(t, "GET", "/"+table+"()", map[string]string{"Accept": "application/json;odata=fullmetadata"}, "")
	if status != http.StatusOK {
		t.Fatalf("query %s: %d %s", table, status, body)
	}
	return body
}
