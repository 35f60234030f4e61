package blob

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// A page blob's sequence number through Set Blob Properties: max keeps the larger, update
// sets it, increment adds one and refuses to pass the largest int64; a block blob has none.
func TestSequenceNumberActions(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "seq", "", nil)
	r := Ref{Account: "a", Container: "seq", Name: "p"}
	if _, err := s.Put(ctx, r, PutRequest{Type: PageBlob, PageSize: pageSize, Seq: 7}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		action string
		seq    int64
		want   int64
		err    azerr.Code
	}{
		{"max", 3, 7, ""},
		{"max", 9, 9, ""},
		{"update", 2, 2, ""},
		{"increment", 0, 3, ""},
		{"update", math.MaxInt64 - 1, math.MaxInt64 - 1, ""},
		{"increment", 0, math.MaxInt64, ""},
		{"increment", 0, math.MaxInt64, azerr.InvalidHeaderValue},
	} {
		b, err := s.SetProperties(ctx, r, SetPropsRequest{KeepProps: true, Resize: -1, SeqAction: c.action, Seq: c.seq}, Cond{})
		if c.err == "" && (err != nil || b.Seq != c.want) || c.err != "" && !azerr.Is(err, c.err) {
			t.Errorf("%s %d: %+v, %v; want %d %q", c.action, c.seq, b, err, c.want, c.err)
		}
		if got, err := s.Get(ctx, r, Cond{}); err != nil || got.Seq != c.want {
			t.Errorf("%s %d: stored sequence number %d, %v; want %d", c.action, c.seq, got.Seq, err, c.want)
		}
	}
	s.Put(ctx, Ref{Account: "a", Container: "seq", Name: "b"}, PutRequest{Type: BlockBlob, Body: body([]byte("x"))})
	if _, err := s.SetProperties(ctx, Ref{Account: "a", Container: "seq", Name: "b"}, SetPropsRequest{KeepProps: true, Resize: -1, SeqAction: "increment"}, Cond{}); !azerr.Is(err, azerr.InvalidBlobType) {
		t.Errorf("increment on a block blob: %v", err)
	}
}

// Set Blob Tier stores the tier that Get then answers, and refuses a missing blob and a
// lease id the blob has no lease for, without changing the tier.
func TestSetTier(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "tier", "", nil)
	r := Ref{Account: "a", Container: "tier", Name: "b"}
	if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTier(ctx, r, "Cool", Cond{}); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Get(ctx, r, Cond{}); err != nil || b.Tier != "Cool" {
		t.Fatalf("after Set Blob Tier: %+v, %v", b, err)
	}
	if err := s.SetTier(ctx, r, "Archive", Cond{LeaseID: "5f8e1ce6-4a5f-4e7f-9a5e-8f2b3b7a2c11"}); !azerr.Is(err, azerr.LeaseNotPresentWithBlobOperation) {
		t.Errorf("Set Blob Tier with a lease id, no lease: %v", err)
	}
	if err := s.SetTier(ctx, Ref{Account: "a", Container: "tier", Name: "none"}, "Cool", Cond{}); !azerr.Is(err, azerr.BlobNotFound) {
		t.Errorf("Set Blob Tier of a missing blob: %v", err)
	}
	if b, _ := s.Get(ctx, r, Cond{}); b.Tier != "Cool" {
		t.Errorf("a refused Set Blob Tier changed the tier to %q", b.Tier)
	}
}

// Set Blob Properties on a block blob sets its content properties, but a size (even 0) or a
// sequence number action is for page blobs only (InvalidBlobType, the blob unchanged); a
// page blob can be resized to 0.
func TestResizeOnlyPageBlobs(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "props", "", nil)
	br := Ref{Account: "a", Container: "props", Name: "b"}
	if _, err := s.Put(ctx, br, PutRequest{Type: BlockBlob, Body: body([]byte("block"))}); err != nil {
		t.Fatal(err)
	}
	b, err := s.SetProperties(ctx, br, SetPropsRequest{Props: Props{ContentType: "text/plain"}, Resize: -1}, Cond{})
	if err != nil || b.Props.ContentType != "text/plain" || b.Size != 5 {
		t.Fatalf("content type of a block blob: %+v, %v", b, err)
	}
	if _, err := s.SetProperties(ctx, br, SetPropsRequest{KeepProps: true, Resize: 0}, Cond{}); !azerr.Is(err, azerr.InvalidBlobType) {
		t.Errorf("a block blob resized to 0: %v, want InvalidBlobType", err)
	}
	if got := string(readAll(t, s, br)); got != "block" {
		t.Errorf("after a refused resize the block blob reads %q", got)
	}
	pr := Ref{Account: "a", Container: "props", Name: "p"}
	if _, err := s.Put(ctx, pr, PutRequest{Type: PageBlob, PageSize: 2 * pageSize}); err != nil {
		t.Fatal(err)
	}
	if b, err := s.SetProperties(ctx, pr, SetPropsRequest{KeepProps: true, Resize: 0}, Cond{}); err != nil || b.Size != 0 {
		t.Errorf("a page blob resized to 0: %+v, %v", b, err)
	}
}

// Deleting a blob's snapshots one by one leaves its base without snapshots: the base can then
// be deleted without x-ms-delete-snapshots.
func TestDeleteEverySnapshotThenBase(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "snaps", "", nil)
	r := Ref{Account: "a", Container: "snaps", Name: "b"}
	if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	var snaps []int64
	for range 2 {
		_, snap, err := s.Snapshot(ctx, r, nil, false, Cond{})
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, snap)
	}
	for _, snap := range snaps {
		if err := s.Delete(ctx, Ref{Account: "a", Container: "snaps", Name: "b", Snapshot: snap}, "", Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, r, "", Cond{}); err != nil {
		t.Errorf("delete of a base whose snapshots were all deleted: %v", err)
	}
}

// decodedForm(b) is what decodeBlob makes of b.encode() (what the cache of decoded records
// must hold for the bytes stored) for records of every shape, page runs and empty slices
// included.
func TestDecodedFormMatchesDecode(t *testing.T) {
	for i, b := range []*Blob{
		{Name: "n", Snapshot: 5, Type: BlockBlob, Size: 3, inline: []byte("abc")},
		{Type: PageBlob, Size: 2048, Pages: []Page{{Off: 0, Len: 512, Ext: 7}, {Off: 1024, Len: 512, Ext: 9, ExtOff: 512}}},
		{Type: PageBlob, Pages: []Page{}, Blocks: []Block{}, Meta: Meta{}, Tags: Tags{}, Props: Props{ContentMD5: []byte{}}, inline: []byte{}},
		{Type: BlockBlob, Size: 4, Blocks: []Block{{ID: "QUFB", Size: 4, Ext: 3}}, Meta: Meta{{"k", "v"}}, Tags: Tags{{"t", "1"}}, Props: Props{ContentMD5: []byte{1, 2}}},
	} {
		want, err := decodeBlob(b.encode())
		if err != nil {
			t.Fatal(err)
		}
		if got := decodedForm(b); !reflect.DeepEqual(got, want) {
			t.Errorf("record %d: decodedForm %+v, decodeBlob %+v", i, *got, *want)
		}
	}
}
