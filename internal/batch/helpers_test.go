package batch

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// readSample loads a captured SDK request (testdata/requests/*.http) and returns its
// Content-Type and body.
func readSample(t testing.TB, path string) (string, []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatalf("%s: body: %v", path, err)
	}
	return req.Header.Get("Content-Type"), body
}

// samplePaths lists the captured requests.
func samplePaths(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "requests", "*.http"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	return paths
}

// dump renders a parsed request as stable, reviewable text (header keys sorted, values
// quoted so empty ones show).
func dump(r *Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "boundary: %s\nchangeset: %s\nretrieve: %v\noperations: %d\n",
		r.Boundary, r.ChangesetBoundary, r.Retrieve, len(r.Operations))
	for i, op := range r.Operations {
		fmt.Fprintf(&b, "\n--- %d\n%s %s\ncontent-id: %q\n", i, op.Method, op.URL, op.ContentID)
		keys := make([]string, 0, len(op.Header))
		for k := range op.Header {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			for _, v := range op.Header[k] {
				fmt.Fprintf(&b, "header %s: %q\n", k, v)
			}
		}
		fmt.Fprintf(&b, "body: %q\n", op.Body)
	}
	return b.String()
}

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// renderRequest writes r back as a $batch body (CRLF, Content-ID at the MIME level): the
// inverse of Parse, used by round-trip tests.
func renderRequest(r *Request) []byte {
	var b bytes.Buffer
	writeOp := func(op *Operation) {
		b.WriteString("Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n")
		if op.ContentID != "" {
			b.WriteString("Content-ID: " + op.ContentID + "\r\n")
		}
		b.WriteString("\r\n" + op.Method + " " + op.URL + " HTTP/1.1\r\n")
		keys := make([]string, 0, len(op.Header))
		for k := range op.Header {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			for _, v := range op.Header[k] {
				b.WriteString(k + ": " + v + "\r\n")
			}
		}
		b.WriteString("\r\n")
		b.Write(op.Body)
		b.WriteString("\r\n")
	}
	b.WriteString("--" + r.Boundary + "\r\n")
	if r.Retrieve {
		writeOp(&r.Operations[0])
	} else {
		b.WriteString("Content-Type: multipart/mixed; boundary=" + r.ChangesetBoundary + "\r\n\r\n")
		for i := range r.Operations {
			b.WriteString("--" + r.ChangesetBoundary + "\r\n")
			writeOp(&r.Operations[i])
		}
		b.WriteString("--" + r.ChangesetBoundary + "--\r\n")
	}
	b.WriteString("--" + r.Boundary + "--\r\n")
	return b.Bytes()
}
