package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/httpserve"
)

// jsonContentType is what Azure sends with JSON (minimal metadata) answers.
const jsonContentType = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"

// msgBodyTooLarge is net/http's wording, which the null server answered with before it moved to
// fasthttp; kept so that answers are unchanged.
const msgBodyTooLarge = "http: request body too large"

// nullHandler answers Table requests with canned responses and does no storage work, so a client
// measured against it sees the request-rate ceiling of the machine. It ignores authentication.
type nullHandler struct {
	cfg    NullConfig
	data   string // canned Data property value
	reqID  atomic.Uint64
	mu     sync.Mutex
	tables map[string]struct{}
	pages  map[int][]byte // rendered entity arrays by page length; at most maxPageSize entries; never modified once stored
}

func newNullHandler(cfg NullConfig) *nullHandler {
	cfg = cfg.withDefaults()
	return &nullHandler{
		cfg:    cfg,
		data:   strings.Repeat("x", cfg.EntitySize),
		tables: make(map[string]struct{}),
		pages:  make(map[int][]byte),
	}
}

// NewNullHandler returns the null server's request handler.
func NewNullHandler(cfg NullConfig) fasthttp.RequestHandler {
	return newNullHandler(cfg).serve
}

func (h *nullHandler) serve(ctx *fasthttp.RequestCtx) {
	h.setCommonHeaders(ctx)
	rawPath, rawQuery := splitTarget(ctx.Request.Header.RequestURI())
	q := fasthttp.AcquireArgs()
	defer fasthttp.ReleaseArgs(q)
	q.ParseBytes(rawQuery)
	if _, after, ok := bytes.Cut(bytes.TrimPrefix(rawPath, []byte("/")), []byte("/")); ok && queueShape(after, ctx.Method()) {
		h.serveQueue(ctx, after)
		return
	}
	if q.Has("comp") || q.Has("restype") {
		h.fail(ctx, fasthttp.StatusNotImplemented, "NotImplemented", "the null server answers only table and entity operations")
		return
	}
	path, err := url.PathUnescape(string(rawPath))
	if err != nil {
		h.fail(ctx, fasthttp.StatusBadRequest, "InvalidUri", err.Error())
		return
	}
	res, err := parseResource(path)
	if err != nil {
		h.fail(ctx, fasthttp.StatusBadRequest, "InvalidUri", err.Error())
		return
	}
	switch {
	case res.kind == resTables && ctx.IsPost():
		h.createTable(ctx)
	case res.kind == resTables && ctx.IsGet():
		h.listTables(ctx)
	case res.kind == resTable && ctx.IsDelete():
		h.mu.Lock()
		delete(h.tables, strings.ToLower(res.table))
		h.mu.Unlock()
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	case res.kind == resBatch && ctx.IsPost():
		h.batch(ctx)
	case res.kind == resCollection && ctx.IsPost():
		h.insert(ctx)
	case res.kind == resCollection && ctx.IsGet():
		h.query(ctx, q)
	case res.kind == resEntity && ctx.IsGet():
		h.getEntity(ctx, res)
	case res.kind == resEntity && (ctx.IsPut() || ctx.IsPatch() || ctx.IsDelete()):
		if len(ctx.PostBody()) > maxEntityBody {
			h.fail(ctx, fasthttp.StatusRequestEntityTooLarge, "RequestBodyTooLarge", msgBodyTooLarge)
			return
		}
		if !ctx.IsDelete() {
			ctx.Response.Header.Set("ETag", cannedETag)
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	default:
		h.fail(ctx, fasthttp.StatusMethodNotAllowed, "MethodNotAllowed", string(ctx.Method())+" is not supported on this resource")
	}
}

// setCommonHeaders sets the headers every answer carries.
func (h *nullHandler) setCommonHeaders(ctx *fasthttp.RequestCtx) {
	var id [20]byte
	ctx.Response.Header.SetBytesV("x-ms-request-id", strconv.AppendUint(id[:0], h.reqID.Add(1), 10))
	ctx.Response.Header.Set("x-ms-version", "2019-02-02")
	ctx.Response.Header.Set("DataServiceVersion", "3.0;")
}

// requestError answers a request fasthttp could not read. A body over MaxRequestBodySize gets
// Azure's error, as a smaller but still too large one does; the rest get plain answers, as
// net/http gave.
func (h *nullHandler) requestError(ctx *fasthttp.RequestCtx, err error) {
	httpserve.Linger(ctx) // the client may still be sending: let it read the answer
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		h.setCommonHeaders(ctx)
		h.fail(ctx, fasthttp.StatusRequestEntityTooLarge, "RequestBodyTooLarge", msgBodyTooLarge)
	case errors.As(err, &small):
		ctx.Error("431 Request Header Fields Too Large", fasthttp.StatusRequestHeaderFieldsTooLarge)
	case errors.As(err, &ne) && ne.Timeout():
		ctx.Error("408 Request Timeout", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("400 Bad Request", fasthttp.StatusBadRequest)
	}
}

func (h *nullHandler) createTable(ctx *fasthttp.RequestCtx) {
	var req struct{ TableName string }
	// A decoder, not Unmarshal, so that trailing bytes after the object are ignored as before;
	// the body is cut at 64 KiB, where the net/http version stopped reading.
	body := ctx.PostBody()
	body = body[:min(len(body), 64<<10)]
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&req); err != nil || req.TableName == "" {
		h.fail(ctx, fasthttp.StatusBadRequest, "InvalidInput", "body must be {\"TableName\":\"...\"}")
		return
	}
	key := strings.ToLower(req.TableName)
	h.mu.Lock()
	_, exists := h.tables[key]
	if !exists && len(h.tables) < maxNullTables {
		h.tables[key] = struct{}{}
	}
	h.mu.Unlock()
	if exists {
		h.fail(ctx, fasthttp.StatusConflict, "TableAlreadyExists", "The table specified already exists.")
		return
	}
	if wantsNoContent(ctx) {
		ctx.Response.Header.Set("Preference-Applied", "return-no-content")
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return
	}
	body, _ = json.Marshal(map[string]string{"TableName": req.TableName}) // cannot fail for a string map
	writeJSON(ctx, fasthttp.StatusCreated, body)
}

func (h *nullHandler) listTables(ctx *fasthttp.RequestCtx) {
	h.mu.Lock()
	names := make([]map[string]string, 0, len(h.tables))
	for name := range h.tables {
		names = append(names, map[string]string{"TableName": name})
	}
	h.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"value": names}) // cannot fail for these types
	writeJSON(ctx, fasthttp.StatusOK, body)
}

func (h *nullHandler) insert(ctx *fasthttp.RequestCtx) {
	body := ctx.PostBody()
	if len(body) > maxEntityBody {
		h.fail(ctx, fasthttp.StatusRequestEntityTooLarge, "RequestBodyTooLarge", msgBodyTooLarge)
		return
	}
	ctx.Response.Header.Set("ETag", cannedETag)
	if wantsNoContent(ctx) {
		ctx.Response.Header.Set("Preference-Applied", "return-no-content")
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return
	}
	if !json.Valid(body) {
		h.fail(ctx, fasthttp.StatusBadRequest, "InvalidInput", "entity body is not JSON")
		return
	}
	// Echoing the request is a valid "return-content" answer for the SDK, which only decodes it.
	ctx.Response.Header.Set("Preference-Applied", "return-content")
	writeJSON(ctx, fasthttp.StatusCreated, body)
}

func (h *nullHandler) getEntity(ctx *fasthttp.RequestCtx, res resource) {
	// Render into the response's own pooled buffer rather than a new slice.
	b := ctx.Response.SwapBody(nil)[:0]
	b = append(b, `{"odata.etag":`...)
	b = appendJSONString(b, cannedETag)
	b = h.appendEntityBody(b, res.pk, res.rk, 0)
	ctx.Response.SwapBody(b)
	ctx.Response.Header.Set("ETag", cannedETag)
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(jsonContentType)
}

// appendEntityBody appends the properties after odata.etag and the closing brace.
func (h *nullHandler) appendEntityBody(b []byte, pk, rk string, n int) []byte {
	b = append(b, `,"PartitionKey":`...)
	b = appendJSONString(b, pk)
	b = append(b, `,"RowKey":`...)
	b = appendJSONString(b, rk)
	b = append(b, `,"Timestamp":"`+cannedStamp+`","Category":"c`...)
	b = append(b, byte('0'+n/10%10), byte('0'+n%10))
	b = append(b, `","N":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `,"Data":"`...)
	b = append(b, h.data...)
	return append(b, `"}`...)
}

func (h *nullHandler) query(ctx *fasthttp.RequestCtx, q *fasthttp.Args) {
	t := q.Peek("$top")
	if len(t) == 0 {
		writeCachedJSON(ctx, h.pageBody(h.cfg.ScanSize))
		return
	}
	size, err := strconv.Atoi(string(t))
	if err != nil || size < 1 || size > maxPageSize {
		h.fail(ctx, fasthttp.StatusBadRequest, "InvalidInput", "$top must be an integer from 1 to 1000")
		return
	}
	page := 0
	if tok := string(q.Peek("NextRowKey")); tok != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(tok, "n"))
		if err != nil || !strings.HasPrefix(tok, "n") || n < 1 || n >= h.cfg.Pages {
			h.fail(ctx, fasthttp.StatusBadRequest, "InvalidInput", "bad continuation token")
			return
		}
		page = n
	}
	if page+1 < h.cfg.Pages {
		var next [24]byte
		ctx.Response.Header.Set("x-ms-continuation-NextPartitionKey", "null")
		ctx.Response.Header.SetBytesV("x-ms-continuation-NextRowKey", strconv.AppendInt(append(next[:0], 'n'), int64(page+1), 10))
	}
	writeCachedJSON(ctx, h.pageBody(size))
}

// pageBody returns the cached response body holding size canned entities. The caller must not
// modify it.
func (h *nullHandler) pageBody(size int) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if b, ok := h.pages[size]; ok {
		return b
	}
	b := []byte(`{"value":[`)
	for i := range size {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"odata.etag":`...)
		b = appendJSONString(b, cannedETag)
		b = h.appendEntityBody(b, "null", fmt.Sprintf("r%08d", i), i)
	}
	b = append(b, "]}"...)
	h.pages[size] = b
	return b
}

func (h *nullHandler) batch(ctx *fasthttp.RequestCtx) {
	n, err := countBatchOps(string(ctx.Request.Header.ContentType()), bytes.NewReader(ctx.PostBody()))
	if err != nil {
		h.fail(ctx, fasthttp.StatusBadRequest, "InvalidInput", err.Error())
		return
	}
	body, ct := batchResponse(strconv.FormatUint(h.reqID.Load(), 16), n, cannedETag)
	ctx.SetContentType(ct)
	ctx.SetStatusCode(fasthttp.StatusAccepted)
	ctx.SetBodyString(body)
}

// fail writes an Azure-style JSON error. fasthttp has read the whole body already, so the
// connection stays reusable without draining it.
func (h *nullHandler) fail(ctx *fasthttp.RequestCtx, status int, code, msg string) {
	body, _ := json.Marshal(map[string]any{"odata.error": map[string]any{
		"code":    code,
		"message": map[string]string{"lang": "en-US", "value": msg},
	}})
	ctx.Response.Header.Set("x-ms-error-code", code)
	writeJSON(ctx, status, body)
}

func wantsNoContent(ctx *fasthttp.RequestCtx) bool {
	return containsFold(ctx.Request.Header.Peek("Prefer"), "return-no-content")
}

// containsFold reports whether sub (lower-case ASCII) occurs in s, ignoring ASCII case.
func containsFold(s []byte, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(string(s[i:i+len(sub)]), sub) {
			return true
		}
	}
	return false
}

// writeJSON answers with a copy of body.
func writeJSON(ctx *fasthttp.RequestCtx, status int, body []byte) {
	ctx.SetStatusCode(status)
	ctx.SetContentType(jsonContentType)
	ctx.SetBody(body)
}

// writeCachedJSON answers 200 with body without copying it; body must never change.
func writeCachedJSON(ctx *fasthttp.RequestCtx, body []byte) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(jsonContentType)
	ctx.Response.SetBodyRaw(body)
}

// splitTarget splits a request-target into its still-encoded path and query. The path is taken
// as sent, as net/http did: fasthttp's URI would also collapse "//" and dot segments, which can
// occur inside quoted keys. An absolute-form target (http://host/path) is reduced to its path.
func splitTarget(t []byte) (path, query []byte) {
	if len(t) > 0 && t[0] != '/' {
		if _, rest, ok := bytes.Cut(t, []byte("://")); ok {
			t = nil
			if i := bytes.IndexAny(rest, "/?"); i >= 0 {
				t = rest[i:]
			}
		}
	}
	path, query, _ = bytes.Cut(t, []byte("?"))
	return path, query
}

// appendJSONString appends s as a JSON string literal, byte for byte as json.Marshal renders
// it. Plain printable ASCII, the usual key, is copied directly.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // marshalling a string cannot fail
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
