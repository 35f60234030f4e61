package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// NullConfig shapes the null server's canned answers.
type NullConfig struct {
	EntitySize int // length of the Data property of canned entities (default 256)
	Pages      int // pages a query with $top returns before its continuation ends (default 3, at most 1000)
	// ScanSize is how many entities a query without $top returns, in one page (default 100, at
	// most 1000). The bench pages with $top and scans without it, so this mimics a selective scan.
	ScanSize int
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

// NullServer serves the null handler on ln until ctx ends, then shuts down gracefully.
func NullServer(ctx context.Context, ln net.Listener, cfg NullConfig) error {
	srv := &http.Server{
		Handler:           NewNullHandler(cfg),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // Serve returns ErrServerClosed either way
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("null server: %w", err)
	}
	return nil
}

// nullHandler answers Table requests with canned responses and does no storage work, so a client
// measured against it sees the request-rate ceiling of the machine. It ignores authentication.
type nullHandler struct {
	cfg    NullConfig
	data   string // canned Data property value
	reqID  atomic.Uint64
	mu     sync.Mutex
	tables map[string]struct{}
	pages  map[int][]byte // rendered entity arrays by page length; at most maxPageSize entries
}

// NewNullHandler returns the null server's http.Handler.
func NewNullHandler(cfg NullConfig) http.Handler {
	cfg = cfg.withDefaults()
	return &nullHandler{
		cfg:    cfg,
		data:   strings.Repeat("x", cfg.EntitySize),
		tables: make(map[string]struct{}),
		pages:  make(map[int][]byte),
	}
}

func (h *nullHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("x-ms-request-id", strconv.FormatUint(h.reqID.Add(1), 10))
	hdr.Set("x-ms-version", "2019-02-02")
	hdr.Set("DataServiceVersion", "3.0;")
	if r.URL.Query().Has("comp") || r.URL.Query().Has("restype") {
		h.fail(w, r, http.StatusNotImplemented, "NotImplemented", "the null server answers only table and entity operations")
		return
	}
	res, err := parseResource(r.URL.Path)
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, "InvalidUri", err.Error())
		return
	}
	switch {
	case res.kind == resTables && r.Method == http.MethodPost:
		h.createTable(w, r)
	case res.kind == resTables && r.Method == http.MethodGet:
		h.listTables(w)
	case res.kind == resTable && r.Method == http.MethodDelete:
		h.mu.Lock()
		delete(h.tables, strings.ToLower(res.table))
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case res.kind == resBatch && r.Method == http.MethodPost:
		h.batch(w, r)
	case res.kind == resCollection && r.Method == http.MethodPost:
		h.insert(w, r)
	case res.kind == resCollection && r.Method == http.MethodGet:
		h.query(w, r)
	case res.kind == resEntity && r.Method == http.MethodGet:
		h.getEntity(w, res)
	case res.kind == resEntity && (r.Method == http.MethodPut || r.Method == http.MethodPatch || r.Method == http.MethodDelete):
		if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxEntityBody)); err != nil {
			h.fail(w, r, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge", err.Error())
			return
		}
		if r.Method != http.MethodDelete {
			hdr.Set("ETag", cannedETag)
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		h.fail(w, r, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method+" is not supported on this resource")
	}
}

func (h *nullHandler) createTable(w http.ResponseWriter, r *http.Request) {
	var req struct{ TableName string }
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil || req.TableName == "" {
		h.fail(w, r, http.StatusBadRequest, "InvalidInput", "body must be {\"TableName\":\"...\"}")
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
		h.fail(w, r, http.StatusConflict, "TableAlreadyExists", "The table specified already exists.")
		return
	}
	if wantsNoContent(r) {
		w.Header().Set("Preference-Applied", "return-no-content")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, _ := json.Marshal(map[string]string{"TableName": req.TableName}) // cannot fail for a string map
	writeJSON(w, http.StatusCreated, body)
}

func (h *nullHandler) listTables(w http.ResponseWriter) {
	h.mu.Lock()
	names := make([]map[string]string, 0, len(h.tables))
	for name := range h.tables {
		names = append(names, map[string]string{"TableName": name})
	}
	h.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"value": names}) // cannot fail for these types
	writeJSON(w, http.StatusOK, body)
}

func (h *nullHandler) insert(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEntityBody))
	if err != nil {
		h.fail(w, r, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge", err.Error())
		return
	}
	w.Header().Set("ETag", cannedETag)
	if wantsNoContent(r) {
		w.Header().Set("Preference-Applied", "return-no-content")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !json.Valid(body) {
		h.fail(w, r, http.StatusBadRequest, "InvalidInput", "entity body is not JSON")
		return
	}
	// Echoing the request is a valid "return-content" answer for the SDK, which only decodes it.
	w.Header().Set("Preference-Applied", "return-content")
	writeJSON(w, http.StatusCreated, body)
}

func (h *nullHandler) getEntity(w http.ResponseWriter, res resource) {
	var b []byte
	b = append(b, `{"odata.etag":`...)
	b = appendJSONString(b, cannedETag)
	b = h.appendEntityBody(b, res.pk, res.rk, 0)
	w.Header().Set("ETag", cannedETag)
	writeJSON(w, http.StatusOK, b)
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

func (h *nullHandler) query(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	t := q.Get("$top")
	if t == "" {
		writeJSON(w, http.StatusOK, h.pageBody(h.cfg.ScanSize))
		return
	}
	size, err := strconv.Atoi(t)
	if err != nil || size < 1 || size > maxPageSize {
		h.fail(w, r, http.StatusBadRequest, "InvalidInput", "$top must be an integer from 1 to 1000")
		return
	}
	page := 0
	if tok := q.Get("NextRowKey"); tok != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(tok, "n"))
		if err != nil || !strings.HasPrefix(tok, "n") || n < 1 || n >= h.cfg.Pages {
			h.fail(w, r, http.StatusBadRequest, "InvalidInput", "bad continuation token")
			return
		}
		page = n
	}
	if page+1 < h.cfg.Pages {
		w.Header().Set("x-ms-continuation-NextPartitionKey", "null")
		w.Header().Set("x-ms-continuation-NextRowKey", "n"+strconv.Itoa(page+1))
	}
	writeJSON(w, http.StatusOK, h.pageBody(size))
}

// pageBody returns the cached response body holding size canned entities.
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

func (h *nullHandler) batch(w http.ResponseWriter, r *http.Request) {
	n, err := countBatchOps(r.Header.Get("Content-Type"), http.MaxBytesReader(w, r.Body, maxBatchBody))
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, "InvalidInput", err.Error())
		return
	}
	body, ct := batchResponse(strconv.FormatUint(h.reqID.Load(), 16), n, cannedETag)
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, body) // a write error means the client went away
}

// fail writes an Azure-style JSON error after draining what is left of the body.
func (h *nullHandler) fail(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxBatchBody)) // keep the connection reusable
	body, _ := json.Marshal(map[string]any{"odata.error": map[string]any{
		"code":    code,
		"message": map[string]string{"lang": "en-US", "value": msg},
	}})
	w.Header().Set("x-ms-error-code", code)
	writeJSON(w, status, body)
}

func wantsNoContent(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("Prefer")), "return-no-content")
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // a write error means the client went away
}

// appendJSONString appends s as a JSON string literal.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // marshalling a string cannot fail
	return append(b, q...)
}
