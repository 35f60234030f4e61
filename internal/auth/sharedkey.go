package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
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
	// Service selects the string-to-sign flavour: the Table service's, or the Blob/Queue one
	// (every x-ms-* header and every query parameter signed). Blob/Queue verification needs a
	// Header that is also a HeaderLister.
	Service Service

	// Request date check: when MaxClockSkew > 0, a request whose date (x-ms-date, else Date)
	// is further than that from Now, or is not an HTTP date (RFC 1123, or RFC 850 as HTTP
	// allows; RFC 3339 is refused), is 403 AuthenticationFailed, as Azure answers (it allows
	// 15 minutes): a captured request cannot be replayed for long. Zero disables the check.
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

// Canonical header names. http.Header.Get canonicalizes its argument, which allocates a new
// string unless the name is already in canonical form.
const (
	hdrAuthorization = "Authorization"
	hdrDate          = "Date"
	hdrMSDate        = "X-Ms-Date"
	hdrContentMD5    = "Content-Md5"
	hdrContentType   = "Content-Type"
)

// StringToSign returns the Table-flavour string-to-sign for the request as the client would
// build it: the date is x-ms-date if present, else Date; the canonical resource is
// "/" + Account + RawPath (+ "?comp=" + value).
//
//	SharedKey:     VERB \n Content-MD5 \n Content-Type \n Date \n CanonicalizedResource
//	SharedKeyLite: Date \n CanonicalizedResource
func StringToSign(s Scheme, req RequestInfo) string {
	req.Header = orEmpty(req.Header)
	if req.Service != ServiceTable {
		return string(appendBQStringToSign(nil, s, req, bqDateLine(req.Header), primaryResource(req), false))
	}
	return string(appendStringToSign(nil, s, req, requestDate(req.Header), primaryResource(req)))
}

// SignSharedKey returns the Authorization header value for the request signed with key, for
// tests and clients.
func SignSharedKey(s Scheme, req RequestInfo, key []byte) string {
	req.Header = orEmpty(req.Header)
	var buf []byte
	if req.Service != ServiceTable {
		buf = appendBQStringToSign(make([]byte, 0, 256), s, req, bqDateLine(req.Header), primaryResource(req), false)
	} else {
		buf = appendStringToSign(make([]byte, 0, 256), s, req, requestDate(req.Header), primaryResource(req))
	}
	m := hmac.New(sha256.New, key)
	m.Write(buf)
	var sum [sha256.Size]byte
	sig := m.Sum(sum[:0])
	// The string-to-sign is hashed; its buffer now holds the header value.
	buf = append(buf[:0], s.String()...)
	buf = append(buf, ' ')
	buf = append(buf, req.Account...)
	buf = append(buf, ':')
	buf = base64.StdEncoding.AppendEncode(buf, sig)
	return string(buf)
}

// VerifySharedKey checks the request's SharedKey or SharedKeyLite Authorization header against
// acct, the account addressed by the URL (nil when the server does not know it).
//
// The signed date is x-ms-date when the request has one (a signature over Date is then
// refused, as Azure refuses it), else Date.
//
// Errors: unparseable header or a non-Shared-Key scheme → 400 InvalidAuthenticationInfo;
// no date header → 400 MissingRequiredHeader; unknown account, account mismatch, bad
// signature, a date outside MaxClockSkew or not an HTTP date → 403 AuthenticationFailed.
//
// A server verifying many requests should use a Verifier, which gives the same answers.
func VerifySharedKey(req RequestInfo, acct *Account) error {
	if acct == nil {
		return verifySharedKey(req, nil, nil)
	}
	return verifySharedKey(req, acct, newMACState(acct.Keys))
}

// verifySharedKey is VerifySharedKey with the HMAC state to use (nil only when acct is nil).
func verifySharedKey(req RequestInfo, acct *Account, st *macState) error {
	req.Header = orEmpty(req.Header)
	h := req.Header.Get(hdrAuthorization)
	if h == "" {
		return authFailed("no Authorization header")
	}
	var sigBuf []byte
	if st != nil {
		sigBuf = st.sig[:]
	}
	a, err := parseAuthorization(h, sigBuf)
	if err != nil {
		return err
	}
	if a.Scheme != SchemeSharedKey && a.Scheme != SchemeSharedKeyLite {
		return fail(azerr.InvalidAuthenticationInfo, "unsupported authorization scheme "+a.Scheme.String())
	}
	if acct == nil || a.Account != req.Account || acct.Name != req.Account {
		return authFailed("account " + a.Account + " does not match the account addressed by the URL")
	}
	date := requestDate(req.Header)
	if date == "" {
		return fail(azerr.MissingRequiredHeader, "x-ms-date or Date is required with Shared Key")
	}
	// The date first: a stale replay costs no HMAC.
	if req.MaxClockSkew > 0 {
		if err := checkSkew(date, req.Now, req.MaxClockSkew); err != nil {
			return err
		}
	}
	matched := false
	if req.Service != ServiceTable {
		matched = matchAnyBQ(a, req, st)
	} else {
		matched = matchAny(a, req, st, date)
	}
	if !matched {
		return authFailed("signature mismatch")
	}
	return nil
}

// matchAny reports whether any candidate string-to-sign, signed with any of the account's
// keys, gives the request's signature (compared in constant time).
func matchAny(a Authorization, req RequestInfo, st *macState, date string) bool {
	resources, nRes := candidateResources(req)
	for _, res := range resources[:nRes] {
		st.buf = appendStringToSign(st.buf[:0], a.Scheme, req, date, res)
		for i := range st.keys {
			if hmac.Equal(st.sum(i, st.buf), a.Signature) {
				return true
			}
		}
	}
	return false
}

// appendStringToSign appends the string-to-sign for one candidate date and resource.
func appendStringToSign(dst []byte, s Scheme, req RequestInfo, date string, res canonRes) []byte {
	if s != SchemeSharedKeyLite {
		dst = append(dst, req.Method...)
		dst = append(dst, '\n')
		dst = append(dst, req.Header.Get(hdrContentMD5)...)
		dst = append(dst, '\n')
		dst = append(dst, req.Header.Get(hdrContentType)...)
		dst = append(dst, '\n')
	}
	dst = append(dst, date...)
	dst = append(dst, '\n')
	return res.appendTo(dst)
}

// requestDate is the date a client signs: x-ms-date when present, else Date.
func requestDate(h Header) string {
	if d := h.Get(hdrMSDate); d != "" {
		return d
	}
	return h.Get(hdrDate)
}

// checkSkew refuses a request date that is not an HTTP date or lies further than maxSkew
// from now, with the AuthenticationErrorDetail Azure gives.
func checkSkew(date string, now time.Time, maxSkew time.Duration) error {
	t, ok := parseHTTPDate(date)
	if !ok {
		return authFailed("The request date header '" + date + "' is not a valid HTTP date (RFC 1123, e.g. Sun, 06 Nov 1994 08:49:37 GMT).")
	}
	switch d := now.Sub(t); {
	case d > maxSkew:
		return authFailed("Request date header too old: '" + date + "'")
	case d < -maxSkew:
		return authFailed("Request date header too far in the future: '" + date + "'")
	}
	return nil
}

// parseHTTPDate accepts the date forms HTTP allows a client to send, in GMT: RFC 1123
// ("Sun, 06 Nov 1994 08:49:37 GMT", what every SDK sends) and RFC 850
// ("Sunday, 06-Nov-94 08:49:37 GMT"), both named in Azure's documentation.
func parseHTTPDate(s string) (time.Time, bool) {
	if t, ok := parseRFC1123(s); ok {
		return t, true
	}
	for _, layout := range [...]string{"Mon, 02 Jan 2006 15:04:05 GMT", "Monday, 02-Jan-06 15:04:05 GMT"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseRFC1123 reads the exact form every SDK sends, "Sun, 06 Nov 1994 08:49:37 GMT", by
// position: it runs on every Shared Key request, and time.Parse costs several times more.
// Anything else (other spacing, a bad field) reports false and is left to time.Parse.
func parseRFC1123(s string) (time.Time, bool) {
	const form = "Sun, 06 Nov 1994 08:49:37 GMT"
	if len(s) != len(form) || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
		s[19] != ':' || s[22] != ':' || s[25:] != " GMT" {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	switch s[:3] { // named, as time.Parse requires; like it, not checked against the date
	case "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun":
	default:
		return time.Time{}, false
	}
	day, year, hour, minute, sec := num(5, 2), num(12, 4), num(17, 2), num(20, 2), num(23, 2)
	month := 0
	for i, m := range [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"} {
		if s[8:11] == m {
			month = i + 1
			break
		}
	}
	if month == 0 || day < 1 || day > 31 || year < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	if t.Day() != day { // 31 Feb and the like: let time.Parse refuse it
		return time.Time{}, false
	}
	return t, true
}

// mac is HMAC-SHA256(key, UTF-8(message)).
func mac(key []byte, message string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(message))
	return m.Sum(nil)
}
