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
