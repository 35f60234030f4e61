package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// Blob workloads drive the Blob service through the official azblob client. They run only
// when named (--workloads blob, or by name). Uploads are single-shot Put Blob requests of one
// size, each worker overwriting its own blob (so disk use stays bounded); downloads read the
// whole of a preloaded blob; blob-list lists a container of --list-preload empty blobs.

// Blob sizes of the transfer workloads.
const (
	blobSmall = 1 << 10
	blobMid   = 1 << 20
	blobLarge = 256 << 20
)

// Bounds on blob workloads.
const (
	maxListPages      = 10000   // pages of one listing (5,000 names each)
	maxListPreload    = 5000000 // --list-preload
	downloadSetBytes  = 64 << 20
	maxDownloadBlobs  = 16
	blobDiskFileNames = 2 // files per worker the disk ceiling alternates between
	preloadAttempts   = 3 // tries of one preload put
)

func blobWorkloads() []workload {
	var out []workload
	for _, s := range []struct {
		tag  string
		size int64
	}{{"1k", blobSmall}, {"1m", blobMid}, {"256m", blobLarge}} {
		out = append(out,
			workload{name: "blob-upload-" + s.tag, summary: fmt.Sprintf("upload one %s blob (Put Blob)", sizeName(s.size)), blob: true, size: s.size, upload: true, op: opBlobUpload},
			workload{name: "blob-download-" + s.tag, summary: fmt.Sprintf("download the whole of a preloaded %s blob", sizeName(s.size)), blob: true, size: s.size, layout: layoutBlobs, op: opBlobDownload},
		)
	}
	return append(out, workload{name: "blob-list", summary: "list a container of --list-preload empty blobs (one op = the whole listing, 5,000 per page)", blob: true, layout: layoutBlobs, op: opBlobList})
}

func sizeName(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// blobPayloads hands out one incompressible payload per size, shared read-only by every
// worker and target, so client memory does not grow with the concurrency.
type blobPayloads struct {
	mu sync.Mutex
	m  map[int64][]byte
}

func (p *blobPayloads) get(size int64) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.m[size]; ok {
		return b
	}
	if p.m == nil {
		p.m = make(map[int64][]byte)
	}
	b := make([]byte, size)
	r := rand.NewChaCha8([32]byte{'t', 'a', 'b', 'l', 'o'})
	_, _ = r.Read(b) // ChaCha8.Read never fails
	p.m[size] = b
	return b
}

// blobWorker is a worker's Blob state.
type blobWorker struct {
	container *container.Client
	payload   []byte
	names     []string // preloaded blobs a download picks from
	diskDir   string   // the disk ceiling: write+fsync files here instead of uploading
}

func blobName(id int) string { return fmt.Sprintf("w%03d", id) }

func opBlobUpload(ctx context.Context, w *worker) (int, error) {
	if w.blob.diskDir != "" {
		return 1, diskWrite(filepath.Join(w.blob.diskDir, fmt.Sprintf("w%03d-%d", w.id, w.seq%blobDiskFileNames)), w.blob.payload, &w.seq)
	}
	_, err := w.blob.container.NewBlockBlobClient(blobName(w.id)).Upload(ctx, streaming.NopCloser(bytes.NewReader(w.blob.payload)), nil)
	return 1, err
}

// diskWrite is the disk ceiling of an upload: the same bytes written to a file (truncated if
// it exists) and fsynced, nothing else.
func diskWrite(path string, data []byte, seq *int) error {
	*seq++
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// errShortDownload: a download returned fewer bytes than the blob has.
var errShortDownload = errors.New("download returned fewer bytes than the blob holds")

func opBlobDownload(ctx context.Context, w *worker) (int, error) {
	name := w.blob.names[w.rng.IntN(len(w.blob.names))]
	resp, err := w.blob.container.NewBlobClient(name).DownloadStream(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && n != int64(len(w.blob.payload)) {
		err = fmt.Errorf("%w: %d of %d", errShortDownload, n, len(w.blob.payload))
	}
	return 1, err
}

func opBlobList(ctx context.Context, w *worker) (int, error) {
	pager := w.blob.container.NewListBlobsFlatPager(nil)
	n := 0
	for pages := 0; pager.More(); pages++ {
		if pages >= maxListPages {
			return n, fmt.Errorf("list: more than %d pages", maxListPages)
		}
		page, err := pager.NextPage(ctx)
		if err != nil {
			return n, err
		}
		n += len(page.Segment.BlobItems)
	}
	return n, nil
}

// newBlobServiceClient builds an azblob service client for one endpoint, with the same
// transport choices as newServiceClient. Large transfers may take minutes: the op timeout,
// not the transport, bounds them.
func newBlobServiceClient(ci ConnInfo, concurrency int) (*service.Client, error) {
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          concurrency + 16,
		MaxIdleConnsPerHost:   concurrency + 16,
		IdleConnTimeout:       3 * time.Second,
		ResponseHeaderTimeout: 10 * time.Minute,
		ExpectContinueTimeout: time.Second,
		WriteBufferSize:       256 << 10, // uploads: fewer, larger socket writes
		ReadBufferSize:        256 << 10,
		DisableCompression:    true,
	}
	opts := &service.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:     policy.RetryOptions{MaxRetries: -1, TryTimeout: maxOpTimeout},
		Transport: &http.Client{Transport: transport},
	}}
	endpoint := ci.BlobURL() + "/"
	if ci.SAS != "" {
		return service.NewClientWithNoCredential(endpoint+"?"+ci.SAS, opts)
	}
	cred, err := service.NewSharedKeyCredential(ci.Account, ci.Key)
	if err != nil {
		return nil, fmt.Errorf("blob credential: %w", err)
	}
	return service.NewClientWithSharedKeyCredential(endpoint, cred, opts)
}

// containerName is a fresh container's name for a workload run (lower case, digits, hyphens).
func containerName(workload string, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	return strings.ToLower(fmt.Sprintf("bench-%s-%08x", strings.TrimPrefix(workload, "blob-"), r.Uint32()))
}

// downloadBlobs is how many blobs a download run preloads: one per worker, up to 16, but
// no more than 64 MiB in all (at least one).
func downloadBlobs(size int64, concurrency int) int {
	n := min(concurrency, maxDownloadBlobs)
	if size > 0 {
		n = min(n, int(downloadSetBytes/size))
	}
	return max(n, 1)
}

// runBlobWorkload creates a fresh container, preloads it when the workload reads blobs,
// measures, and deletes the container. The disk target measures write+fsync in a fresh
// directory instead (uploads only).
func runBlobWorkload(ctx context.Context, cfg *config, t *target, wl workload, seed uint64, prog *progress) (phase, error) {
	bw := blobWorker{payload: cfg.payloads.get(wl.size)}
	if t.diskDir != "" {
		dir, err := os.MkdirTemp(t.diskDir, "tablo-bench-")
		if err != nil {
			return phase{}, fmt.Errorf("disk ceiling: %w", err)
		}
		defer os.RemoveAll(dir)
		bw.diskDir = dir
		return measure(ctx, cfg, t, wl, workerState{blob: bw}, seed, prog)
	}
	if t.bsvc == nil {
		bs, err := newBlobServiceClient(t.conn, cfg.Concurrency)
		if err != nil {
			return phase{}, err
		}
		t.bsvc = bs
	}
	name := containerName(wl.name, seed)
	cc := t.bsvc.NewContainerClient(name)
	if err := withTimeout(ctx, cfg.OpTimeout, func(ctx context.Context) error {
		_, err := cc.Create(ctx, nil)
		return err
	}); err != nil {
		return phase{}, fmt.Errorf("create container %s: %s", name, describeError(err))
	}
	defer func() {
		_ = withTimeout(context.WithoutCancel(ctx), cfg.OpTimeout, func(ctx context.Context) error {
			_, err := cc.Delete(ctx, nil)
			return err
		})
	}()
	bw.container = cc
	if wl.layout == layoutBlobs {
		names, err := preloadBlobs(ctx, cfg, t, wl, cc, bw.payload, prog)
		if err != nil {
			return phase{}, fmt.Errorf("preload %s: %s", name, describeError(err))
		}
		bw.names = names
	}
	return measure(ctx, cfg, t, wl, workerState{blob: bw}, seed, prog)
}

// preloadBlobs fills cc before the measured phase: the download set, or --list-preload empty
// blobs for blob-list. It is not measured.
func preloadBlobs(ctx context.Context, cfg *config, t *target, wl workload, cc *container.Client, payload []byte, prog *progress) ([]string, error) {
	n, data := downloadBlobs(wl.size, cfg.Concurrency), payload
	if wl.size == 0 { // blob-list
		n, data = cfg.ListPreload, nil
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("blob-%07d", i)
	}
	pc := *cfg
	pc.Ops, pc.Duration, pc.MaxErrors = int64(n), 0, 1
	pc.Concurrency = min(max(cfg.Concurrency, 4), 16, n)
	if wl.size == 0 {
		pc.Concurrency = min(16, n) // empty blobs: as many in flight as the preload allows
	}
	if wl.size >= blobLarge {
		pc.Concurrency = 1 // one large blob at a time: bounded server and client memory
	}
	unmeasured := *t
	unmeasured.pid = 0
	var next sync.Mutex
	k := 0
	put := workload{name: "preload", summary: "put blobs", blob: true, op: func(ctx context.Context, w *worker) (int, error) {
		next.Lock()
		i := k
		k++
		next.Unlock()
		if i >= n {
			return 0, nil
		}
		// A put is idempotent, so a transient failure (a server closing a kept-alive
		// connection) is retried rather than losing a long preload; a lasting one still
		// fails it.
		var err error
		for range preloadAttempts {
			if _, err = cc.NewBlockBlobClient(names[i]).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), nil); err == nil || ctx.Err() != nil {
				break
			}
		}
		return 1, err
	}}
	p, err := measure(ctx, &pc, &unmeasured, put, workerState{}, 0, prog)
	if err == nil && p.errors > 0 {
		err = errors.New(p.firstErr)
	}
	return names, err
}
