package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
)

// blobEndpoint is the Blob service's path-style URL of the dev account.
func (ts *testServer) blobEndpoint() string {
	return "http://" + ts.app.ServiceAddr("blob").String() + "/" + devAccount
}

func blobClient(t testing.TB, ts *testServer) *azblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(ts.blobEndpoint()+"/", cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

func TestBlobContainersAndSmallBlobs(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	if _, err := c.CreateContainer(ctx, "gowire", &azblob.CreateContainerOptions{Metadata: map[string]*string{"owner": to.Ptr("go")}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateContainer(ctx, "gowire", nil)
	if !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	body := []byte("hello, blob world\n")
	// Go sends "/" in names as %2F; the name is the same blob as with "/".
	up, err := c.UploadBuffer(ctx, "gowire", "dir1/hello.txt", body, &azblob.UploadBufferOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")},
		Metadata:    map[string]*string{"Author": to.Ptr("go")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if up.ETag == nil || !strings.HasPrefix(string(*up.ETag), "\"0x") {
		t.Errorf("etag %v", up.ETag)
	}
	bc := c.ServiceClient().NewContainerClient("gowire").NewBlobClient("dir1/hello.txt")
	props, err := bc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(body)
	if *props.ContentLength != int64(len(body)) || *props.ContentType != "text/plain" || !bytes.Equal(props.ContentMD5, sum[:]) || *props.Metadata["Author"] != "go" || *props.BlobType != blob.BlobTypeBlockBlob {
		t.Errorf("properties: len %v type %v md5 %x meta %v", *props.ContentLength, *props.ContentType, props.ContentMD5, props.Metadata)
	}
	// Ranged read: 206, clamped end.
	dl, err := bc.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 7, Count: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(dl.Body)
	if string(got) != string(body[7:]) || *dl.ContentRange != "bytes 7-17/18" {
		t.Errorf("range read %q %v", got, *dl.ContentRange)
	}
	// If-None-Match with the current ETag: 304 on a read.
	_, err = bc.DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: props.ETag}}})
	var re *azcore.ResponseError
	if err != nil && (!errors.As(err, &re) || re.StatusCode != http.StatusNotModified) {
		t.Errorf("If-None-Match read: %v", err)
	}
	// If-Match with a stale ETag on a write: 412.
	_, err = bc.SetMetadata(ctx, map[string]*string{"a": to.Ptr("b")}, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag("\"0x1\""))}}})
	if !bloberror.HasCode(err, bloberror.ConditionNotMet) {
		t.Errorf("stale If-Match: %v", err)
	}
	// Set Blob Properties clears what it is not sent.
	if _, err := bc.SetHTTPHeaders(ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/x")}, nil); err != nil {
		t.Fatal(err)
	}
	props, _ = bc.GetProperties(ctx, nil)
	if props.ContentMD5 != nil || *props.ContentType != "text/x" {
		t.Errorf("after SetHTTPHeaders: md5 %x type %v", props.ContentMD5, *props.ContentType)
	}
	// Empty blob: a ranged read is 416, which the SDK turns into an empty download.
	if _, err := c.UploadBuffer(ctx, "gowire", "empty", nil, nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.ServiceClient().NewContainerClient("gowire").NewBlobClient("empty").DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 0, Count: 10}})
	if !bloberror.HasCode(err, bloberror.InvalidRange) {
		t.Errorf("range on empty blob: %v", err)
	}
	// Missing blob on HEAD: 404 BlobNotFound.
	_, err = c.ServiceClient().NewContainerClient("gowire").NewBlobClient("nope").GetProperties(ctx, nil)
	if !bloberror.HasCode(err, bloberror.BlobNotFound) {
		t.Errorf("missing blob: %v", err)
	}
	// Content-MD5 is verified.
	bb := c.ServiceClient().NewContainerClient("gowire").NewBlockBlobClient("md5")
	_, err = bb.Upload(ctx, streamOf([]byte("abc")), &blockblob.UploadOptions{TransactionalValidation: blob.TransferValidationTypeMD5([]byte("0123456789abcdef"))})
	if !bloberror.HasCode(err, bloberror.MD5Mismatch) {
		t.Errorf("bad Content-MD5: %v", err)
	}
	_, err = bb.Upload(ctx, streamOf([]byte("abc")), &blockblob.UploadOptions{TransactionalValidation: blob.TransferValidationTypeCRC64(12345)})
	if !bloberror.HasCode(err, bloberror.CRC64Mismatch) {
		t.Errorf("bad CRC64: %v", err)
	}
	// Delete: 202, then the container.
	if _, err := c.DeleteBlob(ctx, "gowire", "empty", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteContainer(ctx, "gowire", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServiceClient().NewContainerClient("gowire").GetProperties(ctx, nil); !bloberror.HasCode(err, bloberror.ContainerNotFound) {
		t.Errorf("after delete: %v", err)
	}
}

type nopSeeker struct{ *bytes.Reader }

func (nopSeeker) Close() error { return nil }

func streamOf(b []byte) nopSeeker { return nopSeeker{bytes.NewReader(b)} }

func TestBlobParallelUploadDownload(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	if _, err := c.CreateContainer(ctx, "big", nil); err != nil {
		t.Fatal(err)
	}
	data := randomBytes(40<<20+12345, 1)
	for _, bs := range []int64{4 << 20, 8 << 20} {
		name := fmt.Sprintf("buf-%d", bs)
		if _, err := c.UploadBuffer(ctx, "big", name, data, &azblob.UploadBufferOptions{BlockSize: bs, Concurrency: 8}); err != nil {
			t.Fatal(err)
		}
		name2 := fmt.Sprintf("stream-%d", bs)
		if _, err := c.UploadStream(ctx, "big", name2, bytes.NewReader(data), &azblob.UploadStreamOptions{BlockSize: bs, Concurrency: 8}); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{name, name2} {
			buf := make([]byte, len(data))
			got, err := c.DownloadBuffer(ctx, "big", n, buf, &azblob.DownloadBufferOptions{BlockSize: 4 << 20, Concurrency: 8})
			if err != nil || got != int64(len(data)) || !bytes.Equal(buf, data) {
				t.Fatalf("%s: download %d bytes, %v, equal %v", n, got, err, bytes.Equal(buf, data))
			}
		}
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := c.DownloadFile(ctx, "big", "stream-8388608", f, &azblob.DownloadFileOptions{BlockSize: 3 << 20, Concurrency: 8})
	if err != nil || n != int64(len(data)) {
		t.Fatalf("DownloadFile: %d %v", n, err)
	}
	back, _ := os.ReadFile(f.Name())
	if !bytes.Equal(back, data) {
		t.Fatal("DownloadFile content differs")
	}
	// Get Block List of the staged upload.
	bl, err := c.ServiceClient().NewContainerClient("big").NewBlockBlobClient("stream-4194304").GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
	if err != nil || len(bl.CommittedBlocks) != 11 || len(bl.UncommittedBlocks) != 0 {
		t.Fatalf("block list: %d committed, %d uncommitted, %v", len(bl.CommittedBlocks), len(bl.UncommittedBlocks), err)
	}
}

func TestBlobListingHierarchical(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	cc := c.ServiceClient().NewContainerClient("list")
	if _, err := cc.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "dir1/x", "dir1/y", "dir1/sub/z", "dir2/q", "z!", "zz"}
	for _, n := range names {
		if _, err := c.UploadBuffer(ctx, "list", n, []byte(n), &azblob.UploadBufferOptions{Metadata: map[string]*string{"n": to.Ptr("v")}}); err != nil {
			t.Fatal(err)
		}
	}
	var flat []string
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{MaxResults: to.Ptr(int32(2)), Include: container.ListBlobsInclude{Metadata: true}})
	pages := 0
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, b := range p.Segment.BlobItems {
			flat = append(flat, *b.Name)
			if *b.Metadata["n"] != "v" {
				t.Errorf("metadata of %s: %v", *b.Name, b.Metadata)
			}
		}
	}
	want := []string{"a", "dir1/sub/z", "dir1/x", "dir1/y", "dir2/q", "z!", "zz"}
	if strings.Join(flat, ",") != strings.Join(want, ",") || pages != 4 {
		t.Errorf("flat listing %v in %d pages, want %v in 4", flat, pages, want)
	}
	var got []string
	hp := cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Prefix: to.Ptr("dir1/"), MaxResults: to.Ptr(int32(1))})
	for hp.More() {
		p, err := hp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range p.Segment.BlobPrefixes {
			got = append(got, "P:"+*pr.Name)
		}
		for _, b := range p.Segment.BlobItems {
			got = append(got, *b.Name)
		}
	}
	if strings.Join(got, ",") != "P:dir1/sub/,dir1/x,dir1/y" {
		t.Errorf("hierarchical listing %v", got)
	}
}

func TestBlobLeases(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	if _, err := c.CreateContainer(ctx, "leases", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "leases", "lock", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	bc := c.ServiceClient().NewContainerClient("leases").NewBlobClient("lock")
	lc, err := lease.NewBlobClient(bc, &lease.BlobClientOptions{LeaseID: to.Ptr("11111111-2222-3333-4444-555555555555")})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := bc.GetProperties(ctx, nil)
	acq, err := lc.AcquireLease(ctx, 15, nil)
	if err != nil || *acq.LeaseID != "11111111-2222-3333-4444-555555555555" {
		t.Fatalf("acquire: %v", err)
	}
	if *acq.ETag != *before.ETag {
		t.Errorf("lease changed the ETag")
	}
	other, _ := lease.NewBlobClient(bc, &lease.BlobClientOptions{LeaseID: to.Ptr("99999999-2222-3333-4444-555555555555")})
	if _, err := other.AcquireLease(ctx, 15, nil); !bloberror.HasCode(err, bloberror.LeaseAlreadyPresent) {
		t.Errorf("second acquire: %v", err)
	}
	// Writes need the lease id.
	_, err = c.UploadBuffer(ctx, "leases", "lock", []byte("y"), nil)
	if !bloberror.HasCode(err, bloberror.LeaseIDMissing) {
		t.Errorf("write without lease id: %v", err)
	}
	_, err = bc.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: acq.LeaseID}}})
	if err != nil {
		t.Errorf("write with lease id: %v", err)
	}
	props, _ := bc.GetProperties(ctx, nil)
	if *props.LeaseState != lease.StateTypeLeased || *props.LeaseStatus != lease.StatusTypeLocked || *props.LeaseDuration != lease.DurationTypeFixed {
		t.Errorf("lease properties %v %v %v", *props.LeaseState, *props.LeaseStatus, *props.LeaseDuration)
	}
	if _, err := lc.RenewLease(ctx, nil); err != nil {
		t.Errorf("renew: %v", err)
	}
	br, err := lc.BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr(int32(0))})
	if err != nil || *br.LeaseTime != 0 {
		t.Errorf("break: %v", err)
	}
	props, _ = bc.GetProperties(ctx, nil)
	if *props.LeaseState != lease.StateTypeBroken {
		t.Errorf("after break: %v", *props.LeaseState)
	}
	if _, err := lc.ReleaseLease(ctx, nil); err != nil {
		t.Errorf("release: %v", err)
	}
	// Container lease: delete needs it.
	cl, _ := lease.NewContainerClient(c.ServiceClient().NewContainerClient("leases"), nil)
	ca, err := cl.AcquireLease(ctx, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteContainer(ctx, "leases", nil); !bloberror.HasCode(err, bloberror.LeaseIDMissing) {
		t.Errorf("delete of a leased container: %v", err)
	}
	if _, err := c.DeleteContainer(ctx, "leases", &azblob.DeleteContainerOptions{AccessConditions: &container.AccessConditions{LeaseAccessConditions: &container.LeaseAccessConditions{LeaseID: ca.LeaseID}}}); err != nil {
		t.Errorf("delete with the lease id: %v", err)
	}
}

func TestBlobSASAndPublicAccess(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	if _, err := c.CreateContainer(ctx, "sas", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "sas", "dir/f.txt", []byte("secret"), nil); err != nil {
		t.Fatal(err)
	}
	cred, _ := azblob.NewSharedKeyCredential(devAccount, devKey)
	exp := time.Now().Add(time.Hour).UTC()
	q, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: to.Ptr(sas.BlobPermissions{Read: true}).String(), ContainerName: "sas", BlobName: "dir/f.txt"}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	u := ts.blobEndpoint() + "/sas/dir/f.txt?" + q.Encode()
	anon, _ := blob.NewClientWithNoCredential(u, nil)
	dl, err := anon.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatalf("read with blob SAS: %v", err)
	}
	got, _ := io.ReadAll(dl.Body)
	if string(got) != "secret" {
		t.Errorf("SAS read %q", got)
	}
	if _, err := anon.SetMetadata(ctx, nil, nil); !bloberror.HasCode(err, bloberror.AuthorizationPermissionMismatch) {
		t.Errorf("write with a read SAS: %v", err)
	}
	// Container SAS listing.
	cq, _ := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: to.Ptr(sas.ContainerPermissions{List: true, Read: true}).String(), ContainerName: "sas"}.SignWithSharedKey(cred)
	cc, _ := container.NewClientWithNoCredential(ts.blobEndpoint()+"/sas?"+cq.Encode(), nil)
	p, err := cc.NewListBlobsFlatPager(nil).NextPage(ctx)
	if err != nil || len(p.Segment.BlobItems) != 1 {
		t.Fatalf("list with container SAS: %v", err)
	}
	// Anonymous: private → 404 ResourceNotFound; public blob level → readable.
	priv, _ := blob.NewClientWithNoCredential(ts.blobEndpoint()+"/sas/dir/f.txt", nil)
	if _, err := priv.GetProperties(ctx, nil); err == nil {
		t.Errorf("anonymous read of a private blob succeeded")
	}
	if _, err := c.ServiceClient().NewContainerClient("sas").SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{Access: to.Ptr(container.PublicAccessTypeBlob)}); err != nil {
		t.Fatal(err)
	}
	if _, err := priv.GetProperties(ctx, nil); err != nil {
		t.Errorf("anonymous read of a public blob: %v", err)
	}
	anonC, _ := container.NewClientWithNoCredential(ts.blobEndpoint()+"/sas", nil)
	if _, err := anonC.NewListBlobsFlatPager(nil).NextPage(ctx); err == nil {
		t.Errorf("anonymous listing of a blob-level public container succeeded")
	}
}

func TestBlobSnapshotsCopiesAppend(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	cc := c.ServiceClient().NewContainerClient("misc")
	if _, err := cc.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "misc", "src", []byte("version 1"), nil); err != nil {
		t.Fatal(err)
	}
	bc := cc.NewBlobClient("src")
	snap, err := bc.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "misc", "src", []byte("version 2"), nil); err != nil {
		t.Fatal(err)
	}
	sc, _ := bc.WithSnapshot(*snap.Snapshot)
	dl, err := sc.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(dl.Body)
	if string(got) != "version 1" {
		t.Errorf("snapshot reads %q", got)
	}
	if _, err := bc.Delete(ctx, nil); !bloberror.HasCode(err, bloberror.SnapshotsPresent) {
		t.Errorf("delete with snapshots: %v", err)
	}
	// Copy within the account: synchronous success.
	dst := cc.NewBlobClient("copy")
	cp, err := dst.StartCopyFromURL(ctx, bc.URL(), nil)
	if err != nil || *cp.CopyStatus != blob.CopyStatusTypeSuccess {
		t.Fatalf("copy: %v", err)
	}
	dl, _ = dst.DownloadStream(ctx, nil)
	got, _ = io.ReadAll(dl.Body)
	if string(got) != "version 2" {
		t.Errorf("copy reads %q", got)
	}
	if _, err := dst.AbortCopyFromURL(ctx, *cp.CopyID, nil); !bloberror.HasCode(err, bloberror.NoPendingCopyOperation) {
		t.Errorf("abort of a finished copy: %v", err)
	}
	if _, err := bc.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}); err != nil {
		t.Errorf("delete including snapshots: %v", err)
	}
	// Append blob with position conditions.
	ab := cc.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.AppendBlock(ctx, streamOf([]byte("line 1\n")), nil); err != nil {
		t.Fatal(err)
	}
	r, err := ab.AppendBlock(ctx, streamOf([]byte("line 2\n")), appendAt(7))
	if err != nil || *r.BlobAppendOffset != "7" || *r.BlobCommittedBlockCount != 2 {
		t.Fatalf("append at 7: %v", err)
	}
	if _, err := ab.AppendBlock(ctx, streamOf([]byte("x")), appendAt(3)); !bloberror.HasCode(err, bloberror.AppendPositionConditionNotMet) {
		t.Errorf("append at a wrong position: %v", err)
	}
	dl, _ = ab.DownloadStream(ctx, nil)
	got, _ = io.ReadAll(dl.Body)
	if string(got) != "line 1\nline 2\n" {
		t.Errorf("append blob reads %q", got)
	}
}

func appendAt(pos int64) *appendblob.AppendBlockOptions {
	return &appendblob.AppendBlockOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: to.Ptr(pos)}}
}
