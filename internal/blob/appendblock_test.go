package blob

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/store"
)

// Append Block: each append lands at the end and answers its offset and the block count
// after it; the append-position and max-size conditions hold at their exact edges; the
// blob's conditions and lease are checked; a missing container or blob and a blob of another
// type are refused.
func TestAppendBlockRules(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "logs", "", nil)
	r := Ref{Account: "a", Container: "logs", Name: "log"}
	if _, err := s.Put(ctx, r, PutRequest{Type: AppendBlob}); err != nil {
		t.Fatal(err)
	}
	appendReq := func(data string, pos, max int64, cond Cond) AppendRequest {
		return AppendRequest{Body: body([]byte(data)), Cond: cond, AppendPos: pos, MaxSize: max}
	}
	var want strings.Builder
	for i, part := range []string{"first,", "second,", "x"} {
		res, err := s.AppendBlock(ctx, r, appendReq(part, -1, -1, Cond{}))
		if err != nil || res.Offset != int64(want.Len()) || res.Count != i+1 || res.Blob == nil || res.Blob.Size != int64(want.Len()+len(part)) {
			t.Fatalf("append %d: %+v, %v; want offset %d, count %d", i, res, err, want.Len(), i+1)
		}
		want.WriteString(part)
	}
	if got := string(readAll(t, s, r)); got != want.String() {
		t.Fatalf("append blob reads %q, want %q", got, want.String())
	}
	size := int64(want.Len()) // 14
	for _, c := range []struct {
		name     string
		pos, max int64
		cond     Cond
		data     string
		want     azerr.Code
	}{
		{"append position 0 of a non-empty blob", 0, -1, Cond{}, "y", azerr.AppendPositionConditionNotMet},
		{"append position one before the end", size - 1, -1, Cond{}, "y", azerr.AppendPositionConditionNotMet},
		{"max size 0", -1, 0, Cond{}, "y", azerr.MaxBlobSizeConditionNotMet},
		{"max size one byte short", -1, size + 2, Cond{}, "yyy", azerr.MaxBlobSizeConditionNotMet},
		{"max size of the blob as it is", -1, size, Cond{}, "y", azerr.MaxBlobSizeConditionNotMet},
		{"failing If-Match", -1, -1, Cond{IfMatch: `"0x1"`}, "y", azerr.ConditionNotMet},
		{"failing If-Match with a good position", size, -1, Cond{IfMatch: `"0x1"`}, "y", azerr.ConditionNotMet},
		{"a lease id without a lease", size, -1, Cond{LeaseID: "5f8e1ce6-4a5f-4e7f-9a5e-8f2b3b7a2c11"}, "y", azerr.LeaseNotPresentWithBlobOperation},
		{"append position at the end, max size exactly reached", size, size + 3, Cond{}, "abc", ""},
	} {
		before := readAll(t, s, r)
		_, err := s.AppendBlock(ctx, r, appendReq(c.data, c.pos, c.max, c.cond))
		if c.want == "" && err != nil || c.want != "" && !azerr.Is(err, c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if after := readAll(t, s, r); c.want != "" && !bytes.Equal(after, before) {
			t.Errorf("%s: refused, but the blob changed to %q", c.name, after)
		}
	}
	if got := string(readAll(t, s, r)); got != want.String()+"abc" {
		t.Errorf("append blob reads %q after the conditions, want %q", got, want.String()+"abc")
	}
	missing := func(name string) Ref { return Ref{Account: "a", Container: "logs", Name: name} }
	if _, err := s.AppendBlock(ctx, missing("none"), appendReq("y", -1, -1, Cond{})); !azerr.Is(err, azerr.BlobNotFound) {
		t.Errorf("append to a missing blob: %v", err)
	}
	if _, err := s.AppendBlock(ctx, Ref{Account: "a", Container: "nocontainer", Name: "x"}, appendReq("y", -1, -1, Cond{})); !azerr.Is(err, azerr.ContainerNotFound) {
		t.Errorf("append in a missing container: %v", err)
	}
	s.Put(ctx, missing("block"), PutRequest{Type: BlockBlob, Body: body([]byte("b"))})
	if _, err := s.AppendBlock(ctx, missing("block"), appendReq("y", -1, -1, Cond{})); !azerr.Is(err, azerr.InvalidBlobType) {
		t.Errorf("append to a block blob: %v", err)
	}
	// The body limit is 100 MiB exactly: a body of that length is taken (here refused only
	// because the blob is missing, before the body is read); one byte more is too large.
	for _, c := range []struct {
		size int64
		want azerr.Code
	}{{maxAppendBlock, azerr.BlobNotFound}, {maxAppendBlock + 1, azerr.RequestBodyTooLarge}} {
		_, err := s.AppendBlock(ctx, missing("none"), AppendRequest{Body: Body{R: io.LimitReader(zeros{}, c.size), Size: c.size}, AppendPos: -1, MaxSize: -1})
		if !azerr.Is(err, c.want) {
			t.Errorf("append of %d bytes: %v, want %s", c.size, err, c.want)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// An append blob of 49,999 blocks takes one more and then refuses the next with
// BlockCountExceedsLimit. (The blob's 49,999 one-byte blocks share the extent of its first
// append: appending them one by one would rewrite a growing record 49,999 times.)
func TestAppendBlockCountLimit(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "logs", "", nil)
	r := Ref{Account: "a", Container: "logs", Name: "log"}
	if _, err := s.Put(ctx, r, PutRequest{Type: AppendBlob}); err != nil {
		t.Fatal(err)
	}
	one := func() AppendRequest { return AppendRequest{Body: body([]byte("x")), AppendPos: -1, MaxSize: -1} }
	if _, err := s.AppendBlock(ctx, r, one()); err != nil {
		t.Fatal(err)
	}
	_, err := s.update(ctx, r, func(_ store.Txn, _ *Container, old *Blob, _ int64) (*Blob, error) {
		for len(old.Blocks) < MaxCommittedBlocks-1 {
			old.Blocks = append(old.Blocks, old.Blocks[0])
		}
		old.Size, old.Appends = MaxCommittedBlocks-1, MaxCommittedBlocks-1
		return old, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.AppendBlock(ctx, r, one()); err != nil || res.Count != MaxCommittedBlocks {
		t.Fatalf("block %d: %+v, %v", MaxCommittedBlocks, res, err)
	}
	if _, err := s.AppendBlock(ctx, r, one()); !azerr.Is(err, azerr.BlockCountExceedsLimit) {
		t.Fatalf("block %d: %v, want BlockCountExceedsLimit", MaxCommittedBlocks+1, err)
	}
	if b, err := s.Get(ctx, r, Cond{}); err != nil || b.Size != MaxCommittedBlocks || b.Appends != MaxCommittedBlocks {
		t.Fatalf("after the refused append: %+v, %v", b, err)
	}
}
