package console

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/tablo/tablo/internal/auth"
)

// forwardHeaders are the request headers the browser may set on a forwarded request.
var forwardHeaders = []string{"Accept", "Content-Type", "If-Match", "Prefer", "DataServiceVersion", "MaxDataServiceVersion"}

// blobForwardHeaders are the further request headers of the Blob view (and its metadata, see
// forwardTo).
var blobForwardHeaders = []string{"x-ms-blob-type", "x-ms-blob-content-type", "x-ms-delete-snapshots"}

// blobReplyHeaders are the Blob service's response headers the browser sees, besides
// x-ms-meta-* and the content headers renamed by blobReplyRenamed.
var blobReplyHeaders = []string{"Content-Length", "Last-Modified", "Content-MD5", "x-ms-blob-type", "x-ms-access-tier",
	"x-ms-lease-state", "x-ms-creation-time", "x-ms-server-encrypted"}

// blobReplyRenamed are a blob's own content headers, passed as x-console-* so that the
// browser never acts on them: a blob is data, never a page of the console's origin.
var blobReplyRenamed = []string{"Content-Type", "Content-Encoding", "Content-Language", "Content-Disposition", "Cache-Control"}

// replyHeaders are the Table service's response headers the browser sees.
var replyHeaders = []string{"Content-Type", "ETag", "x-ms-approximate-messages-count", "x-ms-continuation-NextPartitionKey", "x-ms-continuation-NextRowKey",
	"x-ms-continuation-NextTableName", "x-tablo-query-plan", "x-ms-request-id", "Preference-Applied"}

// maxForwardBody bounds a forwarded request body: an entity is at most 1 MiB, a batch 4 MiB.
const maxForwardBody = 4 << 20

// maxBlobForwardBody bounds an upload from the Blob view: Azure's limit of one Put Blob. The
// body streams through, it is never held.
const maxBlobForwardBody = 5000 << 20

// forward returns the handler of /api/{service}/{account}[/{rest}]: it forwards the request
// to the service's endpoint as the account owner, signed with SharedKeyLite in the service's
// flavour, and returns the reply with its timing in x-console-elapsed-ms.
func (c *Console) forward(service string, svc auth.Service, base func() string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { c.forwardTo(w, r, service, svc, base()) }
}

func (c *Console) forwardTo(w http.ResponseWriter, r *http.Request, service string, svc auth.Service, baseURL string) {
	if baseURL == "" {
		apiError(w, http.StatusNotFound, "ServiceNotServed", "this server does not serve the "+service+" service")
		return
	}
	name := r.PathValue("account")
	if s := r.Context().Value(sessKey{}).(session); s.account != "" && s.account != name {
		apiError(w, http.StatusForbidden, "AccountNotSignedIn", "signed in as another account")
		return
	}
	var acct *auth.Account
	for i := range c.o.Accounts {
		if c.o.Accounts[i].Name == name {
			acct = &c.o.Accounts[i]
		}
	}
	if acct == nil || len(acct.Keys) == 0 {
		apiError(w, http.StatusNotFound, "AccountNotFound", "no such account")
		return
	}
	// The raw path after /api/{service}/ is kept as sent, so that escaped keys stay escaped;
	// it must name the account literally, so that the request signed is the one routed.
	raw := r.URL.EscapedPath()
	prefix := "/api/" + service + "/"
	if raw != prefix+name && !strings.HasPrefix(raw, prefix+name+"/") {
		apiError(w, http.StatusBadRequest, "InvalidUri", "the path must be "+prefix+"{account}/...")
		return
	}
	rawPath := "/" + raw[len(prefix):]
	target := baseURL + rawPath
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	limit, client := int64(maxForwardBody), c.o.Client
	if svc == auth.ServiceBlob {
		// Blob bodies are large: the client's overall timeout would cut a long download, and
		// the browser going away cancels the request anyway.
		limit = maxBlobForwardBody
		cl := *c.o.Client
		cl.Timeout = 0
		client = &cl
	}
	// An empty body goes as none: a non-nil reader with ContentLength 0 makes Go's client send
	// a chunked body, which a service may leave unread on the connection.
	var body io.Reader = http.NoBody
	if r.ContentLength != 0 {
		body = io.LimitReader(r.Body, limit)
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target, body)
	if err != nil {
		apiError(w, http.StatusBadRequest, "InvalidUri", err.Error())
		return
	}
	req.ContentLength = r.ContentLength
	for _, h := range forwardHeaders {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	if svc == auth.ServiceBlob {
		for _, h := range blobForwardHeaders {
			if v := r.Header.Get(h); v != "" {
				req.Header.Set(h, v)
			}
		}
		// Metadata comes as one form-encoded x-console-metadata header, because header names
		// reach Go canonicalised ("X-Ms-Meta-Camera") and Azure keeps a name's case as sent.
		if v := r.Header.Get("x-console-metadata"); v != "" {
			md, err := url.ParseQuery(v)
			if err != nil {
				apiError(w, http.StatusBadRequest, "InvalidMetadata", "x-console-metadata: "+err.Error())
				return
			}
			for k, vs := range md {
				req.Header["x-ms-meta-"+k] = vs[len(vs)-1:]
			}
		}
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	info := auth.RequestInfo{Method: r.Method, RawPath: rawPath, RawQuery: r.URL.RawQuery, Header: auth.HTTPHeader(req.Header), Account: name, PathStyle: true, Service: svc}
	req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKeyLite, info, acct.Keys[0]))
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		apiError(w, http.StatusBadGateway, "ServiceUnreachable", err.Error())
		return
	}
	defer resp.Body.Close()
	if svc == auth.ServiceBlob {
		blobReply(w.Header(), resp.Header)
	} else {
		for _, h := range replyHeaders {
			if v := resp.Header.Get(h); v != "" {
				w.Header().Set(h, v)
			}
		}
	}
	w.Header().Set("x-console-elapsed-ms", formatMillis(time.Since(start)))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// blobReply sets the headers of a forwarded Blob reply. Whatever a blob holds (an HTML page,
// a script), the browser gets an opaque attachment in a sandbox: stored data can never run as
// the console, whose scripts are allowed from its own origin.
func blobReply(dst, src http.Header) {
	for _, h := range replyHeaders {
		if v := src.Get(h); v != "" && h != "Content-Type" {
			dst.Set(h, v)
		}
	}
	for _, h := range blobReplyHeaders {
		if v := src.Get(h); v != "" {
			dst.Set(h, v)
		}
	}
	for k, vs := range src {
		if strings.HasPrefix(strings.ToLower(k), "x-ms-meta-") {
			dst[k] = vs
		}
	}
	for _, h := range blobReplyRenamed {
		if v := src.Get(h); v != "" {
			dst.Set("x-console-"+h, v)
		}
	}
	dst.Set("Content-Type", "application/octet-stream")
	dst.Set("Content-Disposition", "attachment")
	dst.Set("Content-Security-Policy", "sandbox; default-src 'none'")
}

func formatMillis(d time.Duration) string {
	b, _ := json.Marshal(float64(d.Microseconds()) / 1000)
	return string(b)
}

// partitions serves the partition layer's snapshot, limited to the session's account.
func (c *Console) partitions(w http.ResponseWriter, r *http.Request) {
	if c.o.Partitions == nil {
		apiError(w, http.StatusNotFound, "NoPartitionLayer", "partition statistics are not available")
		return
	}
	top := r.URL.Query().Get("top")
	if top == "" {
		top = "20"
	}
	snap, err := c.snapshot(r, top)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "PartitionLayer", err.Error())
		return
	}
	s := r.Context().Value(sessKey{}).(session)
	if s.account != "" {
		filterAccount(snap, s.account)
	}
	writeJSON(w, snap)
}

// snapshot asks the partition handler in-process for GET /partitions.
func (c *Console) snapshot(r *http.Request, top string) (map[string]any, error) {
	rec := httptest.NewRecorder()
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "/partitions?top="+url.QueryEscape(top), nil)
	c.o.Partitions.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// filterAccount keeps only one account's rows in a snapshot.
func filterAccount(snap map[string]any, account string) {
	for _, k := range []string{"accounts", "tables", "hottestPartitions"} {
		rows, _ := snap[k].([]any)
		var kept []any
		for _, row := range rows {
			m, _ := row.(map[string]any)
			if m["account"] == account || m["name"] == account && k == "accounts" {
				kept = append(kept, row)
			}
		}
		snap[k] = kept
	}
}

// server reports version, engine, uptime, request rates and connection strings.
func (c *Console) server(w http.ResponseWriter, r *http.Request) {
	s := r.Context().Value(sessKey{}).(session)
	type acct struct {
		Name             string  `json:"name"`
		ConnectionString string  `json:"connectionString"`
		KeyShown         bool    `json:"keyShown"`
		RequestsPerSec   float64 `json:"requestsPerSec"`
		Requests         float64 `json:"requests"`
	}
	var accts []acct
	for _, name := range c.accounts(s) {
		// Only the development account's key, which is public, is ever written out.
		key, shown := "<account key>", name == auth.DevAccountName
		if shown {
			key = auth.DevAccountKey
		}
		cs := "DefaultEndpointsProtocol=http;AccountName=" + name + ";AccountKey=" + key + ";"
		if c.o.QueueURL != "" {
			cs += "QueueEndpoint=" + c.o.QueueURL + "/" + name + ";"
		}
		if c.o.TableURL != "" {
			cs += "TableEndpoint=" + c.o.TableURL + "/" + name + ";"
		}
		if c.o.BlobURL != "" {
			cs += "BlobEndpoint=" + c.o.BlobURL + "/" + name + ";"
		}
		accts = append(accts, acct{Name: name, KeyShown: shown, ConnectionString: cs})
	}
	var rates []any
	if c.o.Partitions != nil {
		if snap, err := c.snapshot(r, "0"); err == nil {
			if s.account != "" {
				filterAccount(snap, s.account)
			}
			rates, _ = snap["accounts"].([]any)
			for i := range accts {
				for _, row := range rates {
					m, _ := row.(map[string]any)
					if m["name"] == accts[i].Name {
						accts[i].RequestsPerSec, _ = m["requestsPerSec"].(float64)
						accts[i].Requests, _ = m["requests"].(float64)
					}
				}
			}
		}
	}
	writeJSON(w, map[string]any{
		"version": c.o.Version, "engine": c.o.Engine, "go": runtime.Version(),
		"started": c.o.Started.UTC().Format(time.RFC3339), "uptimeSeconds": int64(time.Since(c.o.Started).Seconds()),
		"tableEndpoint": c.o.TableURL, "queueEndpoint": c.o.QueueURL, "blobEndpoint": c.o.BlobURL, "accounts": accts,
	})
}
