package batch

import (
	"fmt"
	"strings"
	"testing"
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
