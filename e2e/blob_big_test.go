package e2e

import (
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// genReader is a seekable stream of n deterministic bytes (no buffer of the whole).
type genReader struct{ off, n int64 }

func genByte(i int64) byte { return byte(i*131 + i>>13) }

func (g *genReader) Read(p []byte) (int, error) {
	if g.off >= g.n {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), g.n-g.off))
	for i := 0; i < k; i++ {
		p[i] = genByte(g.off + int64(i))
	}
	g.off += int64(k)
	return k, nil
}

func (g *genReader) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		g.off = off
	case io.SeekCurrent:
		g.off += off
	case io.SeekEnd:
		g.off = g.n + off
	}
	return g.off, nil
}

func (g *genReader) Close() error { return nil }

// vmHWM reads a process's peak resident set size in KiB.
func vmHWM(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// TestBlobBigSingleShot uploads and downloads one large blob with a single Put Blob and a
// single Get Blob against the real binary and checks that the server's peak RSS stays under
// 200 MB. Minutes of disk I/O: run with TABLO_BLOB_BIG=<MiB> (2048 for the 2 GiB figure).
func TestBlobBigSingleShot(t *testing.T) {
	mib, _ := strconv.ParseInt(os.Getenv("TABLO_BLOB_BIG"), 10, 64)
	if mib <= 0 {
		t.Skip("set TABLO_BLOB_BIG=<MiB> to run")
	}
	size := mib << 20
	bin := buildTablo(t)
	// At info, the default, as in production: each request is logged, and the log must not
	// buffer a streamed body to count it.
	p, _ := startTablo(t, bin, t.TempDir(), "--log-level", "info")
	cred, _ := azblob.NewSharedKeyCredential(devAccount, devKey)
	c, err := azblob.NewClientWithSharedKeyCredential("http://"+p.blobAddr+"/"+devAccount+"/", cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.CreateContainer(ctx, "big", nil); err != nil {
		t.Fatal(err)
	}
	pid := p.cmd.Process.Pid
	base := vmHWM(t, pid)
	began := time.Now()
	bb := c.ServiceClient().NewContainerClient("big").NewBlockBlobClient("one")
	if _, err := bb.Upload(ctx, &genReader{n: size}, &blockblob.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	up := time.Since(began)
	afterUp := vmHWM(t, pid)
	began = time.Now()
	dl, err := bb.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := md5.New()
	want := md5.New()
	n, err := io.Copy(h, dl.Body)
	if err != nil || n != size {
		t.Fatalf("download %d bytes: %v", n, err)
	}
	down := time.Since(began)
	_, _ = io.Copy(want, &genReader{n: size})
	if string(h.Sum(nil)) != string(want.Sum(nil)) {
		t.Fatal("downloaded bytes differ")
	}
	peak := vmHWM(t, pid)
	t.Logf("%d MiB: upload %v (%.0f MB/s), download %v (%.0f MB/s); server peak RSS: at start %d KiB, after upload %d KiB, after download %d KiB",
		mib, up, float64(size)/up.Seconds()/1e6, down, float64(size)/down.Seconds()/1e6, base, afterUp, peak)
	if peak > 200_000 {
		t.Errorf("server peak RSS %d KiB > 200 MB", peak)
	}
}
