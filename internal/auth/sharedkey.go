package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

// Header gives access to request headers; http.Header satisfies it.
type Header interface {
	Get(key string) string
}

type emptyHeader struct{}

func (emptyHeader) Get(string) string { return "" }

// orEmpty lets a RequestInfo without headers behave as one with no headers set.
func orEmpty(h Header) Header {
	if h == nil {
		return emptyHeader{}
	}
	return h
}

// RequestInfo is what the server knows about a request when checking Shared Key
// authentication.
type RequestInfo struct {
	Method string
	// RawPath is the path exactly as on the request line: before '?', still percent-encoded
	// (in Go, r.RequestURI up to '?', never r.URL.Path). In path style it starts with
	// "/{account}" (or "/{account}-secondary").
	RawPath string
	// RawQuery is the query string as sent, without '?'.
	RawQuery string
	Header   Header
	// Account is the account addressed by the URL, without any "-secondary" suffix.
	Account string
	// PathStyle reports that the account was taken from the first path segment
	// (emulator URLs such as http://127.0.0.1:10002/devstoreaccount1/Tables).
	PathStyle bool
	// Secondary reports that the URL addressed the secondary endpoint ({account}-secondary).
	Secondary bool

	// Clock-skew check: when MaxClockSkew > 0, a request whose date is further than that from
	// Now is rejected (403 AuthenticationFailed) and an unparseable date is 400
	// InvalidHeaderValue. Zero disables the check (the default for a local emulator: containers
	// and test clocks drift, and Azurite does not check either).
	Now          time.Time
	MaxClockSkew time.Duration
}

// SplitRequestURI splits a request-target as sent (Go: r.RequestURI) into the raw path and raw
// query, both still percent-encoded, for RequestInfo. An absolute-form target
// ("http://host:port/p?q") yields its path; an empty path is "/".
func SplitRequestURI(target string) (rawPath, rawQuery string) {
	if i := strings.Index(target, "://"); i > 0 && !strings.ContainsAny(target[:i], "/?") {
		rest := target[i+3:]
		if j := strings.IndexAny(rest, "/?"); j >= 0 {
			target = rest[j:]
		} else {
			target = ""
		}
	}
	rawPath, rawQuery, _ = strings.Cut(target, "?")
	if rawPath == "" {
		rawPath = "/"
	}
	return rawPath, rawQuery
}

// StringToSign returns the Table-flavour string-to-sign for the request as the client would
// build it: the date is x-ms-date if present, else Date; the canonical resource is
// "/" + Account + RawPath (+ "?comp=" + value).
//
//	SharedKey:     VERB \n Content-MD5 \n Content-Type \n Date \n CanonicalizedResource
//	SharedKeyLite: Date \n CanonicalizedResource
func StringToSign(s Scheme, req RequestInfo) string {
	req.Header = orEmpty(req.Header)
	return stringToSign(s, req, requestDate(req.Header), canonicalResource(req.Account, req.RawPath, req.RawQuery))
}

// SignSharedKey returns the Authorization header value for the request signed with key, for
// tests and clients.
func SignSharedKey(s Scheme, req RequestInfo, key []byte) string {
	return s.String() + " " + req.Account + ":" + base64.StdEncoding.EncodeToString(mac(key, StringToSign(s, req)))
}

// VerifySharedKey checks the request's SharedKey or SharedKeyLite Authorization header against
// acct, the account addressed by the URL (nil when the server does not know it).
//
// Errors: unparseable header or a non-Shared-Key scheme → 400 InvalidAuthenticationInfo;
// no date header → 400 MissingRequiredHeader; unknown account, account mismatch, bad
// signature or clock skew → 403 AuthenticationFailed.
func VerifySharedKey(req RequestInfo, acct *Account) error {
	req.Header = orEmpty(req.Header)
	h := req.Header.Get("Authorization")
	if h == "" {
		return authFailed("no Authorization header")
	}
	a, err := ParseAuthorization(h)
	if err != nil {
		return err
	}
	if a.Scheme != SchemeSharedKey && a.Scheme != SchemeSharedKeyLite {
		return fail(azerr.InvalidAuthenticationInfo, "unsupported authorization scheme "+a.Scheme.String())
	}
	if acct == nil || a.Account != req.Account || acct.Name != req.Account {
		return authFailed("account " + a.Account + " does not match the account addressed by the URL")
	}
	dates := candidateDates(req.Header)
	if len(dates) == 0 {
		return fail(azerr.MissingRequiredHeader, "x-ms-date or Date is required with Shared Key")
	}
	if !matchAny(a, req, acct, dates) {
		return authFailed("signature mismatch")
	}
	if req.MaxClockSkew > 0 {
		return checkSkew(dates[0], req.Now, req.MaxClockSkew)
	}
	return nil
}

func matchAny(a Authorization, req RequestInfo, acct *Account, dates []string) bool {
	resources := candidateResources(req)
	for _, date := range dates {
		for _, res := range resources {
			sts := stringToSign(a.Scheme, req, date, res)
			for _, key := range acct.Keys {
				if hmac.Equal(mac(key, sts), a.Signature) {
					return true
				}
			}
		}
	}
	return false
}

func stringToSign(s Scheme, req RequestInfo, date, resource string) string {
	if s == SchemeSharedKeyLite {
		return date + "\n" + resource
	}
	return req.Method + "\n" +
		req.Header.Get("Content-MD5") + "\n" +
		req.Header.Get("Content-Type") + "\n" +
		date + "\n" +
		resource
}

// requestDate is the date a client signs: x-ms-date when present, else Date.
func requestDate(h Header) string {
	if d := h.Get("x-ms-date"); d != "" {
		return d
	}
	return h.Get("Date")
}

// candidateDates lists the dates to try, preferred first. Azurite prefers Date over x-ms-date
// when both are sent, so a client written against it may have signed Date.
func candidateDates(h Header) []string {
	var out []string
	if d := h.Get("x-ms-date"); d != "" {
		out = append(out, d)
	}
	if d := h.Get("Date"); d != "" && (len(out) == 0 || out[0] != d) {
		out = append(out, d)
	}
	return out
}

// candidateResources lists the canonical resources to try: the path as sent and, for a
// path-style secondary URL, the path with "-secondary" dropped from the account segment
// (Azurite accepts both).
func candidateResources(req RequestInfo) []string {
	out := []string{canonicalResource(req.Account, req.RawPath, req.RawQuery)}
	if req.Secondary && req.PathStyle {
		prefix := "/" + req.Account + "-secondary"
		if rest, ok := strings.CutPrefix(req.RawPath, prefix); ok && (rest == "" || rest[0] == '/') {
			out = append(out, canonicalResource(req.Account, "/"+req.Account+rest, req.RawQuery))
		}
	}
	return out
}

// canonicalResource is "/" + account + rawPath [+ "?comp=" + value]. Only comp is appended;
// its name matches case-insensitively and its value is percent-decoded.
func canonicalResource(account, rawPath, rawQuery string) string {
	if rawPath == "" {
		rawPath = "/"
	}
	res := "/" + account + rawPath
	if comp, ok := compParam(rawQuery); ok {
		res += "?comp=" + comp
	}
	return res
}

func compParam(rawQuery string) (string, bool) {
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		name, value, _ := strings.Cut(pair, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if !strings.EqualFold(name, "comp") {
			continue
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		return value, true
	}
	return "", false
}

func checkSkew(date string, now time.Time, maxSkew time.Duration) error {
	t, err := parseHTTPDate(date)
	if err != nil {
		return fail(azerr.InvalidHeaderValue, "request date is not an RFC 1123 date")
	}
	if d := now.Sub(t); d > maxSkew || d < -maxSkew {
		return authFailed("request date is outside the allowed clock skew")
	}
	return nil
}

// parseHTTPDate accepts the RFC 1123 form clients send ("Wed, 01 Jan 2025 00:00:00 GMT").
func parseHTTPDate(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC1123, s)
	if err != nil {
		t, err = time.Parse(time.RFC1123Z, s)
	}
	return t, err
}

// mac is HMAC-SHA256(key, UTF-8(message)).
func mac(key []byte, message string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(message))
	return m.Sum(nil)
}
