package load

import (
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/httpserve"
)

// The null server's Blob listener (null-server --blob-addr) answers the requests the blob
// workloads send (create and delete container, Put Blob, Get Blob, list blobs) with canned
// responses, so a Blob benchmark has a do-nothing endpoint to compare with. It reads each
// upload's body to the end (a client cannot be answered before it has sent its bytes) and
// sends each download's bytes from one shared buffer, so its cost is the HTTP layer only.

// Bounds of the null Blob listener.
const (
	maxNullBlobs     = 100000  // blob sizes remembered for downloads; beyond, Put Blob is not remembered
	maxNullBlobBytes = 1 << 30 // largest download it serves (the shared zero buffer)
	nullListPage     = 5000    // names per list page (Azure's default maxresults)
	maxNullList      = 5000000 // --list-blobs
)

type nullBlobHandler struct {
	reqID atomic.Uint64
	list  int // blobs a listing returns

	mu    sync.Mutex
	sizes map[string]int64 // blob path -> size of its last Put Blob
	zeros []byte           // shared download bytes, grown to the largest blob put
	pages map[int][]byte   // rendered list pages by page number; never modified once stored
}

func newNullBlobHandler(listBlobs int) *nullBlobHandler {
	if listBlobs <= 0 {
		listBlobs = 100000
	}
	return &nullBlobHandler{list: min(listBlobs, maxNullList), sizes: make(map[string]int64), pages: make(map[int][]byte)}
}

// NewNullBlobHandler returns the null server's Blob request handler; listBlobs is how many
// blobs a container listing returns.
func NewNullBlobHandler(listBlobs int) fasthttp.RequestHandler {
	return newNullBlobHandler(listBlobs).serve
}

func (h *nullBlobHandler) serve(ctx *fasthttp.RequestCtx) {
	var id [20]byte
	ctx.Response.Header.SetBytesV("x-ms-request-id", strconv.AppendUint(id[:0], h.reqID.Add(1), 10))
	ctx.Response.Header.Set("x-ms-version", "2025-11-05")
	rawPath, rawQuery := splitTarget(ctx.Request.Header.RequestURI())
	q := fasthttp.AcquireArgs()
	defer fasthttp.ReleaseArgs(q)
	q.ParseBytes(rawQuery)
	// Path style: /account/container[/blob].
	rest := bytes.TrimPrefix(rawPath, []byte("/"))
	_, rest, _ = bytes.Cut(rest, []byte("/"))
	container, blob, _ := bytes.Cut(rest, []byte("/"))
	isContainer := string(q.Peek("restype")) == "container"
	switch {
	case len(container) == 0:
		h.fail(ctx, fasthttp.StatusBadRequest, "InvalidUri", "no container in the path")
	case isContainer && len(blob) == 0 && string(q.Peek("comp")) == "list" && ctx.IsGet():
		h.listPage(ctx, container, q.Peek("marker"))
	case isContainer && len(blob) == 0 && ctx.IsPut():
		h.stamp(ctx)
		ctx.SetStatusCode(fasthttp.StatusCreated)
	case isContainer && len(blob) == 0 && ctx.IsDelete():
		ctx.SetStatusCode(fasthttp.StatusAccepted)
	case len(blob) > 0 && ctx.IsPut() && !q.Has("comp"):
		h.putBlob(ctx, rawPath)
	case len(blob) > 0 && (ctx.IsGet() || ctx.IsHead()) && !q.Has("comp"):
		h.getBlob(ctx, rawPath)
	default:
		h.fail(ctx, fasthttp.StatusNotImplemented, "NotImplemented", "the null server answers only the bench's Blob requests")
	}
}

func (h *nullBlobHandler) stamp(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("ETag", `"0x8DC0000000000001"`)
	ctx.Response.Header.Set("Last-Modified", "Mon, 01 Jan 2026 00:00:00 GMT")
}

func (h *nullBlobHandler) putBlob(ctx *fasthttp.RequestCtx, path []byte) {
	var n int64
	if r := ctx.RequestBodyStream(); r != nil {
		var err error
		if n, err = io.Copy(io.Discard, r); err != nil {
			h.fail(ctx, fasthttp.StatusBadRequest, "InvalidInput", "reading the body: "+err.Error())
			return
		}
	} else {
		n = int64(len(ctx.Request.Body()))
	}
	h.mu.Lock()
	if _, ok := h.sizes[string(path)]; ok || len(h.sizes) < maxNullBlobs {
		h.sizes[string(path)] = n
	}
	if n <= maxNullBlobBytes && int64(len(h.zeros)) < n {
		h.zeros = make([]byte, n)
	}
	h.mu.Unlock()
	h.stamp(ctx)
	ctx.Response.Header.Set("x-ms-request-server-encrypted", "true")
	ctx.SetStatusCode(fasthttp.StatusCreated)
}

func (h *nullBlobHandler) getBlob(ctx *fasthttp.RequestCtx, path []byte) {
	h.mu.Lock()
	n, ok := h.sizes[string(path)]
	zeros := h.zeros
	h.mu.Unlock()
	if !ok || n > int64(len(zeros)) {
		h.fail(ctx, fasthttp.StatusNotFound, "BlobNotFound", "The specified blob does not exist.")
		return
	}
	h.stamp(ctx)
	ctx.Response.Header.Set("x-ms-blob-type", "BlockBlob")
	ctx.Response.Header.SetContentType("application/octet-stream")
	ctx.SetStatusCode(fasthttp.StatusOK)
	if ctx.IsHead() {
		ctx.Response.SkipBody = true
		ctx.Response.Header.SetContentLength(int(n))
		return
	}
	ctx.Response.SetBodyRaw(zeros[:n]) // shared and never written once handed out: no copy
}

// listPage answers one page of a listing of h.list blobs named blob-0000000...; the marker
// is the page number.
func (h *nullBlobHandler) listPage(ctx *fasthttp.RequestCtx, container, marker []byte) {
	page := 0
	if len(marker) > 0 {
		p, err := strconv.Atoi(string(marker))
		if err != nil || p < 0 {
			h.fail(ctx, fasthttp.StatusBadRequest, "InvalidQueryParameterValue", "bad marker")
			return
		}
		page = p
	}
	h.mu.Lock()
	body, ok := h.pages[page]
	if !ok {
		body = h.renderPage(page)
		if len(h.pages) < maxNullList/nullListPage {
			h.pages[page] = body
		}
	}
	h.mu.Unlock()
	ctx.Response.Header.SetContentType("application/xml")
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.SetBodyRaw(body)
}

func (h *nullBlobHandler) renderPage(page int) []byte {
	lo := min(page*nullListPage, h.list)
	hi := min(lo+nullListPage, h.list)
	b := make([]byte, 0, 600*(hi-lo)+256)
	b = append(b, `<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="http://127.0.0.1/devstoreaccount1/" ContainerName="c"><Blobs>`...)
	for i := lo; i < hi; i++ {
		b = append(b, "<Blob><Name>blob-"...)
		b = append(b, leftPad(strconv.Itoa(i), 7)...)
		b = append(b, "</Name><Properties><Creation-Time>Mon, 01 Jan 2026 00:00:00 GMT</Creation-Time><Last-Modified>Mon, 01 Jan 2026 00:00:00 GMT</Last-Modified><Etag>0x8DC0000000000001</Etag><Content-Length>0</Content-Length><Content-Type>application/octet-stream</Content-Type><Content-MD5>1B2M2Y8AsgTpgAmY7PhCfg==</Content-MD5><BlobType>BlockBlob</BlobType><AccessTier>Hot</AccessTier><AccessTierInferred>true</AccessTierInferred><LeaseStatus>unlocked</LeaseStatus><LeaseState>available</LeaseState><ServerEncrypted>true</ServerEncrypted></Properties></Blob>"...)
	}
	b = append(b, "</Blobs><NextMarker>"...)
	if hi < h.list {
		b = strconv.AppendInt(b, int64(page+1), 10)
	}
	b = append(b, "</NextMarker></EnumerationResults>"...)
	return b
}

func (h *nullBlobHandler) fail(ctx *fasthttp.RequestCtx, status int, code, msg string) {
	ctx.Response.Header.Set("x-ms-error-code", code)
	ctx.Response.Header.SetContentType("application/xml")
	ctx.SetStatusCode(status)
	ctx.SetBodyString(`<?xml version="1.0" encoding="utf-8"?><Error><Code>` + code + `</Code><Message>` + msg + `</Message></Error>`)
}

// nullBlobTimeout bounds a request on the Blob listener: a 256 MiB body on a busy machine.
const nullBlobTimeout = 10 * time.Minute

// NullBlobServer serves the null Blob handler on ln until ctx ends. Bodies stream, as on
// Tablo's Blob listener, so a large upload is read, not buffered.
func NullBlobServer(ctx context.Context, ln net.Listener, listBlobs int) error {
	h := newNullBlobHandler(listBlobs)
	return serveUntilDone(ctx, ln, &httpserve.Server{HTTP: &fasthttp.Server{
		Handler:              h.serve,
		Name:                 "Tablo-null",
		NoDefaultContentType: true,
		StreamRequestBody:    true,
		MaxRequestBodySize:   64 << 10, // what is read before the handler runs; the rest streams
		ReadBufferSize:       32 << 10,
		ReadTimeout:          nullBlobTimeout,
		WriteTimeout:         nullBlobTimeout,
		IdleTimeout:          2 * time.Minute,
		CloseOnShutdown:      true,
	}})
}
