package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/valyala/fasthttp"
)

// nullBlobServer answers every PUT 201 after reading the body and every GET with size bytes:
// the client's own cost, the ceiling no server can beat.
func nullBlobServer(t *testing.T, size int) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, size)
	srv := &fasthttp.Server{StreamRequestBody: true, CloseOnShutdown: true, IdleTimeout: time.Second, Handler: func(fc *fasthttp.RequestCtx) {
		if r := fc.RequestBodyStream(); r != nil {
			_, _ = io.Copy(io.Discard, r)
		}
		fc.Response.Header.Set("Etag", `"0x1"`)
		fc.Response.Header.Set("Last-Modified", time.Now().UTC().Format(time.RFC1123))
		if string(fc.Method()) == "PUT" {
			fc.SetStatusCode(201)
			return
		}
		fc.Response.Header.Set("Content-Type", "application/octet-stream")
		fc.SetBodyStream(bytes.NewReader(body), size)
	}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return "http://" + ln.Addr().String() + "/" + devAccount + "/"
}

type benchResult struct {
	ops   int64
	bytes int64
	dur   time.Duration
	lat   []time.Duration
}

func (r benchResult) String() string {
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	p := func(q float64) time.Duration { return r.lat[int(q*float64(len(r.lat)-1))] }
	return fmt.Sprintf("%8.1f MB/s %8.0f ops/s p50 %v p99 %v", float64(r.bytes)/r.dur.Seconds()/1e6, float64(r.ops)/r.dur.Seconds(), p(0.5).Round(time.Microsecond), p(0.99).Round(time.Microsecond))
}

// runBench runs op from clients goroutines for d (at least one op each).
func runBench(clients int, d time.Duration, size int64, op func(w, i int) error) (benchResult, error) {
	var ops atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr error
	began := time.Now()
	var wg sync.WaitGroup
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i == 0 || time.Since(began) < d; i++ {
				t0 := time.Now()
				if err := op(w, i); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				el := time.Since(t0)
				ops.Add(1)
				mu.Lock()
				lat = append(lat, el)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	dur := time.Since(began)
	return benchResult{ops: ops.Load(), bytes: ops.Load() * size, dur: dur, lat: lat}, firstErr
}

// TestBlobBench measures uploads and downloads of 1 KiB, 1 MiB and 256 MiB blobs at 1 and 16
// clients against Tablo (durable, on disk), a do-nothing endpoint, and a raw write+fsync of
// the same bytes, side by side in one run. TABLO_BLOB_BENCH=<seconds per cell>.
func TestBlobBench(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("TABLO_BLOB_BENCH"))
	if secs <= 0 {
		t.Skip("set TABLO_BLOB_BENCH=<seconds per cell> to run")
	}
	d := time.Duration(secs) * time.Second
	ts := startServer(t)
	ctx := context.Background()
	cred, _ := azblob.NewSharedKeyCredential(devAccount, devKey)
	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: time.Hour}}}
	tablo, _ := azblob.NewClientWithSharedKeyCredential(ts.blobEndpoint()+"/", cred, opts)
	if _, err := tablo.CreateContainer(ctx, "bench", nil); err != nil {
		t.Fatal(err)
	}
	diskDir := t.TempDir()
	for _, size := range benchSizes() {
		data := randomBytes(int(size), 3)
		null, _ := azblob.NewClientWithSharedKeyCredential(nullBlobServer(t, int(size)), cred, opts)
		for _, clients := range []int{1, 16} {
			if size == 256<<20 && clients == 16 {
				clients = 4 // 16 x 256 MiB buffers in the client: 4 GiB
			}
			label := fmt.Sprintf("%7s x%-2d", byteSize(size), clients)
			up := func(c *azblob.Client) func(w, i int) error {
				return func(w, i int) error {
					_, err := c.ServiceClient().NewContainerClient("bench").NewBlockBlobClient(fmt.Sprintf("b-%d-%d", size, w)).Upload(ctx, streamOf(data), &blockblob.UploadOptions{})
					return err
				}
			}
			down := func(c *azblob.Client) func(w, i int) error {
				return func(w, i int) error {
					r, err := c.DownloadStream(ctx, "bench", fmt.Sprintf("b-%d-%d", size, w), nil)
					if err != nil {
						return err
					}
					_, err = io.Copy(io.Discard, r.Body)
					r.Body.Close()
					return err
				}
			}
			disk := func(w, i int) error {
				f, err := os.Create(filepath.Join(diskDir, fmt.Sprintf("%d-%d", w, i%4)))
				if err != nil {
					return err
				}
				if _, err := f.Write(data); err != nil {
					return err
				}
				if err := f.Sync(); err != nil {
					return err
				}
				return f.Close()
			}
			ru, err := runBench(clients, d, size, up(tablo))
			if err != nil {
				t.Fatal(err)
			}
			rn, _ := runBench(clients, d, size, up(null))
			rd, _ := runBench(clients, d, size, disk)
			t.Logf("upload   %s tablo %s | null endpoint %s | disk write+fsync %s", label, ru, rn, rd)
			rg, err := runBench(clients, d, size, down(tablo))
			if err != nil {
				t.Fatal(err)
			}
			rng, _ := runBench(clients, d, size, down(null))
			t.Logf("download %s tablo %s | null endpoint %s", label, rg, rng)
		}
	}
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// benchSizes are the blob sizes of TestBlobBench (TABLO_BLOB_BENCH_SIZES=1024,1048576 to
// choose).
func benchSizes() []int64 {
	v := os.Getenv("TABLO_BLOB_BENCH_SIZES")
	if v == "" {
		return []int64{1 << 10, 1 << 20, 256 << 20}
	}
	var out []int64
	for _, f := range strings.Split(v, ",") {
		n, _ := strconv.ParseInt(f, 10, 64)
		out = append(out, n)
	}
	return out
}
