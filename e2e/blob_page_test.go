package e2e

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
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
