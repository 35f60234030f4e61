package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
)

func TestBlobPageBlobs(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	cc := c.ServiceClient().NewContainerClient("pages")
	if _, err := cc.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	pb := cc.NewPageBlobClient("disk.vhd")
	if _, err := pb.Create(ctx, 4096, nil); err != nil {
		t.Fatal(err)
	}
	one := bytes.Repeat([]byte{1}, 1024)
	if _, err := pb.UploadPages(ctx, streamOf(one), blob.HTTPRange{Offset: 512, Count: 1024}, nil); err != nil {
		t.Fatal(err)
	}
	two := bytes.Repeat([]byte{2}, 512)
	if _, err := pb.UploadPages(ctx, streamOf(two), blob.HTTPRange{Offset: 2048, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.ClearPages(ctx, blob.HTTPRange{Offset: 1024, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPages(ctx, streamOf(two), blob.HTTPRange{Offset: 3584, Count: 1024}, nil); !bloberror.HasCode(err, bloberror.InvalidPageRange) && err == nil {
		t.Errorf("page past the end: %v", err)
	}
	p, err := pb.NewGetPageRangesPager(nil).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]int64
	for _, r := range p.PageList.PageRange {
		got = append(got, [2]int64{*r.Start, *r.End})
	}
	if len(got) != 2 || got[0] != [2]int64{512, 1023} || got[1] != [2]int64{2048, 2559} {
		t.Errorf("page ranges %v", got)
	}
	dl, err := pb.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(dl.Body)
	want := make([]byte, 4096)
	copy(want[512:1024], one)
	copy(want[2048:2560], two)
	if !bytes.Equal(data, want) {
		t.Errorf("page blob content differs (%d bytes)", len(data))
	}
}

func pageRangesOf(t *testing.T, p pageblob.GetPageRangesDiffResponse) (changed, cleared [][2]int64) {
	t.Helper()
	for _, r := range p.PageList.PageRange {
		changed = append(changed, [2]int64{*r.Start, *r.End})
	}
	for _, r := range p.PageList.ClearRange {
		cleared = append(cleared, [2]int64{*r.Start, *r.End})
	}
	return changed, cleared
}

// Sequence numbers: set on create, guarded Put Page (412 SequenceNumberConditionNotMet),
// max/update/increment through Set Blob Properties, returned on HEAD; durable.
func TestBlobPageSequenceNumbers(t *testing.T) {
	dir := t.TempDir()
	ts := startServerAt(t, dir)
	ctx := context.Background()
	c := blobClient(t, ts)
	cc := c.ServiceClient().NewContainerClient("seq")
	if _, err := cc.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	pb := cc.NewPageBlobClient("disk")
	if _, err := pb.Create(ctx, 4096, &pageblob.CreateOptions{SequenceNumber: to.Ptr[int64](7)}); err != nil {
		t.Fatal(err)
	}
	seqOf := func() int64 {
		t.Helper()
		p, err := pb.GetProperties(ctx, nil)
		if err != nil || p.BlobSequenceNumber == nil {
			t.Fatalf("properties: %v", err)
		}
		return *p.BlobSequenceNumber
	}
	if s := seqOf(); s != 7 {
		t.Errorf("sequence number after create %d", s)
	}
	page := bytes.Repeat([]byte{9}, 512)
	put := func(c pageblob.SequenceNumberAccessConditions) error {
		_, err := pb.UploadPages(ctx, streamOf(page), blob.HTTPRange{Offset: 0, Count: 512}, &pageblob.UploadPagesOptions{SequenceNumberAccessConditions: &c})
		return err
	}
	for _, tc := range []struct {
		c  pageblob.SequenceNumberAccessConditions
		ok bool
	}{
		{pageblob.SequenceNumberAccessConditions{IfSequenceNumberEqualTo: to.Ptr[int64](7)}, true},
		{pageblob.SequenceNumberAccessConditions{IfSequenceNumberEqualTo: to.Ptr[int64](6)}, false},
		{pageblob.SequenceNumberAccessConditions{IfSequenceNumberLessThan: to.Ptr[int64](8)}, true},
		{pageblob.SequenceNumberAccessConditions{IfSequenceNumberLessThan: to.Ptr[int64](7)}, false},
		{pageblob.SequenceNumberAccessConditions{IfSequenceNumberLessThanOrEqualTo: to.Ptr[int64](7)}, true},
		{pageblob.SequenceNumberAccessConditions{IfSequenceNumberLessThanOrEqualTo: to.Ptr[int64](6)}, false},
	} {
		err := put(tc.c)
		if tc.ok && err != nil || !tc.ok && !bloberror.HasCode(err, bloberror.SequenceNumberConditionNotMet) {
			t.Errorf("Put Page with %+v: %v (want ok=%v)", tc.c, err, tc.ok)
		}
	}
	if _, err := pb.ClearPages(ctx, blob.HTTPRange{Offset: 0, Count: 512}, &pageblob.ClearPagesOptions{SequenceNumberAccessConditions: &pageblob.SequenceNumberAccessConditions{IfSequenceNumberEqualTo: to.Ptr[int64](1)}}); !bloberror.HasCode(err, bloberror.SequenceNumberConditionNotMet) {
		t.Errorf("Clear Page with a false condition: %v", err)
	}
	if _, err := pb.SetHTTPHeaders(ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("application/x-disk")}, nil); err != nil {
		t.Fatal(err)
	}
	update := func(action pageblob.SequenceNumberActionType, n *int64) (int64, error) {
		r, err := pb.UpdateSequenceNumber(ctx, &pageblob.UpdateSequenceNumberOptions{ActionType: &action, SequenceNumber: n})
		if err != nil {
			return 0, err
		}
		return *r.BlobSequenceNumber, nil
	}
	for _, tc := range []struct {
		action pageblob.SequenceNumberActionType
		n      *int64
		want   int64
	}{
		{pageblob.SequenceNumberActionTypeMax, to.Ptr[int64](5), 7},
		{pageblob.SequenceNumberActionTypeMax, to.Ptr[int64](20), 20},
		{pageblob.SequenceNumberActionTypeUpdate, to.Ptr[int64](3), 3},
		{pageblob.SequenceNumberActionTypeIncrement, nil, 4},
	} {
		got, err := update(tc.action, tc.n)
		if err != nil || got != tc.want || seqOf() != tc.want {
			t.Errorf("%s %v: %d %v, want %d", tc.action, tc.n, got, err, tc.want)
		}
	}
	if p, _ := pb.GetProperties(ctx, nil); p.ContentType == nil || *p.ContentType != "application/x-disk" {
		t.Errorf("a sequence number update cleared the content type: %v", p.ContentType)
	}
	// The SDK drops the number from an increment; Azure refuses one.
	if status, h, _ := rawBlob(t, ts, "PUT", "/seq/disk?comp=properties", "", "x-ms-sequence-number-action", "increment", "x-ms-blob-sequence-number", "1"); status != 400 || h.Get("x-ms-error-code") != "InvalidHeaderValue" {
		t.Errorf("increment with a number: %d %s", status, h.Get("x-ms-error-code"))
	}
	if status, h, _ := rawBlob(t, ts, "PUT", "/seq/disk?comp=properties", "", "x-ms-sequence-number-action", "double"); status != 400 || h.Get("x-ms-error-code") != "InvalidHeaderValue" {
		t.Errorf("unknown action: %d %s", status, h.Get("x-ms-error-code"))
	}
	if status, h, _ := rawBlob(t, ts, "PUT", "/seq/disk?comp=page", "", "x-ms-page-write", "clear", "x-ms-range", "bytes=0-511", "x-ms-if-sequence-number-eq", "-1"); status != 400 || h.Get("x-ms-error-code") != "InvalidHeaderValue" {
		t.Errorf("negative sequence number condition: %d %s", status, h.Get("x-ms-error-code"))
	}
	if _, err := update(pageblob.SequenceNumberActionTypeUpdate, nil); !bloberror.HasCode(err, bloberror.MissingRequiredHeader) {
		t.Errorf("update without a number: %v", err)
	}
	ts.stop(t)
	ts = startServerAt(t, dir)
	pb = blobClient(t, ts).ServiceClient().NewContainerClient("seq").NewPageBlobClient("disk")
	if s := seqOf(); s != 4 {
		t.Errorf("sequence number after restart %d", s)
	}
}

// Resize through Set Blob Properties: shrinking drops pages past the end, growing reads zeros.
func TestBlobPageResize(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	cc := c.ServiceClient().NewContainerClient("resize")
	if _, err := cc.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	pb := cc.NewPageBlobClient("disk")
	if _, err := pb.Create(ctx, 2048, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPages(ctx, streamOf(bytes.Repeat([]byte{5}, 2048)), blob.HTTPRange{Offset: 0, Count: 2048}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.Resize(ctx, 1024, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.Resize(ctx, 3072, nil); err != nil {
		t.Fatal(err)
	}
	dl, err := pb.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(dl.Body)
	want := make([]byte, 3072)
	copy(want, bytes.Repeat([]byte{5}, 1024))
	if !bytes.Equal(data, want) {
		t.Errorf("after shrink and grow: %d bytes, first differing content", len(data))
	}
	p, err := pb.NewGetPageRangesPager(nil).NextPage(ctx)
	if err != nil || len(p.PageList.PageRange) != 1 || *p.PageList.PageRange[0].End != 1023 {
		t.Errorf("page ranges after resize: %v", err)
	}
	// Resize alone keeps the content properties; with a content header it replaces them all.
	if _, err := pb.SetHTTPHeaders(ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("application/x-disk"), BlobContentLanguage: to.Ptr("en")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.Resize(ctx, 3072, nil); err != nil {
		t.Fatal(err)
	}
	if p, _ := pb.GetProperties(ctx, nil); p.ContentType == nil || *p.ContentType != "application/x-disk" || p.ContentLanguage == nil {
		t.Errorf("resize changed the content properties: %v %v", p.ContentType, p.ContentLanguage)
	}
	if status, _, _ := rawBlob(t, ts, "PUT", "/resize/disk?comp=properties", "", "x-ms-blob-content-length", "3072", "x-ms-blob-content-type", "text/plain"); status != 200 {
		t.Fatalf("resize with a content type: %d", status)
	}
	if p, _ := pb.GetProperties(ctx, nil); p.ContentType == nil || *p.ContentType != "text/plain" || p.ContentLanguage != nil {
		t.Errorf("resize with a content header kept old properties: %v %v", p.ContentType, p.ContentLanguage)
	}
	if _, err := pb.Resize(ctx, 1000, nil); !bloberror.HasCode(err, bloberror.InvalidHeaderValue) {
		t.Errorf("resize to a size not a multiple of 512: %v", err)
	}
	bb := cc.NewBlockBlobClient("block")
	if _, err := bb.UploadBuffer(ctx, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewPageBlobClient("block").Resize(ctx, 512, nil); !bloberror.HasCode(err, bloberror.InvalidBlobType) {
		t.Errorf("resize of a block blob: %v", err)
	}
}

// Get Page Ranges with prevsnapshot: pages written since the snapshot are PageRange, pages
// cleared since are ClearRange; unchanged pages are absent.
func TestBlobPageRangesDiff(t *testing.T) { pageDiffChecks(t, startServer(t)) }

func pageDiffChecks(t *testing.T, ts *testServer) {
	ctx := context.Background()
	c := blobClient(t, ts)
	cc := c.ServiceClient().NewContainerClient("diff")
	if _, err := cc.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	pb := cc.NewPageBlobClient("disk")
	if _, err := pb.Create(ctx, 8192, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPages(ctx, streamOf(bytes.Repeat([]byte{1}, 4096)), blob.HTTPRange{Offset: 0, Count: 4096}, nil); err != nil {
		t.Fatal(err)
	}
	s1, err := pb.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Since s1: rewrite 1024-1535, clear 2048-3071, write 5120-6143.
	if _, err := pb.UploadPages(ctx, streamOf(bytes.Repeat([]byte{2}, 512)), blob.HTTPRange{Offset: 1024, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.ClearPages(ctx, blob.HTTPRange{Offset: 2048, Count: 1024}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPages(ctx, streamOf(bytes.Repeat([]byte{3}, 1024)), blob.HTTPRange{Offset: 5120, Count: 1024}, nil); err != nil {
		t.Fatal(err)
	}
	p, err := pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: s1.Snapshot}).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	changed, cleared := pageRangesOf(t, p)
	if fmt.Sprint(changed) != "[[1024 1535] [5120 6143]]" || fmt.Sprint(cleared) != "[[2048 3071]]" {
		t.Errorf("diff: changed %v cleared %v", changed, cleared)
	}
	// A later snapshot against the earlier one gives the same diff; the reverse is refused.
	s2, err := pb.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap2, _ := pb.WithSnapshot(*s2.Snapshot)
	p, err = snap2.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: s1.Snapshot}).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ch, cl := pageRangesOf(t, p); fmt.Sprint(ch) != fmt.Sprint(changed) || fmt.Sprint(cl) != fmt.Sprint(cleared) {
		t.Errorf("diff between snapshots: %v %v", ch, cl)
	}
	snap1, _ := pb.WithSnapshot(*s1.Snapshot)
	if _, err := snap1.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: s2.Snapshot}).NextPage(ctx); !bloberror.HasCode(err, "PreviousSnapshotCannotBeNewer") {
		t.Errorf("diff against a newer snapshot: %v", err)
	}
	if _, err := pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: to.Ptr("2001-01-01T00:00:00.0000000Z")}).NextPage(ctx); !bloberror.HasCode(err, "PreviousSnapshotNotFound") {
		t.Errorf("diff against a missing snapshot: %v", err)
	}
	// A range limits the diff.
	p, err = pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: s1.Snapshot, Range: blob.HTTPRange{Offset: 0, Count: 2560}}).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ch, cl := pageRangesOf(t, p); fmt.Sprint(ch) != "[[1024 1535]]" || fmt.Sprint(cl) != "[[2048 2559]]" {
		t.Errorf("ranged diff: %v %v", ch, cl)
	}
}
