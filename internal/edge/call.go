package edge

import (
	"context"
	"net/http"
	"net/netip"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/auth"
)

// Call is one request in flight. Nothing may keep FC, or bytes taken from it, after the
// handler returns: fasthttp reuses them for the connection's next request.
type Call struct {
	FC *fasthttp.RequestCtx
	// Ctx is the context of the service calls. fasthttp has no per-request cancellation (it
	// does not watch the connection while a handler runs); every operation is bounded anyway.
	Ctx context.Context
	// Method, Host and Header are the request's, as strings.
	Method    string
	Host      string
	Header    Header
	RequestID string
	Start     time.Time
	Account   string
	// PathStyle is true when the account is the first path segment.
	PathStyle bool
	// Secondary is true for the account-secondary endpoint.
	Secondary bool
	// RawPath is the still-encoded path after the account segment (starting with "/").
	RawPath string
	// TargetPath and TargetQuery are the request-target as sent, still percent-encoded.
	TargetPath, TargetQuery string
	// XMLErrors selects the storage-common XML error body; the pipeline sets it for
	// services whose errors are always XML, a JSON service sets it per operation.
	XMLErrors bool
	// JSONErrorType is the Content-Type of a JSON error body ("" = minimal metadata).
	JSONErrorType string
	// Status is the status sent (0 until a reply is written).
	Status int
	// Op is the operation for the request log (0 until routed); ErrCode is the Azure error
	// code sent, AuthDetail why authentication failed.
	Op         auth.Operation
	ErrCode    string
	AuthDetail string
	// Part is the request's state in the partition layer.
	Part PartitionCall
}

// BaseURL is the service root as clients address it.
func (c *Call) BaseURL() string {
	scheme := "http"
	if c.FC.IsTLS() {
		scheme = "https"
	}
	if c.PathStyle {
		return scheme + "://" + c.Host + "/" + c.Account
	}
	return scheme + "://" + c.Host
}

// ClientIP is the connection's peer address (a SAS may restrict it).
func (c *Call) ClientIP() netip.Addr {
	a, _ := netip.AddrFromSlice(c.FC.RemoteIP())
	return a.Unmap()
}

// MethodString returns the request method as a string, without allocating for the methods
// the services know.
func MethodString(m []byte) string {
	switch string(m) {
	case http.MethodGet:
		return http.MethodGet
	case http.MethodPost:
		return http.MethodPost
	case http.MethodPut:
		return http.MethodPut
	case http.MethodDelete:
		return http.MethodDelete
	case http.MethodHead:
		return http.MethodHead
	case http.MethodOptions:
		return http.MethodOptions
	case http.MethodPatch:
		return http.MethodPatch
	case "MERGE":
		return "MERGE"
	}
	return string(m)
}

// Header reads request headers by name (case-insensitively). The strings it returns are
// copies, safe to keep after the request. It satisfies auth.Header and auth.HeaderLister.
type Header struct {
	H *fasthttp.RequestHeader
	// Fold is set when the server keeps header names as sent (a service that must echo
	// metadata names in their case, Blob): lookups then compare names case-insensitively.
	Fold bool
}

// Peek returns the first value of key (valid until the request ends).
func (r Header) Peek(key string) []byte {
	v := r.H.Peek(key)
	if len(v) > 0 || !r.Fold {
		return v
	}
	for k, v := range r.H.All() {
		if foldEqual(k, key) {
			return v
		}
	}
	return nil
}

// foldEqual reports whether header name k equals key, ASCII case-insensitively (header names
// are ASCII tokens). Most lookups are for headers a request does not have, so a length
// mismatch must cost nothing: strings.EqualFold over string(k) compared letters first, and
// was 6% of a 1 KiB Get Blob's server CPU.
func foldEqual(k []byte, key string) bool {
	if len(k) != len(key) {
		return false
	}
	for i := range len(k) {
		a, b := k[i], key[i]
		if a == b {
			continue
		}
		if a|0x20 != b|0x20 || a|0x20 < 'a' || a|0x20 > 'z' {
			return false
		}
	}
	return true
}

// Get returns the first value of key, or "".
func (r Header) Get(key string) string { return string(r.Peek(key)) }

// Has reports whether key is present with a non-empty value.
func (r Header) Has(key string) bool { return len(r.Peek(key)) > 0 }

// Values returns every value of key in order (nil when absent).
func (r Header) Values(key string) []string {
	if r.Fold {
		var out []string
		for k, v := range r.H.All() {
			if foldEqual(k, key) {
				out = append(out, string(v))
			}
		}
		return out
	}
	all := r.H.PeekAll(key)
	if len(all) == 0 {
		return nil
	}
	out := make([]string, len(all))
	for i, v := range all {
		out[i] = string(v)
	}
	return out
}

// EachHeader calls fn for every header in the order sent (for the Blob/Queue Shared Key,
// which signs every x-ms-* header).
func (r Header) EachHeader(fn func(name, value string)) {
	for k, v := range r.H.All() {
		fn(string(k), string(v))
	}
}

// EachHeaderBytes is EachHeader without copies: name and value are valid only during fn.
func (r Header) EachHeaderBytes(fn func(name, value []byte)) {
	for k, v := range r.H.All() {
		fn(k, v)
	}
}

var _ auth.HeaderLister = Header{}
