package blob

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

// Copy Blob: a missing source (blob or container) is CannotVerifyCopySource, a failed
// x-ms-source-if-* is SourceConditionNotMet, the destination's conditions and lease apply
// as to a create; the copy takes the source's type, properties, bytes and metadata (unless
// new metadata is sent), the request's tags, and a copy state; it keeps the destination's
// creation time and lease.
func TestCopy(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 5, 0, time.UTC)
	s, _ := openService(t, "", func() time.Time { return now })
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	ref := func(name string) Ref { return Ref{Account: "a", Container: "ccc", Name: name} }
	big := bytes.Repeat([]byte("c"), inlineMax+1)
	src, err := s.Put(ctx, ref("src"), PutRequest{Type: BlockBlob, Body: body(big), Props: Props{ContentType: "text/plain"}, Meta: Meta{{"m", "1"}}, Tags: mustTags(t, "t", "src")})
	if err != nil {
		t.Fatal(err)
	}
	small, err := s.Put(ctx, ref("small"), PutRequest{Type: AppendBlob})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Copy(ctx, ref(""), CopyRequest{Source: ref("src")})
	wantCode(t, "bad destination name", err, azerr.OutOfRangeInput)
	_, err = s.Copy(ctx, ref("dst"), CopyRequest{Source: ref("none")})
	wantCode(t, "missing source blob", err, azerr.CannotVerifyCopySource)
	_, err = s.Copy(ctx, ref("dst"), CopyRequest{Source: Ref{Account: "a", Container: "none", Name: "src"}})
	wantCode(t, "missing source container", err, azerr.CannotVerifyCopySource)
	_, err = s.Copy(ctx, ref("dst"), CopyRequest{Source: ref("src"), SourceCond: Cond{IfMatch: small.ETag()}})
	wantCode(t, "source If-Match fails", err, azerr.SourceConditionNotMet)
	_, err = s.Copy(ctx, ref("dst"), CopyRequest{Source: ref("src"), SourceCond: Cond{IfModifiedSince: now}})
	wantCode(t, "source If-Modified-Since fails", err, azerr.SourceConditionNotMet)
	_, err = s.Copy(ctx, ref("small"), CopyRequest{Source: ref("src"), Cond: Cond{IfNoneMatch: "*"}})
	wantCode(t, "If-None-Match: * on an existing destination", err, azerr.BlobAlreadyExists)

	now = now.Add(time.Minute)
	cp, err := s.Copy(ctx, ref("small"), CopyRequest{Source: ref("src"), SourceURL: "http://x/a/ccc/src", CopyID: "id1", Tags: mustTags(t, "t", "dst"),
		SourceCond: Cond{IfMatch: src.ETag(), IfUnmodifiedSince: now}})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Type != BlockBlob || cp.Size != int64(len(big)) || cp.Props.ContentType != "text/plain" || !reflect.DeepEqual(cp.Meta, Meta{{"m", "1"}}) ||
		!reflect.DeepEqual(cp.Tags, mustTags(t, "t", "dst")) || cp.Created != small.Created || cp.Modified <= src.Modified {
		t.Errorf("copy: %+v", cp)
	}
	if want := (Copy{ID: "id1", Source: "http://x/a/ccc/src", Completed: cp.Modified, Size: int64(len(big))}); cp.Copy == nil || *cp.Copy != want {
		t.Errorf("copy state %+v, want %+v", cp.Copy, want)
	}
	if !bytes.Equal(readAll(t, s, ref("small")), big) {
		t.Error("copy's bytes differ")
	}
	if got, _ := s.Get(ctx, ref("src"), Cond{}); !reflect.DeepEqual(got.Tags, mustTags(t, "t", "src")) {
		t.Errorf("source's tags changed: %v", got.Tags)
	}

	// new metadata; a leased destination needs its lease id and keeps its lease
	if _, _, err := s.Lease(ctx, ref("small"), LeaseRequest{Action: "acquire", ProposedID: idA, Duration: -1}, Cond{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Copy(ctx, ref("small"), CopyRequest{Source: ref("src")})
	wantCode(t, "leased destination without the id", err, azerr.LeaseIDMissing)
	cp, err = s.Copy(ctx, ref("small"), CopyRequest{Source: ref("src"), Meta: Meta{{"n", "2"}}, SetMeta: true, Cond: Cond{LeaseID: idA}})
	if err != nil || !reflect.DeepEqual(cp.Meta, Meta{{"n", "2"}}) || cp.Lease.ID != idA || cp.Tags != nil {
		t.Errorf("copy with new metadata onto a leased blob: %+v %v", cp, err)
	}

	// from a snapshot: the snapshot's bytes, not the blob's since
	_, snap, err := s.Snapshot(ctx, ref("src"), nil, false, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, ref("src"), PutRequest{Type: BlockBlob, Body: body([]byte("later"))}); err != nil {
		t.Fatal(err)
	}
	sr := ref("src")
	sr.Snapshot = snap
	if _, err := s.Copy(ctx, ref("fromsnap"), CopyRequest{Source: sr}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readAll(t, s, ref("fromsnap")), big) {
		t.Error("copy of a snapshot differs")
	}
	if len(s.gc.held) != 0 {
		t.Errorf("holds left after copies: %v", s.gc.held)
	}
}
