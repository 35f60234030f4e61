package server

import (
	"net/http"
	"net/netip"

	"github.com/valyala/fasthttp"
)

// methodString returns the request method as a string, without allocating for the methods
// the service knows.
func methodString(m []byte) string {
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

// requestHeader reads request headers by name (case-insensitively). The strings it returns
// are copies, safe to keep after the request. It satisfies auth.Header.
type requestHeader struct{ h *fasthttp.RequestHeader }

// Get returns the first value of key, or "".
func (r requestHeader) Get(key string) string { return string(r.h.Peek(key)) }

// has reports whether key is present with a non-empty value.
func (r requestHeader) has(key string) bool { return len(r.h.Peek(key)) > 0 }

// Values returns every value of key in order (nil when absent).
func (r requestHeader) Values(key string) []string {
	all := r.h.PeekAll(key)
	if len(all) == 0 {
		return nil
	}
	out := make([]string, len(all))
	for i, v := range all {
		out[i] = string(v)
	}
	return out
}

// clientIP is the connection's peer address (a SAS may restrict it).
func clientIP(fc *fasthttp.RequestCtx) netip.Addr {
	a, _ := netip.AddrFromSlice(fc.RemoteIP())
	return a.Unmap()
}
