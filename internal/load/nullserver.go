package load

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/httpserve"
)

// NullConfig shapes the null server's canned answers.
type NullConfig struct {
	EntitySize int // length of the Data property of canned entities (default 256)
	Pages      int // pages a query with $top returns before its continuation ends (default 3, at most 1000)
	// ScanSize is how many entities a query without $top returns, in one page (default 100, at
	// most 1000). The bench pages with $top and scans without it, so this mimics a selective scan.
	ScanSize int
	// BlobAddr, when set, is a second listener that answers the Blob workloads (path
	// style); a listing there returns ListBlobs empty blobs.
	BlobAddr  string
	ListBlobs int
}

func (c NullConfig) withDefaults() NullConfig {
	if c.EntitySize <= 0 {
		c.EntitySize = 256
	}
	if c.Pages <= 0 {
		c.Pages = 3
	}
	if c.ScanSize <= 0 {
		c.ScanSize = 100
	}
	c.ScanSize = min(c.ScanSize, maxPageSize)
	c.EntitySize = min(c.EntitySize, maxEntitySize)
	c.Pages = min(c.Pages, 1000)
	return c
}

// Limits shared by the bench and the null server.
const (
	maxPageSize   = 1000    // Azure's page size limit
	maxEntitySize = 1 << 20 // Azure's entity size limit
	maxEntityBody = 2 << 20 // entity request body cap: 1 MiB entity plus JSON overhead
	maxBatchBody  = 5 << 20 // $batch body cap: Azure's 4 MiB plus multipart overhead
	cannedETag    = `W/"datetime'2026-01-01T00%3A00%3A00.0000000Z'"`
	cannedStamp   = "2026-01-01T00:00:00.0000000Z"
	maxNullTables = 10000 // tables remembered for 409 answers; beyond this creates always succeed
)

// shutdownGrace bounds a graceful shutdown: a null request takes microseconds.
const shutdownGrace = 5 * time.Second

// NullServer serves the null handler on ln until ctx ends, then shuts down gracefully.
//
// It runs on fasthttp, like the real server, so that it stays the cheapest server this machine
// can run: net/http's per-request work (a background-read goroutine, deadline re-arming) would
// otherwise make the "ceiling" lower than what Tablo itself reaches.
func NullServer(ctx context.Context, ln net.Listener, cfg NullConfig) error {
	h := newNullHandler(cfg)
	return serveUntilDone(ctx, ln, &httpserve.Server{HTTP: &fasthttp.Server{
		Handler:              h.serve,
		ErrorHandler:         h.requestError,
		Name:                 "Tablo-null",
		NoDefaultContentType: true, // a reply without a body has no Content-Type, as before
		MaxRequestBodySize:   maxBatchBody,
		ReadBufferSize:       32 << 10, // request line and headers; keys in the URL can be long
		ReadTimeout:          10 * time.Second,
		IdleTimeout:          2 * time.Minute,
		CloseOnShutdown:      true,
	}})
}

// serveUntilDone serves srv on ln until ctx ends, then shuts it down gracefully.
func serveUntilDone(ctx context.Context, ln net.Listener, srv *httpserve.Server) error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served: // the listener failed (or was closed by someone else)
		if err != nil {
			return fmt.Errorf("null server: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	// Shutdown closes only the listeners Serve has registered: close ln too, in case ctx ended
	// before Serve got that far.
	_ = ln.Close()
	if serr := <-served; err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("null server: %w", err)
	}
	return nil
}
