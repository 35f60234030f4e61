package e2e

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// TestBlobListWithSnapshots: a container whose blobs have snapshots lists its blobs, and
// with include=snapshots lists each snapshot (oldest first) before its base blob. Snapshot
// times are arbitrary bytes in the key, so several snapshots are taken.
func TestBlobListWithSnapshots(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	cc := c.ServiceClient().NewContainerClient("snaps")
	if _, err := cc.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if _, err := c.UploadBuffer(ctx, "snaps", name, []byte(name), nil); err != nil {
			t.Fatal(err)
		}
	}
	var taken []string
	for range 5 {
		s, err := cc.NewBlobClient("a").CreateSnapshot(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, *s.Snapshot)
	}
	list := func(o *container.ListBlobsFlatOptions) (names, snaps []string) {
		t.Helper()
		pager := cc.NewListBlobsFlatPager(o)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			for _, it := range page.Segment.BlobItems {
				names = append(names, *it.Name)
				s := ""
				if it.Snapshot != nil {
					s = *it.Snapshot
				}
				snaps = append(snaps, s)
			}
		}
		return names, snaps
	}
	if names, _ := list(nil); len(names) != 2 || names[0] != "a" || names[1] != "b" {
		t.Fatalf("plain listing: %q", names)
	}
	names, snaps := list(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Snapshots: true}})
	want := []string{"a", "a", "a", "a", "a", "a", "b"}
	if len(names) != len(want) {
		t.Fatalf("listing with snapshots: %q %q", names, snaps)
	}
	for i := range want {
		if names[i] != want[i] || (i < 5 && snaps[i] != taken[i]) || (i >= 5 && snaps[i] != "") {
			t.Fatalf("listing with snapshots: %q %q, snapshots taken %q", names, snaps, taken)
		}
	}
}
