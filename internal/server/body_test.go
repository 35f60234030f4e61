package server_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBodyWithoutLength: a request body sent without Content-Length (chunked) is read in
// full, and one beyond the entity limit is RequestBodyTooLarge, not a partial write.
func TestBodyWithoutLength(t *testing.T) {
	h := newBenchServer(t)
	unsized := func(method, path, body string) *httptest.ResponseRecorder {
		r := signed(method, path, body, nil)
		r.ContentLength = -1
		r.Body = io.NopCloser(strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	entity := `{"PartitionKey":"p","RowKey":"chunked"` + benchEntity
	if rec := unsized("POST", "/devstoreaccount1/bench", entity); rec.Code != 201 || !strings.Contains(rec.Body.String(), `"RowKey":"chunked"`) {
		t.Fatalf("insert without Content-Length: %d %s", rec.Code, rec.Body)
	}
	huge := `{"PartitionKey":"p","RowKey":"huge","Data":"` + strings.Repeat("x", 4<<20) + `"}`
	rec := unsized("PUT", "/devstoreaccount1/bench(PartitionKey='p',RowKey='huge')", huge)
	if rec.Code != 413 || rec.Header().Get("x-ms-error-code") != "RequestBodyTooLarge" {
		t.Fatalf("oversized body without Content-Length: %d %s %s", rec.Code, rec.Header().Get("x-ms-error-code"), rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, signed("GET", "/devstoreaccount1/bench(PartitionKey='p',RowKey='huge')", "", nil))
	if rec.Code != 404 {
		t.Fatalf("the oversized entity was written: %d", rec.Code)
	}
}
