package batch

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
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

const (
	specLocation = "https://myaccount.table.core.windows.net/Blogs(PartitionKey='Channel_19',RowKey='1')"
	specETag     = `W/"datetime'2025-01-01T00%3A00%3A01.1234567Z'"`
	specReqID    = "8e6f7c3e-0002-0040-5a1b-6a8f2c000000"
)

var specTime = time.Date(2025, 1, 1, 0, 0, 1, 234567800, time.UTC)

// responseCases are rendered responses: the spec-* ones must equal, byte for byte, the
// examples in spec/batch.md §3 and §4 (extracted verbatim, LF → CRLF); the others are goldens
// reviewed against the same rules.
var responseCases = []struct {
	name, file    string
	spec          bool // expected bytes come from batch.md and are never rewritten
	batch, change string
	retrieve      bool
	subs          []SubResponse
}{{
	name: "success", file: "spec-success.txt", spec: true,
	batch:  "batchresponse_4c637ba4-b2e8-40f8-8e88-e2f0de4ce0f4",
	change: "changesetresponse_fe9a2b55-4e7b-4a5d-a4ad-68d8f5d1a9f6",
	subs:   []SubResponse{InsertedNoContent(specLocation, specETag), Updated(specETag), Deleted()},
}, {
	name: "failure", file: "spec-failure.txt", spec: true,
	batch:  "batchresponse_66925647-d0cb-4109-b6d3-28b55bbbe21f",
	change: "changesetresponse_a4ae8c15-3d20-4aa8-8b1c-ff3fc6dc66c6",
	subs:   []SubResponse{Failed(1, azerr.New(azerr.EntityAlreadyExists), specReqID, specTime)},
}, {
	name: "empty changeset", file: "empty.txt",
	batch: "batchresponse_1", change: "changesetresponse_2",
	subs: []SubResponse{},
}, {
	name: "insert with content", file: "insert-content.txt",
	batch: "batchresponse_1", change: "changesetresponse_2",
	subs: []SubResponse{Inserted(specLocation, specETag, JSONMinimalMetadata,
		[]byte(`{"odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Blogs/@Element","odata.etag":"W/\"datetime'2025-01-01T00%3A00%3A01.1234567Z'\"","PartitionKey":"Channel_19","RowKey":"1","Timestamp":"2025-01-01T00:00:01.1234567Z"}`), true)},
}, {
	name: "retrieve", file: "retrieve.txt", retrieve: true,
	batch: "batchresponse_1",
	subs: []SubResponse{Retrieved(specETag, JSONMinimalMetadata,
		[]byte(`{"odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Blogs/@Element","odata.etag":"W/\"datetime'2025-01-01T00%3A00%3A01.1234567Z'\"","PartitionKey":"Channel_19","RowKey":"1","Timestamp":"2025-01-01T00:00:01.1234567Z"}`))},
}}

func render(t *testing.T, batch, change string, retrieve bool, subs []SubResponse) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	if retrieve {
		err = WriteRetrieveResponse(&b, batch, subs[0])
	} else {
		err = WriteResponse(&b, batch, change, subs)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestWriteResponseGolden(t *testing.T) {
	for _, tc := range responseCases {
		t.Run(tc.name, func(t *testing.T) {
			got := render(t, tc.batch, tc.change, tc.retrieve, tc.subs)
			path := "testdata/responses/" + tc.file
			if !tc.spec {
				golden(t, path, got)
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("differs from batch.md\n--- got\n%q\n--- want\n%q", got, want)
			}
		})
	}
}

// goSDKParse mirrors what aztables v1.4.1 buildTransactionResponse does with a 202 body
// (transactional_batch.go, read from the module cache; the SDK itself is not a dependency):
// a body starting with '{' is an error; each boundary is the first line of its body minus
// "--"; mime/multipart splits both levels; every inner part goes to http.ReadResponse; a
// status >= 400 fails the transaction. It returns the statuses it saw.
func goSDKParse(body []byte) (statuses []int, err error) {
	defer func() { // getBoundaryName slices bytesBody[2:end] and panics on odd bodies
		if r := recover(); r != nil {
			err = fmt.Errorf("SDK panic: %v", r)
		}
	}()
	if bytes.IndexByte(body, '{') == 0 {
		return nil, errors.New("JSON body")
	}
	boundary := func(b []byte) string {
		end := bytes.Index(b, []byte("\n"))
		if end > 0 && b[end-1] == '\r' {
			end--
		}
		return string(b[2:end])
	}
	outer, err := multipart.NewReader(bytes.NewReader(body), boundary(body)).NextPart()
	if err != nil {
		return nil, err
	}
	inner, err := io.ReadAll(outer)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	mr := multipart.NewReader(bytes.NewReader(inner), boundary(inner))
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/devstoreaccount1/$batch", nil)
	for part, err := mr.NextPart(); err == nil; part, err = mr.NextPart() {
		b, err := io.ReadAll(part)
		if err != nil {
			break
		}
		r, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), req)
		if err != nil {
			return nil, err
		}
		statuses = append(statuses, r.StatusCode)
		if r.StatusCode >= 400 {
			return statuses, fmt.Errorf("transaction failed with %d", r.StatusCode)
		}
	}
	return statuses, nil
}

func TestGoSDKParsesResponses(t *testing.T) {
	for _, tc := range responseCases {
		if tc.retrieve || len(tc.subs) == 0 {
			// The Go SDK sends neither a retrieve batch nor an empty transaction (it refuses
			// one client-side); its getBoundaryName would panic on the one-line inner body.
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			body := render(t, tc.batch, tc.change, false, tc.subs)
			statuses, err := goSDKParse(body)
			if len(statuses) != len(tc.subs) {
				t.Fatalf("SDK saw %d sub-responses %v, want %d (err %v)", len(statuses), statuses, len(tc.subs), err)
			}
			failed := len(tc.subs) > 0 && tc.subs[0].Status >= 400
			if failed != (err != nil) {
				t.Errorf("SDK error %v, want failure=%v", err, failed)
			}
		})
	}
	// Control: without the empty line that closes a body-less header block, the SDK fails
	// with unexpected EOF (spec/batch.md §3), so the test above really checks that line.
	body := render(t, "batchresponse_1", "changesetresponse_2", false, []SubResponse{Deleted()})
	broken := bytes.Replace(body, []byte("\r\n\r\n\r\n--changesetresponse_2"), []byte("\r\n\r\n--changesetresponse_2"), 1)
	if _, err := goSDKParse(broken); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("control: SDK accepted a header block without its empty line (err %v)", err)
	}
}

// jsParse mirrors @azure/data-tables 13.x as batch.md §1-§3 describes it: split the raw text on
// "--changesetresponse_", take the status from the first "HTTP/1.1 <digits>", the ETag from
// /ETag: (.*)/ (case-sensitive), the row key from /RowKey='(.*)'/, and treat any {…} in the
// part as an error body.
func jsParse(body []byte) (statuses []string, etags []string, errCode, errMsg string) {
	status := regexp.MustCompile(`HTTP/1\.1 (\d+)`)
	etag := regexp.MustCompile(`ETag: ([^\r\n]*)`)
	jsonBody := regexp.MustCompile(`\{([^\r\n]*)\}`)
	for _, part := range strings.Split(string(body), "--changesetresponse_")[1:] {
		m := status.FindStringSubmatch(part)
		if m == nil {
			continue
		}
		statuses = append(statuses, m[1])
		if e := etag.FindStringSubmatch(part); e != nil {
			etags = append(etags, e[1])
		}
		if j := jsonBody.FindString(part); j != "" {
			var v struct {
				E struct {
					Code    string
					Message struct{ Value string }
				} `json:"odata.error"`
			}
			if err := json.Unmarshal([]byte(j), &v); err != nil {
				return statuses, etags, "unparsable", err.Error()
			}
			return statuses, etags, v.E.Code, v.E.Message.Value
		}
	}
	return statuses, etags, "", ""
}

func TestJSParsesResponses(t *testing.T) {
	success := render(t, responseCases[0].batch, responseCases[0].change, false, responseCases[0].subs)
	statuses, etags, code, _ := jsParse(success)
	if strings.Join(statuses, ",") != "204,204,204" || len(etags) != 2 || etags[0] != specETag || code != "" {
		t.Errorf("success: statuses %v etags %q code %q", statuses, etags, code)
	}
	if !regexp.MustCompile(`RowKey='1'`).Match(success) {
		t.Error("success: no RowKey='…' for the insert")
	}
	failure := render(t, responseCases[1].batch, responseCases[1].change, false, responseCases[1].subs)
	statuses, _, code, msg := jsParse(failure)
	if strings.Join(statuses, ",") != "409" || code != "EntityAlreadyExists" || !strings.HasPrefix(msg, "1:The specified entity already exists.\nRequestId:") {
		t.Errorf("failure: statuses %v code %q message %q", statuses, code, msg)
	}
}

// TestPythonStyleParse reads responses the way azure-core does: the boundary from the response
// Content-Type, the nested changeset boundary from the part's Content-Type, and parts matched
// to operations by position.
func TestPythonStyleParse(t *testing.T) {
	for _, tc := range responseCases {
		if tc.retrieve {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			body := render(t, tc.batch, tc.change, false, tc.subs)
			_, params, err := mime.ParseMediaType(ResponseContentType(tc.batch))
			if err != nil {
				t.Fatal(err)
			}
			outer, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).NextPart()
			if err != nil {
				t.Fatal(err)
			}
			media, inner, err := mime.ParseMediaType(outer.Header.Get("Content-Type"))
			if err != nil || media != "multipart/mixed" || !strings.HasPrefix(inner["boundary"], ChangesetResponsePrefix) {
				t.Fatalf("changeset part Content-Type %q", outer.Header.Get("Content-Type"))
			}
			mr := multipart.NewReader(outer, inner["boundary"])
			for i := 0; ; i++ {
				p, err := mr.NextPart()
				if err == io.EOF {
					if i != len(tc.subs) {
						t.Errorf("%d parts, want %d", i, len(tc.subs))
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				r, err := http.ReadResponse(bufio.NewReader(p), nil)
				if err != nil {
					t.Fatalf("part %d: %v", i, err)
				}
				got, _ := io.ReadAll(r.Body)
				if r.StatusCode != tc.subs[i].Status || !bytes.Equal(got, tc.subs[i].Body) || r.Header.Get("ETag") != tc.subs[i].ETag {
					t.Errorf("part %d: status %d body %q etag %q", i, r.StatusCode, got, r.Header.Get("ETag"))
				}
			}
		})
	}
}

func TestErrorBody(t *testing.T) {
	body, status := ErrorBody(3, fmt.Errorf("wrapped: %w", azerr.Newf(azerr.OutOfRangeInput, "The 'PartitionKey' parameter of value '<a&b>' is out of range.")), "rid", time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)))
	want := `{"odata.error":{"code":"OutOfRangeInput","message":{"lang":"en-US","value":"3:The 'PartitionKey' parameter of value '<a&b>' is out of range.\nRequestId:rid\nTime:2025-01-02T02:04:05.0000000Z"}}}`
	if string(body) != want || status != http.StatusBadRequest {
		t.Errorf("got %d %s\nwant %s", status, body, want)
	}
	body, status = ErrorBody(0, errors.New("disk on fire"), "rid", specTime)
	if status != http.StatusInternalServerError || !bytes.Contains(body, []byte(`"code":"InternalError"`)) || bytes.Contains(body, []byte("fire")) {
		t.Errorf("non-Azure error leaked or mis-mapped: %d %s", status, body)
	}
}

func TestWriteResponseRejectsBrokenFraming(t *testing.T) {
	tests := []struct {
		name          string
		batch, change string
		sub           SubResponse
	}{
		{"empty boundary", "", "c", Deleted()},
		{"boundary with CR", "b\r", "c", Deleted()},
		{"bad status", "b", "c", SubResponse{Status: 0}},
		{"line break in value", "b", "c", Updated("x\r\nInjected: 1")},
		{"value starting with CR", "b", "c", Updated("\rInjected: 1")},
		{"value starting with LF", "b", "c", Updated("\nInjected: 1")},
		{"boundary of 71 characters", strings.Repeat("b", 71), "c", Deleted()},
		{"delimiter in body", "b", "c", SubResponse{Status: 200, Body: []byte("x\r\n--c--")}},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		if err := WriteResponse(&b, tc.batch, tc.change, []SubResponse{tc.sub}); err == nil || b.Len() != 0 {
			t.Errorf("%s: err %v, wrote %d bytes", tc.name, err, b.Len())
		}
	}
}

// TestResponseBoundaryAtLimit: a response boundary of RFC 2046's maximum, 70 characters,
// frames a response.
func TestResponseBoundaryAtLimit(t *testing.T) {
	b70 := strings.Repeat("b", 70)
	var b bytes.Buffer
	if err := WriteResponse(&b, b70, "c", []SubResponse{Deleted()}); err != nil || !strings.HasPrefix(b.String(), "--"+b70+"\r\n") {
		t.Fatalf("70-character boundary: %v, %q", err, b.String())
	}
}

func TestNewBoundary(t *testing.T) {
	re := regexp.MustCompile(`^changesetresponse_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := NewBoundary(ChangesetResponsePrefix), NewBoundary(ChangesetResponsePrefix)
	if !re.MatchString(a) || a == b {
		t.Errorf("boundaries %q, %q", a, b)
	}
	if got := ResponseContentType("batchresponse_x"); got != "multipart/mixed; boundary=batchresponse_x" {
		t.Errorf("ResponseContentType = %q", got)
	}
}
