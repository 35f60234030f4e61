package e2e

import (
	"context"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// TestBlobListUncommittedPaged: with include=uncommittedblobs, blobs that have only staged
// blocks are listed in name order among the committed ones, each once, whatever the page
// size (the pager follows the markers).
func TestBlobListUncommittedPaged(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	cc := c.ServiceClient().NewContainerClient("staged")
	if _, err := cc.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b", "d", "f"} {
		if _, err := c.UploadBuffer(ctx, "staged", name, []byte(name), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "c", "e", "g"} {
		if _, err := cc.NewBlockBlobClient(name).StageBlock(ctx, "YmxvY2sx", streamOf([]byte("staged")), nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, max := range []int32{1, 2, 3, 5000} {
		var names []string
		pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
			Include:    container.ListBlobsInclude{UncommittedBlobs: true},
			MaxResults: to.Ptr(max),
		})
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			for _, it := range page.Segment.BlobItems {
				names = append(names, *it.Name)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("pages of %d: %q, want %q", max, names, want)
		}
	}
}
