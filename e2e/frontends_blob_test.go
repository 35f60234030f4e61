package e2e

import (
	"bytes"
	"crypto/md5"
	"io"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// Blob data across front ends on one PostgreSQL database: the extents (chunk rows) one front
// end writes are read by another, and streaming keeps every front end's memory bounded.

func (p *tabloProc) blobs(t *testing.T) *azblob.Client {
	t.Helper()
	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: time.Hour}}}
	c, err := azblob.NewClientWithSharedKeyCredential("http://"+p.blobAddr+"/"+devAccount+"/", mustBlobCred(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testFrontEndBlobs: a multi-block upload (the SDK's parallel UploadStream, 4 MiB blocks,
// concurrency 8) through one front end is downloaded whole and in parallel ranges through
// another, bytes equal; a Put Block List through the second over blocks staged through the
// first commits them.
func testFrontEndBlobs(t *testing.T, bin string) {
	fes := frontEnds(t, bin, pgtest.URL(t), 2)
	up, down := fes[0].blobs(t), fes[1].blobs(t)
	if _, err := up.CreateContainer(ctx, "shared", nil); err != nil {
		t.Fatal(err)
	}
	data := randomBytes(22<<20+333, 11) // six blocks, the last one short
	if _, err := up.UploadStream(ctx, "shared", "multi", bytes.NewReader(data), &azblob.UploadStreamOptions{BlockSize: 4 << 20, Concurrency: 8}); err != nil {
		t.Fatal(err)
	}
	r, err := down.DownloadStream(ctx, "shared", "multi", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("download through the other front end: %d of %d bytes, %v", len(got), len(data), err)
	}
	buf := make([]byte, len(data))
	if n, err := down.DownloadBuffer(ctx, "shared", "multi", buf, &blob.DownloadBufferOptions{BlockSize: 3 << 20, Concurrency: 8}); err != nil || n != int64(len(data)) || !bytes.Equal(buf, data) {
		t.Fatalf("ranged parallel download through the other front end: %d bytes, %v", n, err)
	}
	// Blocks staged through one front end, committed through the other.
	bbUp := up.ServiceClient().NewContainerClient("shared").NewBlockBlobClient("staged")
	bbDown := down.ServiceClient().NewContainerClient("shared").NewBlockBlobClient("staged")
	ids := []string{"YmxrMDA=", "YmxrMDE="}
	for i, id := range ids {
		if _, err := bbUp.StageBlock(ctx, id, streamOf(data[i<<20:(i+1)<<20]), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bbDown.CommitBlockList(ctx, ids, nil); err != nil {
		t.Fatal(err)
	}
	r, err = up.DownloadStream(ctx, "shared", "staged", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil || !bytes.Equal(got, data[:2<<20]) {
		t.Fatalf("blocks staged on one front end, committed on the other: %d bytes, %v", len(got), err)
	}
}

// testFrontEndBigBlob: a 128 MiB single-shot Put Blob through one front end and a single Get
// Blob through the other stream through both in bounded memory: neither front end's peak
// RSS grows by half the blob's size.
func testFrontEndBigBlob(t *testing.T, bin string) {
	const size = 128 << 20
	fes := frontEnds(t, bin, pgtest.URL(t), 2)
	up, down := fes[0].blobs(t), fes[1].blobs(t)
	if _, err := up.CreateContainer(ctx, "big", nil); err != nil {
		t.Fatal(err)
	}
	base := []int64{vmHWM(t, fes[0].cmd.Process.Pid), vmHWM(t, fes[1].cmd.Process.Pid)}
	bb := up.ServiceClient().NewContainerClient("big").NewBlockBlobClient("one")
	began := time.Now()
	if _, err := bb.Upload(ctx, &genReader{n: size}, &blockblob.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	upTime := time.Since(began)
	began = time.Now()
	dl, err := down.DownloadStream(ctx, "big", "one", nil)
	if err != nil {
		t.Fatal(err)
	}
	h := md5.New()
	n, err := io.Copy(h, dl.Body)
	dl.Body.Close()
	if err != nil || n != size {
		t.Fatalf("download %d bytes: %v", n, err)
	}
	downTime := time.Since(began)
	want := md5.New()
	_, _ = io.Copy(want, &genReader{n: size})
	if !bytes.Equal(h.Sum(nil), want.Sum(nil)) {
		t.Fatal("downloaded bytes differ")
	}
	for i, fe := range fes {
		peak := vmHWM(t, fe.cmd.Process.Pid)
		t.Logf("front end %d: peak RSS %d KiB at start, %d KiB after", i, base[i], peak)
		if grew := (peak - base[i]) << 10; grew > size/2 {
			t.Errorf("front end %d: peak RSS grew by %d MiB for a %d MiB blob", i, grew>>20, size>>20)
		}
	}
	t.Logf("%d MiB through PostgreSQL: upload %v, download %v", size>>20, upTime.Round(time.Millisecond), downTime.Round(time.Millisecond))
}
