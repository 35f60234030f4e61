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
