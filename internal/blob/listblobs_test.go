package blob

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// listNames renders a page: prefixes with a trailing "(prefix)", snapshots with "@", staged
// only blobs with "(uncommitted)".
func listNames(items []ListItem) []string {
	var out []string
	for _, it := range items {
		switch {
		case it.Blob == nil:
			out = append(out, it.Prefix+"(prefix)")
		case it.Blob.Snapshot != 0:
			out = append(out, it.Blob.Name+"@")
		case it.Blob.Created == 0:
			out = append(out, it.Blob.Name+"(uncommitted)")
		default:
			out = append(out, it.Blob.Name)
		}
	}
	return out
}

// listAll follows the markers of List Blobs with pages of max.
func listAll(t *testing.T, s *Service, q ListRequest) []string {
	t.Helper()
	var out []string
	for range 100 {
		items, next, err := s.List(context.Background(), "a", "ccc", q)
		if err != nil {
			t.Fatal(err)
		}
		if q.Max > 0 && len(items) > q.Max && !q.Uncommitted || next != "" && len(items) < q.Max {
			t.Errorf("%+v: a page of %d items, next %q", q, len(items), next)
		}
		out = append(out, listNames(items)...)
		if q.Marker = next; next == "" {
			return out
		}
	}
	t.Fatalf("%+v: no end of pages", q)
	return nil
}

// List Blobs: name order (UTF-8 bytes) with snapshots before their blob, a prefix, a
// delimiter folding names into BlobPrefix entries (counted in max like blobs), staged-only
// blobs merged in as empty block blobs, and pages of any size that chain through the marker
// without loss or repeat.
func TestListBlobs(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateContainer(ctx, "a", "ccd", "", nil); err != nil {
		t.Fatal(err)
	}
	put := func(c, name string) {
		t.Helper()
		if _, err := s.Put(ctx, Ref{Account: "a", Container: c, Name: name}, PutRequest{Type: BlockBlob, Body: body([]byte(name))}); err != nil {
			t.Fatal(err)
		}
	}
	stage := func(name string) {
		t.Helper()
		if _, err := s.PutBlock(ctx, Ref{Account: "a", Container: "ccc", Name: name}, "QUFB", body([]byte("x")), Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"b", "a/1", "a/2", "a/b/3", "c", "é", "a0"} {
		put("ccc", n)
	}
	put("ccd", "other")
	if _, _, err := s.Snapshot(ctx, Ref{Account: "a", Container: "ccc", Name: "b"}, nil, false, Cond{}); err != nil {
		t.Fatal(err)
	}
	stage("bb")  // staged only
	stage("a/s") // staged only, under a prefix
	stage("c")   // staged on a committed blob
	stage("zz")  // staged only, last

	flat := []string{"a/1", "a/2", "a/b/3", "a0", "b", "c", "é"}
	withSnaps := []string{"a/1", "a/2", "a/b/3", "a0", "b@", "b", "c", "é"}
	withStaged := []string{"a/1", "a/2", "a/b/3", "a/s(uncommitted)", "a0", "b", "bb(uncommitted)", "c", "zz(uncommitted)", "é"}
	for _, c := range []struct {
		q    ListRequest
		want []string
	}{
		{ListRequest{}, flat},
		{ListRequest{Max: MaxListResults + 1}, flat},
		{ListRequest{Snapshots: true}, withSnaps},
		{ListRequest{Prefix: "a/"}, []string{"a/1", "a/2", "a/b/3"}},
		{ListRequest{Prefix: "a/b"}, []string{"a/b/3"}},
		{ListRequest{Prefix: "d"}, nil},
		{ListRequest{Delimiter: "/"}, []string{"a/(prefix)", "a0", "b", "c", "é"}},
		{ListRequest{Delimiter: "/", Prefix: "a/"}, []string{"a/1", "a/2", "a/b/(prefix)"}},
		{ListRequest{Delimiter: "/", Prefix: "a"}, []string{"a/(prefix)", "a0"}}, // the delimiter right after the prefix
		{ListRequest{Delimiter: "/", Snapshots: true}, []string{"a/(prefix)", "a0", "b@", "b", "c", "é"}},
		{ListRequest{Uncommitted: true}, withStaged},
		{ListRequest{Uncommitted: true, Prefix: "a/"}, []string{"a/1", "a/2", "a/b/3", "a/s(uncommitted)"}},
		{ListRequest{Uncommitted: true, Delimiter: "/"}, []string{"a/(prefix)", "a0", "b", "bb(uncommitted)", "c", "zz(uncommitted)", "é"}},
	} {
		for _, max := range []int{0, 1, 2, 3} {
			q := c.q
			if max > 0 {
				q.Max = max
			}
			if got := listAll(t, s, q); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%+v: %q, want %q", q, got, c.want)
			}
		}
	}
	// A marker before the prefix does not widen the listing; a bad one is refused.
	before := base64.RawURLEncoding.EncodeToString([]byte("a"))
	if items, _, err := s.List(ctx, "a", "ccc", ListRequest{Prefix: "b", Marker: before}); err != nil || !reflect.DeepEqual(listNames(items), []string{"b"}) {
		t.Errorf("marker before the prefix: %q %v", listNames(items), err)
	}
	if _, _, err := s.List(ctx, "a", "ccc", ListRequest{Marker: "!!"}); !azerr.Is(err, azerr.InvalidQueryParameterValue) {
		t.Errorf("bad marker: %v", err)
	}
	if _, _, err := s.List(ctx, "a", "none", ListRequest{}); !azerr.Is(err, azerr.ContainerNotFound) {
		t.Errorf("missing container: %v", err)
	}
	items, _, _ := s.List(ctx, "a", "ccc", ListRequest{Uncommitted: true, Prefix: "bb"})
	if len(items) != 1 || items[0].Blob.Type != BlockBlob || items[0].Blob.Size != 0 {
		t.Errorf("a staged-only blob lists as an empty block blob: %+v", items)
	}
}

// A page is at most MaxListResults long by default.
func TestListBlobsDefaultPage(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	for i := range MaxListResults + 1 {
		if _, err := s.Put(ctx, Ref{Account: "a", Container: "ccc", Name: fmt.Sprintf("b%05d", i)}, PutRequest{Type: BlockBlob}); err != nil {
			t.Fatal(err)
		}
	}
	for _, max := range []int{0, -1, MaxListResults, MaxListResults + 1} {
		items, next, err := s.List(ctx, "a", "ccc", ListRequest{Max: max})
		if err != nil || len(items) != MaxListResults || next == "" {
			t.Errorf("max %d: %d items, next %q, %v", max, len(items), next, err)
		}
	}
}
