package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

func procBlobClient(t *testing.T, p *tabloProc) *azblob.Client {
	t.Helper()
	cred, _ := azblob.NewSharedKeyCredential(devAccount, devKey)
	c, err := azblob.NewClientWithSharedKeyCredential("http://"+p.blobAddr+"/"+devAccount+"/", cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// crashBlobData is the content of blob i of the crash test.
func crashBlobData(i int) []byte { return randomBytes(2<<20+i*4099, uint64(i)+7) }

// TestBlobCrashDuringUploads kills the server (SIGKILL) while clients run multi-block
// uploads (Put Block x N + Put Block List, concurrency 4) and single-shot overwrites. After a
// restart on the same directory, every blob that lists must read back whole and exactly as
// one of its uploads wrote it, and every upload acknowledged before the kill must be there:
// a committed block list never names a missing block.
func TestBlobCrashDuringUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary")
	}
	bin := buildTablo(t)
	dir := t.TempDir()
	p, _ := startTablo(t, bin, dir)
	c := procBlobClient(t, p)
	ctx := context.Background()
	if _, err := c.CreateContainer(ctx, "crash", nil); err != nil {
		t.Fatal(err)
	}
	var acked sync.Map // blob index -> true once an upload was acknowledged
	var n atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := r.IntN(12)
				var err error
				if r.IntN(2) == 0 {
					_, err = c.UploadBuffer(ctx, "crash", fmt.Sprintf("b-%d", i), crashBlobData(i), &azblob.UploadBufferOptions{BlockSize: 512 << 10, Concurrency: 4})
				} else {
					_, err = c.UploadStream(ctx, "crash", fmt.Sprintf("b-%d", i), bytes.NewReader(crashBlobData(i)), &azblob.UploadStreamOptions{BlockSize: 1 << 20, Concurrency: 2})
				}
				if err != nil {
					return // the server died
				}
				acked.Store(i, true)
				n.Add(1)
			}
		}()
	}
	for n.Load() < 10 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	_ = p.waitExit(t, 10*time.Second)

	p2, _ := startTablo(t, bin, dir)
	c2 := procBlobClient(t, p2)
	found := map[string]bool{}
	pager := c2.NewListBlobsFlatPager("crash", nil)
	for pager.More() {
		pg, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range pg.Segment.BlobItems {
			found[*b.Name] = true
		}
	}
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("b-%d", i)
		if _, ok := acked.Load(i); ok && !found[name] {
			t.Errorf("%s was acknowledged but is missing after kill -9", name)
		}
		if !found[name] {
			continue
		}
		want := crashBlobData(i)
		buf := make([]byte, len(want)+10)
		got, err := c2.DownloadBuffer(ctx, "crash", name, buf, nil)
		if err != nil || !bytes.Equal(buf[:got], want) {
			t.Errorf("%s after kill -9: %d bytes, %v (want %d bytes, equal %v)\n%s", name, got, err, len(want), bytes.Equal(buf[:got], want), p2.stderr)
		}
	}
	t.Logf("%d uploads acknowledged before the kill, %d blobs listed after", n.Load(), len(found))
}
