package batch

import (
	"bytes"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// equalRequests reports whether two parsed requests carry the same operations.
func equalRequests(a, b *Request) bool {
	if a.Boundary != b.Boundary || a.ChangesetBoundary != b.ChangesetBoundary ||
		a.Retrieve != b.Retrieve || len(a.Operations) != len(b.Operations) {
		return false
	}
	for i := range a.Operations {
		x, y := a.Operations[i], b.Operations[i]
		if x.Method != y.Method || x.URL != y.URL || x.ContentID != y.ContentID ||
			!bytes.Equal(x.Body, y.Body) || !reflect.DeepEqual(x.Header, y.Header) {
			return false
		}
	}
	return true
}

// TestRoundTrip renders requests with the test writer and parses them back.
func TestRoundTrip(t *testing.T) {
	reqs := []*Request{{
		Boundary: "batch_x", ChangesetBoundary: "changeset_y",
		Operations: []Operation{
			{Method: "POST", URL: "http://h/acct/t", ContentID: "0",
				Header: http.Header{"Prefer": {"return-no-content"}, "Dataserviceversion": {""}},
				Body:   []byte(`{"PartitionKey":"p","RowKey":"r"}`)},
			{Method: "MERGE", URL: "/t(PartitionKey='p',RowKey='o''neil')",
				Header: http.Header{"If-Match": {`W/"datetime'2025-01-01T00%3A00%3A01Z'"`}}, Body: []byte(`{}`)},
			{Method: "DELETE", URL: "t(PartitionKey='p',RowKey='x y')", Header: http.Header{"A": {"1", "2"}}, Body: []byte{}},
		},
	}, {
		Boundary: "b", ChangesetBoundary: "c", Operations: []Operation{},
	}, {
		Boundary: "b", Retrieve: true,
		Operations: []Operation{{Method: "GET", URL: "/t(PartitionKey='p',RowKey='r')", Header: http.Header{}, Body: []byte{}}},
	}}
	for _, path := range samplePaths(t) {
		ct, body := readSample(t, path)
		r, err := Parse(ct, body, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r)
	}
	for i, want := range reqs {
		got, err := Parse(ResponseContentType(want.Boundary), renderRequest(want), Limits{})
		if err != nil {
			t.Fatalf("request %d: %v\n%s", i, err, renderRequest(want))
		}
		if !equalRequests(got, want) {
			t.Errorf("request %d:\n--- got\n%s\n--- want\n%s", i, dump(got), dump(want))
		}
		// LF-only rendering parses to the same operations.
		lf := strings.ReplaceAll(string(renderRequest(want)), "\r\n", "\n")
		if got, err := Parse(ResponseContentType(want.Boundary), []byte(lf), Limits{}); err != nil || !equalRequests(got, want) {
			t.Errorf("request %d with LF line endings: %v", i, err)
		}
	}
}
