package batch

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// headerOp is one changeset operation whose sub-request carries hdr (lines ending in \n).
func headerOp(hdr string) string {
	return csStart + "--cs_1\nContent-Type: application/http\n\nPOST /t HTTP/1.1\n" + hdr + "\n{}\n" + csEnd
}

// TestHeaderFieldCountAtLimit: a header block of exactly MaxHeaders fields is read, one more
// is refused.
func TestHeaderFieldCountAtLimit(t *testing.T) {
	fields := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "X-F%d: %d\n", i, i)
		}
		return b.String()
	}
	lim := Limits{MaxHeaders: 5}
	if _, err := Parse(testCT, []byte(headerOp(fields(5))), lim); err != nil {
		t.Fatalf("5 fields with a limit of 5: %v", err)
	}
	if _, err := Parse(testCT, []byte(headerOp(fields(6))), lim); err == nil {
		t.Fatal("6 fields with a limit of 5 accepted")
	}
}

// TestHeaderFieldNameEdges: blanks between a field name and its colon are dropped; a line
// with no name before the colon is refused (not a crash); an all-blank value is empty.
func TestHeaderFieldNameEdges(t *testing.T) {
	r, err := Parse(testCT, []byte(headerOp("Prefer \t: return-no-content \t\nX-Empty:   \n")), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	h := r.Operations[0].Header
	if got := h.Get("Prefer"); got != "return-no-content" {
		t.Fatalf("Prefer = %q (header %v)", got, h)
	}
	if v, ok := h["X-Empty"]; !ok || len(v) != 1 || v[0] != "" {
		t.Fatalf("X-Empty = %q, %v", v, ok)
	}
	if _, err := Parse(testCT, []byte(headerOp(": value\n")), Limits{}); err == nil {
		t.Fatal("a field without a name accepted")
	}
}

// TestTruncatedAfterContentLength: a body cut off right after the Content-Length digits of a
// sub-request whose header block otherwise repeats the previous one is read without a crash,
// and the cut block keeps its own length.
func TestTruncatedAfterContentLength(t *testing.T) {
	op := "--cs_1\nContent-Type: application/http\n\nPOST /t HTTP/1.1\nContent-Length: 2\n\n{}\n"
	body := csStart + op + "--cs_1\nContent-Type: application/http\n\nPOST /t HTTP/1.1\nContent-Length: 12"
	r, err := Parse(testCT, []byte(body), Limits{})
	if err == nil && (len(r.Operations) != 2 || r.Operations[1].Header.Get("Content-Length") != "12") {
		t.Fatalf("cut block read as %+v", r.Operations)
	}
}

// TestTrailingBlankPartDropped: without a close delimiter, a last part of only whitespace is
// dropped and a last part with content is kept.
func TestTrailingBlankPartDropped(t *testing.T) {
	for data, want := range map[string]int{
		"--b\r\nA\r\n--b\r\n \t\r\n": 1,
		"--b\r\nA\r\n--b\r\n":        1,
		"--b\r\nA\r\n--b\r\n x\r\n":  2,
	} {
		parts, err := splitMultipart([]byte(data), "b", 10, nil)
		if err != nil || len(parts) != want {
			t.Errorf("%q: %d parts %q, %v; want %d", data, len(parts), parts, err, want)
		}
	}
}

// TestPartContentExcludesDelimiterLineBreak: the CRLF or LF before a delimiter belongs to
// the delimiter, exactly one of them; a part may itself end in other line breaks.
func TestPartContentExcludesDelimiterLineBreak(t *testing.T) {
	for data, want := range map[string]string{
		"--b\r\nA\r\n--b--":     "A",
		"--b\nA\n--b--":         "A",
		"--b\r\nA\r\r\n--b--":   "A\r",
		"--b\r\nA\n\r\n--b--":   "A\n",
		"--b\r\n\r\n--b--":      "",
		"--b\r\nA\r\n\r\n--b--": "A\r\n",
	} {
		parts, err := splitMultipart([]byte(data), "b", 10, nil)
		if err != nil || len(parts) != 1 || string(parts[0]) != want {
			t.Errorf("%q: %q, %v; want %q", data, parts, err, want)
		}
	}
}

// TestDelimiterLineEdges: a delimiter line may start the data after a bare LF (an empty
// preamble line), may follow the previous delimiter line directly (an empty part), and may
// end the data without a line break (old JS clients omit close delimiters).
func TestDelimiterLineEdges(t *testing.T) {
	for _, tc := range []struct {
		data string
		want []string
	}{
		{"\n--b\nA\n--b--", []string{"A"}},
		{"\r\n--b\r\nA\r\n--b--", []string{"A"}},
		{"--b\n--b\nA\n--b--", []string{"", "A"}},
		{"--b\r\nA\r\n--b", []string{"A"}},
		{"--b\r\nA\r\n--b \t", []string{"A"}},
		{"--b\r\nA\r\n--b\r", []string{"A"}},
	} {
		parts, err := splitMultipart([]byte(tc.data), "b", 10, nil)
		got := make([]string, len(parts))
		for i, p := range parts {
			got[i] = string(p)
		}
		if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("%q: %q, %v; want %q", tc.data, got, err, tc.want)
		}
	}
	// Through Parse: a changeset whose last delimiter is a plain one ending its content.
	body := csStart + insert + "--cs_1\n--batch_1--\n"
	r, err := Parse(testCT, []byte(body), Limits{})
	if err != nil || len(r.Operations) != 1 || r.Operations[0].Method != "POST" {
		t.Fatalf("changeset ending in a plain delimiter: %v, %v", r, err)
	}
}

// TestBodySizeAtLimit: a body of exactly MaxBodyBytes is parsed, one byte more is
// RequestBodyTooLarge.
func TestBodySizeAtLimit(t *testing.T) {
	body := csStart + insert + csEnd
	if _, err := Parse(testCT, []byte(body), Limits{MaxBodyBytes: len(body)}); err != nil {
		t.Fatalf("body of exactly the limit: %v", err)
	}
	if _, err := Parse(testCT, []byte(body+" "), Limits{MaxBodyBytes: len(body)}); !azerr.Is(err, azerr.RequestBodyTooLarge) {
		t.Fatalf("body one byte past the limit: %v", err)
	}
}

// TestRetrieveResponseRejectsBrokenFraming: the retrieve form refuses what the changeset
// form refuses (a line break in a header value, a delimiter in the body), writing nothing.
func TestRetrieveResponseRejectsBrokenFraming(t *testing.T) {
	for _, sub := range []SubResponse{
		Retrieved("x\r\nInjected: 1", JSONMinimalMetadata, []byte("{}")),
		Retrieved(`W/"x"`, JSONMinimalMetadata, []byte("{}\r\n--b--")),
		{Status: 0},
	} {
		var b bytes.Buffer
		if err := WriteRetrieveResponse(&b, "b", sub); err == nil || b.Len() != 0 {
			t.Errorf("%+v: err %v, wrote %q", sub, err, b.Bytes())
		}
	}
	var b bytes.Buffer
	if err := WriteRetrieveResponse(&b, "b", Retrieved(`W/"x"`, JSONMinimalMetadata, []byte("{}"))); err != nil {
		t.Fatalf("well-formed retrieve response refused: %v", err)
	}
}

// TestChangesetWriterNamesBrokenSubResponse: the error of a sub-response that would break
// the framing (a server bug, logged) names its position in the changeset.
func TestChangesetWriterNamesBrokenSubResponse(t *testing.T) {
	for _, viaInsert := range []bool{false, true} {
		w := NewChangesetWriter(nil, "b", "c")
		d := Deleted()
		w.Write(&d)
		w.WriteInsertedNoContent([]byte("http://h/t(PartitionKey='p',RowKey='r')"), `W/"x"`)
		if viaInsert {
			w.WriteInsertedNoContent([]byte("http://h/t\r\nInjected: 1"), `W/"x"`)
		} else {
			u := Updated("x\nInjected: 1")
			w.Write(&u)
		}
		if _, err := w.Finish(); err == nil || !strings.Contains(err.Error(), "sub-response 2:") {
			t.Errorf("insert %v: error %v, want it to name sub-response 2", viaInsert, err)
		}
	}
}

// TestTokenCharacterEdges: method and header names may use every letter and digit,
// the ends of each range included; request lines may carry extra blanks around the target.
func TestTokenCharacterEdges(t *testing.T) {
	body := csStart + "--cs_1\nContent-Type: application/http\n\nPOST \t /t  \t HTTP/1.1 \nXaz-AZ09: v\n\n{}\n" + csEnd
	r, err := Parse(testCT, []byte(body), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	op := r.Operations[0]
	if op.Method != "POST" || op.URL != "/t" || op.Header.Get("Xaz-Az09") != "v" {
		t.Fatalf("got %q %q %v", op.Method, op.URL, op.Header)
	}
}

// TestRequestBoundaryAtLimit: a request boundary of RFC 2046's maximum, 70 characters, is
// accepted, one of 71 is not.
func TestRequestBoundaryAtLimit(t *testing.T) {
	for n, ok := range map[int]bool{70: true, 71: false} {
		b := strings.Repeat("b", n)
		body := strings.ReplaceAll(csStart+del+csEnd, "batch_1", b)
		_, err := Parse("multipart/mixed; boundary="+b, []byte(body), Limits{})
		if (err == nil) != ok {
			t.Errorf("boundary of %d characters: %v", n, err)
		}
	}
}
