package batch

import (
	"errors"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// TestParseSamples parses the requests the Go, JS and Python SDKs sent, against reviewed
// golden dumps, and checks the facts batch.md states about each client.
func TestParseSamples(t *testing.T) {
	for _, path := range samplePaths(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".http")
		t.Run(name, func(t *testing.T) {
			ct, body := readSample(t, path)
			r, err := Parse(ct, body, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, strings.TrimSuffix(path, ".http")+".golden", []byte(dump(r)))

			wantMethods := "POST,PUT,PATCH,PUT,PATCH,DELETE"
			if strings.Contains(name, "30-batch-fails") {
				wantMethods = "POST,POST"
			}
			var methods []string
			for i, op := range r.Operations {
				methods = append(methods, op.Method)
				if op.Method != http.MethodDelete && (len(op.Body) == 0 || op.Body[0] != '{' || op.Body[len(op.Body)-1] != '}') {
					t.Errorf("op %d: body %q is not the bare JSON object", i, op.Body)
				}
				if !strings.HasPrefix(op.URL, "http://127.0.0.1:13010/devstoreaccount1/") {
					t.Errorf("op %d: URL %q", i, op.URL)
				}
				client, _, _ := strings.Cut(name, "-")
				wantID := ""
				if client == "python" { // only Python sends Content-ID, 0-based
					wantID = strconv.Itoa(i)
				}
				if op.ContentID != wantID {
					t.Errorf("op %d: ContentID %q, want %q", i, op.ContentID, wantID)
				}
				if cl := op.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(op.Body)) {
					t.Errorf("op %d: trimmed body has %d bytes, Content-Length says %s", i, len(op.Body), cl)
				}
				if client == "go" {
					if v, ok := op.Header["Dataserviceversion"]; !ok || v[0] != "" {
						t.Errorf("op %d: Go's empty DataServiceVersion not kept: %q", i, v)
					}
				}
			}
			if got := strings.Join(methods, ","); got != wantMethods {
				t.Errorf("methods %s, want %s", got, wantMethods)
			}
		})
	}
}

// crlf turns a readable LF test body into the CRLF form the SDKs send.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

const (
	testCT  = "multipart/mixed; boundary=batch_1"
	csStart = "--batch_1\nContent-Type: multipart/mixed; boundary=cs_1\n\n"
	csEnd   = "--cs_1--\n--batch_1--\n"
	insert  = "--cs_1\nContent-Type: application/http\n\nPOST http://h/acct/t HTTP/1.1\nPrefer: return-no-content\n\n{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\n"
	del     = "--cs_1\nContent-Type: application/http\n\nDELETE http://h/acct/t(PartitionKey='p',RowKey='r') HTTP/1.1\nIf-Match: *\n\n"
)

func TestParseVariants(t *testing.T) {
	tests := []struct {
		name, ct, body string
		want           string // dump of the result
	}{{
		name: "LF only",
		body: csStart + insert + del + csEnd,
		want: "boundary: batch_1\nchangeset: cs_1\nretrieve: false\noperations: 2\n\n--- 0\nPOST http://h/acct/t\ncontent-id: \"\"\nheader Prefer: \"return-no-content\"\nbody: \"{\\\"PartitionKey\\\":\\\"p\\\",\\\"RowKey\\\":\\\"r\\\"}\"\n\n--- 1\nDELETE http://h/acct/t(PartitionKey='p',RowKey='r')\ncontent-id: \"\"\nheader If-Match: \"*\"\nbody: \"\"\n",
	}, {
		name: "CRLF, preamble, epilogue, padding, quoted boundary",
		ct:   `multipart/mixed; boundary="batch_1"`,
		body: crlf("This is a preamble.\n" + strings.Replace(csStart, "--batch_1\n", "--batch_1 \t\n", 1) +
			"ignored changeset preamble\n" + insert + del + "--cs_1-- trailing\nepilogue\n--batch_1--\nmore epilogue\n--batch_1\n"),
		want: "operations: 2",
	}, {
		name: "missing close delimiters (old JS)",
		body: csStart + insert + del,
		want: "operations: 2",
	}, {
		name: "missing outer close only",
		body: csStart + insert + "--cs_1--\n",
		want: "operations: 1",
	}, {
		name: "JS extra blank lines, lower-case headers",
		body: crlf("--batch_1\ncontent-type: multipart/mixed; boundary=cs_1\n\n\n--cs_1\ncontent-type: application/http\ncontent-transfer-encoding: binary\n\nPUT http://h/acct/t(PartitionKey='p',RowKey='r') HTTP/1.1\ncontent-type: application/json\nif-match: *\n\n\n{\"a\":1}\n\n\n--cs_1--\n--batch_1--\n"),
		want: "header Content-Type: \"application/json\"\nheader If-Match: \"*\"\nbody: \"{\\\"a\\\":1}\"\n",
	}, {
		name: "legacy content-id inside the sub-request, MERGE, folded header",
		body: csStart + "--cs_1\nContent-Type: application/http\n\nMERGE /t(PartitionKey='p',RowKey='r') HTTP/1.1\ncontent-id: 7\nX-Long: a\n  b\n\n{}\n" + csEnd,
		want: "MERGE /t(PartitionKey='p',RowKey='r')\ncontent-id: \"7\"\nheader Content-Id: \"7\"\nheader X-Long: \"a b\"\nbody: \"{}\"\n",
	}, {
		name: "MIME Content-ID wins, no version, no blank line before delimiter",
		body: csStart + "--cs_1\nContent-Type: application/http\nContent-ID: 3\n\nDELETE t(PartitionKey='p',RowKey='r')\nContent-ID: 9\nIf-Match: *\n" + csEnd,
		want: "DELETE t(PartitionKey='p',RowKey='r')\ncontent-id: \"3\"\n",
	}, {
		name: "empty changeset",
		body: csStart + csEnd,
		want: "changeset: cs_1\nretrieve: false\noperations: 0\n",
	}, {
		name: "retrieve batch",
		body: "--batch_1\nContent-Type: application/http\nContent-Transfer-Encoding: binary\n\nGET http://h/acct/t(PartitionKey='p',RowKey='r') HTTP/1.1\nAccept: application/json;odata=minimalmetadata\n\n--batch_1--\n",
		want: "changeset: \nretrieve: true\noperations: 1\n\n--- 0\nGET http://h/acct/t(PartitionKey='p',RowKey='r')\n",
	}, {
		name: "boundary sharing a prefix with the changeset boundary",
		ct:   "multipart/mixed; boundary=b",
		body: "--b\nContent-Type: multipart/mixed; boundary=bb\n\n--bb\n\nDELETE /t(PartitionKey='p',RowKey='r')\n\n--bb--\n--b--\n",
		want: "operations: 1",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ct == "" {
				tc.ct = testCT
			}
			r, err := Parse(tc.ct, []byte(tc.body), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if got := dump(r); !strings.Contains(got, tc.want) {
				t.Errorf("got\n%s\nwant it to contain\n%s", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	many := func(n int) string {
		return csStart + strings.Repeat(del, n) + csEnd
	}
	tests := []struct {
		name, ct, body string
		lim            Limits
		code           azerr.Code
		index          int // -1: whole-request error
		msg            string
	}{
		{name: "not multipart", ct: "application/json", body: "{}", code: azerr.InvalidInput, index: -1},
		{name: "no boundary", ct: "multipart/mixed", body: csStart + csEnd, code: azerr.InvalidInput, index: -1},
		{name: "garbage content type", ct: "multipart/mixed; boundary=", body: csStart, code: azerr.InvalidInput, index: -1},
		{name: "huge boundary", ct: "multipart/mixed; boundary=" + strings.Repeat("x", 5000), body: csStart, code: azerr.InvalidInput, index: -1},
		{name: "body too large", body: csStart + strings.Repeat(" ", 100) + csEnd, lim: Limits{MaxBodyBytes: 64}, code: azerr.RequestBodyTooLarge, index: -1},
		{name: "no delimiter", body: "hello\n", code: azerr.InvalidInput, index: -1},
		{name: "empty batch", body: "--batch_1--\n", code: azerr.InvalidInput, index: -1},
		{name: "two changesets", body: csStart + del + "--cs_1--\n" + csStart + del + csEnd, code: azerr.InvalidInput, index: -1},
		{name: "text part", body: "--batch_1\nContent-Type: text/plain\n\nhi\n--batch_1--\n", code: azerr.InvalidInput, index: -1},
		{name: "retrieve of a POST", body: "--batch_1\nContent-Type: application/http\n\nPOST /t HTTP/1.1\n\n{}\n--batch_1--\n", code: azerr.InvalidInput, index: -1},
		{name: "changeset without boundary", body: "--batch_1\nContent-Type: multipart/mixed\n\n--cs_1--\n--batch_1--\n", code: azerr.InvalidInput, index: -1},
		{name: "changeset without delimiter", body: "--batch_1\nContent-Type: multipart/mixed; boundary=cs_1\n\nstuff\n--batch_1--\n", code: azerr.InvalidInput, index: -1},
		{name: "unterminated part headers", body: "--batch_1\nContent-Type: multipart/mixed; boundary=cs_1\n" + strings.Repeat("X-A: b\n", 200), code: azerr.InvalidInput, index: -1},
		{name: "nested changeset", body: csStart + del + "--cs_1\nContent-Type: multipart/mixed; boundary=cs_2\n\n--cs_2\n\nDELETE /t HTTP/1.1\n\n--cs_2--\n" + csEnd, code: azerr.InvalidInput, index: 1},
		{name: "GET in changeset", body: csStart + del + del + "--cs_1\n\nGET /t HTTP/1.1\n\n" + csEnd, code: azerr.InvalidInput, index: 2},
		{name: "empty operation", body: csStart + del + "--cs_1\n\n\n" + csEnd, code: azerr.InvalidInput, index: 1},
		{name: "malformed method", body: csStart + "--cs_1\n\nPO(ST /t HTTP/1.1\n\n" + csEnd, code: azerr.InvalidInput, index: 0},
		{name: "control character in URL", body: csStart + "--cs_1\n\nPOST /t\x00 HTTP/1.1\n\n" + csEnd, code: azerr.InvalidInput, index: 0},
		{name: "control character in a header value", body: csStart + "--cs_1\n\nPOST /t HTTP/1.1\nA: b\x00\n\n{}\n" + csEnd, code: azerr.InvalidInput, index: 0},
		{name: "control character in a folded header value", body: csStart + "--cs_1\n\nPOST /t HTTP/1.1\nA: b\n c\x00\n\n{}\n" + csEnd, code: azerr.InvalidInput, index: 0},
		{name: "malformed sub-request header", body: csStart + "--cs_1\n\nPOST /t HTTP/1.1\nno colon here\n\n{}\n" + csEnd, code: azerr.InvalidInput, index: 0},
		{name: "too many headers", body: csStart + "--cs_1\n\nPOST /t HTTP/1.1\n" + strings.Repeat("A: b\n", 101) + "\n" + csEnd, code: azerr.InvalidInput, index: 0},
		{name: "header block too large", body: csStart + "--cs_1\n\nPOST /t HTTP/1.1\nA: " + strings.Repeat("b", 40<<10) + "\n\n" + csEnd, code: azerr.InvalidInput, index: 0},
		{name: "101 operations", body: many(101), code: azerr.InvalidInput, index: 99,
			msg: "The batch request operation exceeds the maximum 100 changes per change set."},
		{name: "10,000 parts", body: many(10000), code: azerr.InvalidInput, index: 99},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ct == "" {
				tc.ct = testCT
			}
			r, err := Parse(tc.ct, []byte(tc.body), tc.lim)
			if err == nil {
				t.Fatalf("no error; got\n%s", dump(r))
			}
			if !azerr.Is(err, tc.code) {
				t.Fatalf("error %v, want code %s", err, tc.code)
			}
			var oe *OpError
			switch {
			case tc.index < 0 && errors.As(err, &oe):
				t.Errorf("got operation error %v, want a whole-request error", err)
			case tc.index >= 0 && !errors.As(err, &oe):
				t.Errorf("got whole-request error %v, want operation %d", err, tc.index)
			case tc.index >= 0 && oe.Index != tc.index:
				t.Errorf("index %d, want %d", oe.Index, tc.index)
			}
			if tc.msg != "" && azerr.From(err).Message() != tc.msg {
				t.Errorf("message %q, want %q", azerr.From(err).Message(), tc.msg)
			}
		})
	}
}

// TestParseExactly100 checks the limit is inclusive.
func TestParseExactly100(t *testing.T) {
	r, err := Parse(testCT, []byte(csStart+strings.Repeat(del, 100)+csEnd), Limits{})
	if err != nil || len(r.Operations) != 100 {
		t.Fatalf("got %v ops, %v", r, err)
	}
}

// TestParseHostileAllocs bounds allocation for hostile part counts: the part cap is hit before
// any per-part work, so 10,000 parts cost no more than 101.
func TestParseHostileAllocs(t *testing.T) {
	body := []byte(csStart + strings.Repeat("--cs_1\n", 10000) + csEnd)
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := Parse(testCT, body, Limits{}); err == nil {
			t.Fatal("accepted 10,000 parts")
		}
	})
	if allocs > 60 {
		t.Errorf("%v allocations for a 10,000-part body", allocs)
	}
}

// TestParseRequestLine: the version is cut at the last blank, whatever the target's length,
// and a target without a version is kept whole.
func TestParseRequestLine(t *testing.T) {
	for line, want := range map[string]string{
		"GET / HTTP/1.1":        "/",
		"GET /t HTTP/1.1":       "/t",
		"GET /a b HTTP/1.1":     "/a b",
		"GET HTTP/x":            "HTTP/x",
		"GET  /t  HTTP/1.1  ":   "/t",
		"MERGE /t(PK='a') ":     "/t(PK='a')",
		"GET http://h/t HTTP/1": "http://h/t",
	} {
		_, target, err := parseRequestLine(line)
		if err != nil || target != want {
			t.Errorf("%q: target %q (%v), want %q", line, target, err, want)
		}
	}
}
