package batch

import (
	"bytes"
	"net/http"
	"net/textproto"
	"reflect"
	"strings"
	"testing"
)

func TestCanonicalKey(t *testing.T) {
	for _, name := range []string{
		"accept", "ACCEPT", "Accept", "content-type", "CONTENT-ID", "content-id", "DataServiceVersion",
		"MaxDataServiceVersion", "x-ms-version", "X-MS-DATE", "x-ms-client-request-id", "if-match",
		"Content-Transfer-Encoding", "content-length", "accept-charset", "user-agent", "prefer", "date",
		"host", "x-long", "X", "a-b-c", "foo_bar", "x-ms-" + strings.Repeat("a", 40), "Acceps", "Content-Idx",
	} {
		if got, want := canonicalKey([]byte(name)), textproto.CanonicalMIMEHeaderKey(name); got != want {
			t.Errorf("canonicalKey(%q) = %q, want %q", name, got, want)
		}
	}
}

// FuzzCanonicalKey checks canonicalKey against net/textproto for every valid field name.
func FuzzCanonicalKey(f *testing.F) {
	f.Add("content-type")
	f.Add("x-MS-version")
	f.Fuzz(func(t *testing.T, name string) {
		if !validFieldName(name) {
			return
		}
		if got, want := canonicalKey([]byte(name)), textproto.CanonicalMIMEHeaderKey(name); got != want {
			t.Fatalf("canonicalKey(%q) = %q, want %q", name, got, want)
		}
	})
}

// TestHeaderCache checks that only byte-identical, properly ended header blocks share their
// parsed result, and that sharing never changes what an operation sees.
func TestHeaderCache(t *testing.T) {
	op := func(hdr string) string {
		return "--cs_1\nContent-Type: application/http\n\nPOST /t HTTP/1.1\n" + hdr + "{}\n"
	}
	body := csStart +
		op("Prefer: return-no-content\nA: 1\n\n") +
		op("Prefer: return-no-content\nA: 1\n\n") + // identical: shared
		op("Prefer: return-no-content\nA: 1\nB: 2\n\n") + // longer: parsed afresh
		op("prefer: return-no-content\nA: 1\n\n") + // differs in case only: parsed afresh
		"--cs_1\nContent-Type: application/http\n\nPOST /t HTTP/1.1\nPrefer: return-no-content\nA: 1\n" + // ends with the data
		csEnd
	r, err := Parse(testCT, []byte(body), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ops := r.Operations
	if len(ops) != 5 {
		t.Fatalf("%d operations", len(ops))
	}
	same := func(a, b http.Header) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	if !same(ops[0].Header, ops[1].Header) {
		t.Error("identical header blocks do not share their map")
	}
	for _, i := range []int{2, 3, 4} {
		if same(ops[0].Header, ops[i].Header) {
			t.Errorf("op %d shares the map of a different block", i)
		}
	}
	want := []http.Header{
		{"Prefer": {"return-no-content"}, "A": {"1"}},
		{"Prefer": {"return-no-content"}, "A": {"1"}},
		{"Prefer": {"return-no-content"}, "A": {"1"}, "B": {"2"}},
		{"Prefer": {"return-no-content"}, "A": {"1"}},
		{"Prefer": {"return-no-content"}, "A": {"1"}},
	}
	for i, w := range want {
		if !reflect.DeepEqual(ops[i].Header, w) {
			t.Errorf("op %d: header %v, want %v", i, ops[i].Header, w)
		}
		if ops[i].BodyText != string(ops[i].Body) {
			t.Errorf("op %d: BodyText %q, Body %q", i, ops[i].BodyText, ops[i].Body)
		}
	}
	if string(ops[4].Body) != "" {
		t.Errorf("op 4: body %q", ops[4].Body)
	}
}

// TestHeaderCacheContentLength checks the cache's second kind of hit, blocks that differ
// only in their Content-Length digits (what Go aztables sends for entities of different
// sizes): every operation must see exactly the header a batch of its own would give it.
func TestHeaderCacheContentLength(t *testing.T) {
	blocks := []string{
		"A: 1\nContent-Length: 12\nB: 2\n\n",
		"A: 1\nContent-Length: 7\nB: 2\n\n",   // fewer digits: a copy with its own length
		"A: 1\nContent-Length: 9\nB: 2\n\n",   // as many digits
		"A: 1\nContent-Length: 123\nB: 2\n\n", // more digits: parsed afresh
		"A: 1\nContent-Length: 5\nB: 3\n\n",   // another field differs: parsed afresh
		"A: 1\nContent-Length: 5 \nB: 3\n\n",  // a blank after the digits
		"A: 1\ncontent-length: 6\nB: 3\n\n",   // another spelling: no length span
		"A: 1\nContent-Length: 6\nB: 3\n\n",
		"A: 1\nContent-Length: 6\n 7\nB: 3\n\n", // folded: "6 7"
		"A: 1\nContent-Length: 8\nContent-Length: 8\n\n",
		"A: 1\nContent-Length: 9\nContent-Length: 8\n\n",
		"Content-Length: 10\n\n", // at the start of the block
		"Content-Length: 11\n\n",
		"Content-Length: 12\nA: 1\n\n",
	}
	op := func(hdr string) string {
		return "--cs_1\nContent-Type: application/http\n\nPOST /t HTTP/1.1\n" + hdr + "{}\n"
	}
	var all strings.Builder
	all.WriteString(csStart)
	for _, b := range blocks {
		all.WriteString(op(b))
	}
	all.WriteString(csEnd)
	r, err := Parse(testCT, []byte(all.String()), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Operations) != len(blocks) {
		t.Fatalf("%d operations", len(r.Operations))
	}
	for i, b := range blocks {
		alone, err := Parse(testCT, []byte(csStart+op(b)+csEnd), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := r.Operations[i].Header, alone.Operations[0].Header; !reflect.DeepEqual(got, want) {
			t.Errorf("op %d: header %q, want %q", i, got, want)
		}
	}
	if got := r.Operations[0].Header.Get("Content-Length"); got != "12" {
		t.Errorf("op 0's Content-Length changed to %q by a later op", got)
	}
	// Ops 1 and 2 differ from the op before only in the length digits, so the cache serves
	// them: their other values are the very slices of op 0's map. A fresh parse makes new ones.
	ops := r.Operations
	for _, i := range []int{1, 2} {
		if &ops[i].Header["A"][0] != &ops[0].Header["A"][0] {
			t.Errorf("op %d: parsed afresh, not served by the header cache", i)
		}
	}
	if &ops[3].Header["A"][0] == &ops[0].Header["A"][0] {
		t.Error("op 3 (a longer length) was served by the cache")
	}
}

// TestRepeatedHeaderField checks that a field sent twice keeps both values in order, also
// when its block is shared.
func TestRepeatedHeaderField(t *testing.T) {
	part := "--cs_1\n\nDELETE /t(PartitionKey='p',RowKey='r') HTTP/1.1\nIf-Match: *\nX: a\nif-match: W/\"x\"\n\n"
	r, err := Parse(testCT, []byte(csStart+part+part+csEnd), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for i, op := range r.Operations {
		if got := op.Header.Values("If-Match"); !reflect.DeepEqual(got, []string{"*", `W/"x"`}) {
			t.Errorf("op %d: If-Match %q", i, got)
		}
	}
}

// TestAppendResponse checks AppendResponse writes what WriteResponse writes, after dst.
func TestAppendResponse(t *testing.T) {
	for _, tc := range responseCases {
		if tc.retrieve {
			var w bytes.Buffer
			if err := WriteRetrieveResponse(&w, tc.batch, tc.subs[0]); err != nil {
				t.Fatal(err)
			}
			got, err := AppendRetrieveResponse([]byte("x"), tc.batch, tc.subs[0])
			if err != nil || string(got) != "x"+w.String() {
				t.Errorf("%s: AppendRetrieveResponse = %q, %v", tc.name, got, err)
			}
			continue
		}
		var w bytes.Buffer
		if err := WriteResponse(&w, tc.batch, tc.change, tc.subs); err != nil {
			t.Fatal(err)
		}
		got, err := AppendResponse([]byte("x"), tc.batch, tc.change, tc.subs)
		if err != nil || string(got) != "x"+w.String() {
			t.Errorf("%s: AppendResponse = %q, %v", tc.name, got, err)
		}
	}
	// A server bug leaves dst as it was.
	for _, tc := range []struct {
		name, batch, change string
		subs                []SubResponse
	}{
		{"line break in a field", "b", "c", []SubResponse{{Status: 204, ETag: "a\nb"}}},
		{"no changeset boundary", "b", "", nil},
		{"unknown status", "b", "c", []SubResponse{{Status: 299}}},
		{"delimiter in a body", "b", "c", []SubResponse{{Status: 200, Body: []byte("x\n--c")}}},
	} {
		got, err := AppendResponse([]byte("x"), tc.batch, tc.change, tc.subs)
		if err == nil || string(got) != "x" {
			t.Errorf("%s: %q, %v", tc.name, got, err)
		}
	}
}

// TestEqualFoldASCII compares every pair of ASCII bytes with strings.EqualFold: each letter,
// 'A' and 'Z' included, matches its other case and nothing else.
func TestEqualFoldASCII(t *testing.T) {
	for a := 0; a < 128; a++ {
		for b := 0; b < 128; b++ {
			x, y := string(rune(a)), string(rune(b))
			if got, want := equalFoldASCII([]byte(x), y), strings.EqualFold(x, y); got != want {
				t.Fatalf("equalFoldASCII(%q, %q) = %v, want %v", x, y, got, want)
			}
		}
	}
}

// TestStringArenaAllocs checks what the arena is for: one-element slices for a header map
// cost one allocation per 128 values, not one per value.
func TestStringArenaAllocs(t *testing.T) {
	allocs := testing.AllocsPerRun(10, func() {
		var a stringArena
		for range 128 {
			a.one("v")
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations for 128 values, want 1", allocs)
	}
	var a stringArena
	x, y := a.one("x"), a.one("y")
	if x = append(x, "z"); y[0] != "y" || x[0] != "x" {
		t.Errorf("appending to one value overwrote its neighbour: %q %q", x, y)
	}
}
