package blob

import (
	"bytes"
	"context"
	"reflect"
	"strconv"
	"testing"

	"github.com/tablo/tablo/internal/keys"
)

// TestContainerCacheNeverStale: the decoded-container cache answers only for the exact bytes
// it decoded, so every change (ACL, metadata, delete and recreate) is seen by the next read,
// and a caller changing its copy does not change what the next caller reads.
func TestContainerCacheNeverStale(t *testing.T) {
	ctx := context.Background()
	s, _ := openService(t, "", nil)
	if _, err := s.CreateContainer(ctx, "a", "cnt", "", nil); err != nil {
		t.Fatal(err)
	}
	first, err := s.GetContainer(ctx, "a", "cnt")
	if err != nil || first.Public != "" {
		t.Fatalf("%+v %v", first, err)
	}
	first.Public, first.Meta = "container", Meta{{"k", "v"}} // the caller's copy only
	if c, _ := s.GetContainer(ctx, "a", "cnt"); c.Public != "" || c.Meta != nil {
		t.Fatalf("a caller's change to its copy reached the next read: %+v", c)
	}
	if _, err := s.SetContainerACL(ctx, "a", "cnt", "blob", nil, Cond{}); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.GetContainer(ctx, "a", "cnt"); c.Public != "blob" {
		t.Fatalf("after Set Container ACL: public %q", c.Public)
	}
	if _, err := s.SetContainerMetadata(ctx, "a", "cnt", Meta{{"x", "1"}}, Cond{}); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.GetContainer(ctx, "a", "cnt"); len(c.Meta) != 1 || c.Meta[0] != [2]string{"x", "1"} {
		t.Fatalf("after Set Container Metadata: %v", c.Meta)
	}
	if err := s.DeleteContainer(ctx, "a", "cnt", Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetContainer(ctx, "a", "cnt"); err == nil {
		t.Fatal("a deleted container was still found")
	}
	again, err := s.CreateContainer(ctx, "a", "cnt", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := s.GetContainer(ctx, "a", "cnt"); c.ID != again.ID || c.ID == first.ID || c.Public != "" {
		t.Fatalf("recreated container read as %+v, want id %d", c, again.ID)
	}
}

// TestBlobCacheNeverStale: Get answers from the decoded-record cache only for the exact
// bytes stored, so an overwrite of the same size, new metadata and a delete are seen by the
// next Get, and a caller's change to its copy is not.
func TestBlobCacheNeverStale(t *testing.T) {
	ctx := context.Background()
	s, _ := openService(t, "", nil)
	if _, err := s.CreateContainer(ctx, "a", "cnt", "", nil); err != nil {
		t.Fatal(err)
	}
	r := Ref{Account: "a", Container: "cnt", Name: "b"}
	put := func(data string) {
		t.Helper()
		if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte(data))}); err != nil {
			t.Fatal(err)
		}
	}
	put("first")
	if got := string(readAll(t, s, r)); got != "first" {
		t.Fatalf("read %q", got)
	}
	b, err := s.Get(ctx, r, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	b.Size, b.Meta, b.Props.ContentType = 1, Meta{{"k", "v"}}, "x/changed" // the caller's copy only
	if b, _ := s.Get(ctx, r, Cond{}); b.Size != 5 || b.Meta != nil || b.Props.ContentType == "x/changed" {
		t.Fatalf("a caller's change to its copy reached the next Get: %+v", b)
	}
	put("again") // same size, new bytes and ETag
	if got := string(readAll(t, s, r)); got != "again" {
		t.Fatalf("after an overwrite: read %q", got)
	}
	if _, err := s.SetMetadata(ctx, r, Meta{{"m", "1"}}, Cond{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.Get(ctx, r, Cond{}); len(b.Meta) != 1 {
		t.Fatalf("after Set Blob Metadata: %v", b.Meta)
	}
	if err := s.Delete(ctx, r, "", Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, r, Cond{}); err == nil {
		t.Fatal("a deleted blob was still found")
	}
}

// TestPutAsksForSweepOnlyForGarbage: a Put Blob over a blob kept inline frees nothing and
// does not wake the sweep (which reads every blob record); one over a blob with an extent,
// or one that drops staged blocks, does.
func TestPutAsksForSweepOnlyForGarbage(t *testing.T) {
	ctx := context.Background()
	s, _ := openService(t, "", nil)
	if _, err := s.CreateContainer(ctx, "a", "cnt", "", nil); err != nil {
		t.Fatal(err)
	}
	r := Ref{Account: "a", Container: "cnt", Name: "b"}
	put := func(n int) {
		t.Helper()
		if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body(make([]byte, n))}); err != nil {
			t.Fatal(err)
		}
	}
	poked := func() bool {
		select {
		case <-s.gc.pokeCh:
			return true
		default:
			return false
		}
	}
	put(1024)
	put(1024)
	if poked() {
		t.Fatal("a Put Blob over an inline blob asked for a sweep")
	}
	put(inlineMax + 1)
	put(1024)
	if !poked() {
		t.Fatal("a Put Blob over a blob with an extent did not ask for a sweep")
	}
	if _, err := s.PutBlock(ctx, r, "QUFB", body([]byte("x")), Cond{}); err != nil {
		t.Fatal(err)
	}
	poked()
	put(1024)
	if !poked() {
		t.Fatal("a Put Blob that dropped a staged block did not ask for a sweep")
	}
}

// TestPutCachesDecodedForm: Put Blob caches the record it stores without decoding it, so the
// cached value must be exactly what decoding the stored bytes gives, or a later read would
// answer from a record that differs from the store's (an empty slice where the decode has
// nil, a name the record does not hold).
func TestPutCachesDecodedForm(t *testing.T) {
	ctx := context.Background()
	s, st := openService(t, "", nil)
	if _, err := s.CreateContainer(ctx, "acct", "cc1", "", nil); err != nil {
		t.Fatal(err)
	}
	c, err := s.GetContainer(ctx, "acct", "cc1")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []PutRequest{
		{Type: BlockBlob, Meta: Meta{}, Tags: Tags{}, Props: Props{ContentMD5: []byte{}}, SetMD5: true, Body: body(nil)},
		{Type: BlockBlob, Meta: Meta{{"k", "v"}}, Tags: Tags{{"t", "1"}}, Body: body([]byte("small"))},
		{Type: BlockBlob, Body: body(bytes.Repeat([]byte("x"), inlineMax+1))},
		{Type: PageBlob, PageSize: 1024, Body: body(nil)},
	} {
		r := Ref{Account: "acct", Container: "cc1", Name: "b" + strconv.Itoa(i)}
		if _, err := s.Put(ctx, r, p); err != nil {
			t.Fatal(err)
		}
		k := keys.Blob(c.ID, r.Name, 0)
		raw, err := st.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		want, err := decodeBlob(raw)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := s.blobs.m[string(k)]
		if !ok || !bytes.Equal(e.raw, raw) {
			t.Fatalf("put %d: record not cached with the bytes stored", i)
		}
		if !reflect.DeepEqual(&e.v, want) {
			t.Errorf("put %d: cached %+v, decoded %+v", i, e.v, *want)
		}
	}
}
