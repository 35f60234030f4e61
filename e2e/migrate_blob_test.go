package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/tablo/tablo/internal/app"
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/migrate"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// fillBlobsForMigration writes blob data of every kind through the SDK: block blobs of
// several MiB in several blocks, a snapshot sharing blocks with the blob's next version, a
// copy, uncommitted blocks (on a committed blob and on one with none), an append blob, a
// page blob with cleared pages, small inline blobs, and garbage (an overwritten blob).
func fillBlobsForMigration(t *testing.T, c *azblob.Client) {
	t.Helper()
	svc := c.ServiceClient()
	for _, name := range []string{"data", "more"} {
		if _, err := svc.NewContainerClient(name).Create(ctx, &container.CreateOptions{Metadata: map[string]*string{"owner": to.Ptr(name)}}); err != nil {
			t.Fatal(err)
		}
	}
	data, more := svc.NewContainerClient("data"), svc.NewContainerClient("more")
	for i, n := range []int{200 << 10, 150 << 10} { // garbage: the first version's extent
		if _, err := c.UploadBuffer(ctx, "data", "churn", randomBytes(n, uint64(i+1)), nil); err != nil {
			t.Fatal(err)
		}
	}
	id := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	big := data.NewBlockBlobClient("big")
	stage := func(bb *blockblob.Client, name string, b []byte) {
		t.Helper()
		if _, err := bb.StageBlock(ctx, id(name), streamOf(b), nil); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(bb *blockblob.Client, names ...string) {
		t.Helper()
		var ids []string
		for _, n := range names {
			ids = append(ids, id(n))
		}
		if _, err := bb.CommitBlockList(ctx, ids, &blockblob.CommitBlockListOptions{
			HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("application/x-test"), BlobCacheControl: to.Ptr("max-age=60")},
			Metadata:    map[string]*string{"blocks": to.Ptr(fmt.Sprint(len(names)))},
		}); err != nil {
			t.Fatal(err)
		}
	}
	stage(big, "b0", randomBytes(2<<20, 10))
	stage(big, "b1", randomBytes(1<<20+128, 11))
	stage(big, "b2", randomBytes(3<<20, 12))
	commit(big, "b0", "b1", "b2")
	if _, err := big.CreateSnapshot(ctx, nil); err != nil {
		t.Fatal(err)
	}
	stage(big, "b3", randomBytes(1<<20, 13))
	commit(big, "b2", "b0", "b3")
	stage(big, "pending", randomBytes(300<<10, 14))
	staged := data.NewBlockBlobClient("staged-only")
	stage(staged, "s0", randomBytes(500<<10, 15))
	stage(staged, "s1", randomBytes(70<<10, 16))
	if _, err := c.UploadBuffer(ctx, "data", "single", randomBytes(3<<20+8, 17), &azblob.UploadBufferOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")}, Metadata: map[string]*string{"k": to.Ptr("v")},
	}); err != nil {
		t.Fatal(err)
	}
	ab := data.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := ab.AppendBlock(ctx, streamOf(randomBytes(100<<10+8*i, uint64(20+i))), nil); err != nil {
			t.Fatal(err)
		}
	}
	pb := more.NewPageBlobClient("disk.vhd")
	if _, err := pb.Create(ctx, 1<<20, nil); err != nil {
		t.Fatal(err)
	}
	for i, off := range []int64{0, 128 << 10} {
		if _, err := pb.UploadPages(ctx, streamOf(randomBytes(64<<10, uint64(30+i))), blob.HTTPRange{Offset: off, Count: 64 << 10}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pb.ClearPages(ctx, blob.HTTPRange{Offset: 16 << 10, Count: 16 << 10}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := more.NewBlobClient("copy-of-big").StartCopyFromURL(ctx, big.URL(), nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := c.UploadBuffer(ctx, "more", fmt.Sprintf("small-%d", i), randomBytes(1000*i, uint64(40+i)), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// describeBlobs reads, through the SDK, every container and blob (snapshots and blobs with
// only uncommitted blocks too): properties and ETags as listed and as downloaded, block
// lists, page ranges and a hash of the bytes downloaded.
func describeBlobs(t *testing.T, c *azblob.Client) string {
	t.Helper()
	var out strings.Builder
	svc := c.ServiceClient()
	for _, name := range []string{"data", "more"} {
		cc := svc.NewContainerClient(name)
		p, err := cc.GetProperties(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "container %s etag=%s modified=%v meta=%v\n", name, *p.ETag, *p.LastModified, deref(p.Metadata))
		pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{
			Snapshots: true, UncommittedBlobs: true, Metadata: true, Copy: true}})
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Segment.BlobItems {
				pr := it.Properties
				snap := ""
				if it.Snapshot != nil {
					snap = *it.Snapshot
				}
				fmt.Fprintf(&out, "  %s@%s type=%s len=%d etag=%s modified=%v created=%v ct=%s cc=%s md5=%x meta=%v copy=%v/%v\n",
					*it.Name, snap, val(pr.BlobType), val(pr.ContentLength), val(pr.ETag), val(pr.LastModified), val(pr.CreationTime),
					str(pr.ContentType), str(pr.CacheControl), pr.ContentMD5, deref(it.Metadata), str(pr.CopyID), val(pr.CopyStatus))
				bc := cc.NewBlobClient(*it.Name)
				if snap != "" {
					if bc, err = bc.WithSnapshot(snap); err != nil {
						t.Fatal(err)
					}
				}
				if pr.ETag != nil { // a blob with only uncommitted blocks has nothing to download
					dl, err := bc.DownloadStream(ctx, nil)
					if err != nil {
						t.Fatalf("download %s@%s: %v", *it.Name, snap, err)
					}
					h := sha256.New()
					n, err := io.Copy(h, dl.Body)
					dl.Body.Close()
					if err != nil || n != *pr.ContentLength {
						t.Fatalf("download %s@%s: %d of %d bytes: %v", *it.Name, snap, n, *pr.ContentLength, err)
					}
					fmt.Fprintf(&out, "    download etag=%s sha256=%x\n", *dl.ETag, h.Sum(nil))
				}
				switch *pr.BlobType {
				case blob.BlobTypeBlockBlob:
					bb, err := cc.NewBlockBlobClient(*it.Name).WithSnapshot(snap)
					if err != nil {
						t.Fatal(err)
					}
					bl, err := bb.GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
					if err != nil {
						t.Fatal(err)
					}
					for _, b := range bl.CommittedBlocks {
						fmt.Fprintf(&out, "    committed %s %d\n", *b.Name, *b.Size)
					}
					for _, b := range bl.UncommittedBlocks {
						fmt.Fprintf(&out, "    uncommitted %s %d\n", *b.Name, *b.Size)
					}
				case blob.BlobTypePageBlob:
					rp, err := cc.NewPageBlobClient(*it.Name).NewGetPageRangesPager(nil).NextPage(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range rp.PageList.PageRange {
						fmt.Fprintf(&out, "    pages %d-%d\n", *r.Start, *r.End)
					}
				}
			}
		}
	}
	return out.String()
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// val is *p, or nil.
func val[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func deref(m map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = str(v)
	}
	return out
}

// migrateServer starts Tablo on a data directory (pg "") or on PostgreSQL.
func migrateServer(t *testing.T, dir, pg string) *testServer {
	t.Helper()
	return startServerConfig(t, config.Config{Host: "127.0.0.1", DataDir: dir, PostgresURL: pg, Accounts: []auth.Account{auth.DevAccount()}})
}

// TestMigrateBlobs: blob data of every kind written through the SDK to Tablo on Pebble is
// migrated to PostgreSQL and back to Pebble; at each stop Tablo serves every blob, snapshot
// and uncommitted block list byte-identical, with the same ETags and properties.
func TestMigrateBlobs(t *testing.T) {
	if onPostgres() {
		t.Skip("engine-independent: runs in the default pass")
	}
	url := pgtest.URL(t)
	src := t.TempDir()
	ts := migrateServer(t, src, "")
	fillBlobsForMigration(t, blobClient(t, ts))
	want := describeBlobs(t, blobClient(t, ts))
	if n := strings.Count(want, "sha256="); n != 10 {
		t.Fatalf("the source shows %d downloads, want 10:\n%s", n, want)
	}
	ts.stop(t)

	var out bytes.Buffer
	if _, err := migrate.Run(ctx, migrate.Options{From: src, To: url, Progress: &out}); err != nil {
		t.Fatalf("to PostgreSQL: %v\n%s", err, out.String())
	}
	t.Log(out.String())
	ts = migrateServer(t, t.TempDir(), url)
	if got := describeBlobs(t, blobClient(t, ts)); got != want {
		t.Fatalf("served from PostgreSQL after the migration:\n%s\nwant:\n%s", got, want)
	}
	ts.stop(t)

	back := filepath.Join(t.TempDir(), "back")
	out.Reset()
	if _, err := migrate.Run(ctx, migrate.Options{From: url, To: back, Progress: &out}); err != nil {
		t.Fatalf("back to Pebble: %v\n%s", err, out.String())
	}
	t.Log(out.String())
	ts = migrateServer(t, back, "")
	if got := describeBlobs(t, blobClient(t, ts)); got != want {
		t.Fatalf("served from Pebble after the round trip:\n%s\nwant:\n%s", got, want)
	}
}

// Tablo refuses to serve the destination of a migration that did not finish.
func TestServeRefusesUnfinishedMigration(t *testing.T) {
	if onPostgres() {
		t.Skip("engine-independent: runs in the default pass")
	}
	dir := t.TempDir()
	db, err := pebblestore.Open(pebblestore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// The mark tablo migrate writes first and removes last.
	if err := db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set(keys.Meta("migrate-unfinished"), nil) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	a, err := app.Start(context.Background(), config.Config{Host: "127.0.0.1", DataDir: dir, Accounts: []auth.Account{auth.DevAccount()}}, nil)
	if err == nil {
		a.Close(ctx)
		t.Fatal("Tablo served an unfinished migration's destination")
	}
	if !strings.Contains(err.Error(), "did not finish") {
		t.Fatalf("start on an unfinished destination: %v", err)
	}
}

// List Blobs with include=uncommittedblobs lists a blob that has only uncommitted blocks,
// once, beside committed ones (on every engine: on PostgreSQL the listing's snapshot is one
// connection, which the check for a committed blob must not use while the scan's rows are
// open).
func TestBlobListUncommittedBlobs(t *testing.T) {
	ts := startServer(t)
	c := blobClient(t, ts)
	cc := c.ServiceClient().NewContainerClient("staging")
	if _, err := cc.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	id := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, b := range []struct{ name, block string }{{"a-staged", "x"}, {"a-staged", "y"}, {"b", "x"}, {"c-staged", "x"}} {
		if _, err := cc.NewBlockBlobClient(b.name).StageBlock(ctx, id(b.block), streamOf([]byte(b.block)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cc.NewBlockBlobClient("b").CommitBlockList(ctx, []string{id("x")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewBlockBlobClient("b").StageBlock(ctx, id("z"), streamOf([]byte("z")), nil); err != nil {
		t.Fatal(err)
	}
	page, err := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{UncommittedBlobs: true}}).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range page.Segment.BlobItems {
		got = append(got, fmt.Sprintf("%s:%d", *it.Name, *it.Properties.ContentLength))
	}
	if strings.Join(got, " ") != "a-staged:0 b:1 c-staged:0" {
		t.Fatalf("listed %v", got)
	}
}
