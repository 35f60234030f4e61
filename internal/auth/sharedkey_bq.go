package auth

import (
	"crypto/hmac"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The Blob/Queue flavour of Shared Key and Shared Key Lite (also the File service's):
//
//	SharedKey:     VERB \n Content-Encoding \n Content-Language \n Content-Length \n
//	               Content-MD5 \n Content-Type \n Date \n If-Modified-Since \n If-Match \n
//	               If-None-Match \n If-Unmodified-Since \n Range \n
//	               CanonicalizedHeaders CanonicalizedResource
//	SharedKeyLite: VERB \n Content-MD5 \n Content-Type \n Date \n
//	               CanonicalizedHeaders "/" account rawPath [?comp=value]
//
// CanonicalizedHeaders are every x-ms-* header, "name:value\n", sorted; the full
// CanonicalizedResource is "/" account rawPath followed by "\nname:value" for every query
// parameter (names lower-cased, values decoded, sorted). The Date line is empty whenever
// x-ms-date is sent, and Content-Length is empty when it is 0.

// HeaderLister enumerates every request header (name as sent, value), which the Blob/Queue
// string-to-sign needs: it signs all x-ms-* headers, not a fixed list.
type HeaderLister interface {
	EachHeader(fn func(name, value string))
}

// HTTPHeader adapts an http.Header for the Blob/Queue flavour (tests and clients).
type HTTPHeader http.Header

// Get returns the first value of key.
func (h HTTPHeader) Get(key string) string { return http.Header(h).Get(key) }

// EachHeader calls fn for every value of every header.
func (h HTTPHeader) EachHeader(fn func(name, value string)) {
	for k, vs := range h {
		for _, v := range vs {
			fn(k, v)
		}
	}
}

// bqStandardHeaders are the header lines after the verb, in order.
var bqStandardHeaders = [...]string{
	"Content-Encoding", "Content-Language", "Content-Length", "Content-Md5", "Content-Type",
	"Date", "If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range",
}

// bqDateLine is the Date line a client signs: empty when x-ms-date is sent.
func bqDateLine(h Header) string {
	if h.Get(hdrMSDate) != "" {
		return ""
	}
	return h.Get(hdrDate)
}

// matchAnyBQ tries the Blob/Queue string-to-sign for every candidate resource (the
// -secondary variants), header order (the service's order, then code-point order as a
// leniency for clients that sort that way: azqueue 1.0.1, azure-cli 2.45) and account key.
func matchAnyBQ(a Authorization, req RequestInfo, st *macState) bool {
	resources, nRes := candidateResources(req)
	date := bqDateLine(req.Header)
	for _, codePoint := range [...]bool{false, true} {
		if codePoint && !headerOrdersDiffer(req.Header) {
			break
		}
		for _, res := range resources[:nRes] {
			st.buf = appendBQStringToSign(st.buf[:0], a.Scheme, req, date, res, codePoint)
			if matchKeys(st, a.Signature) {
				return true
			}
			if a.Scheme == SchemeSharedKeyLite && date == "" {
				// Shared Key Lite without its (empty) Date line: the form of the worked
				// example in our wire reference; the documented form above comes first.
				st.buf = appendBQStringToSign(st.buf[:0], a.Scheme, req, noDateLine, res, codePoint)
				if matchKeys(st, a.Signature) {
					return true
				}
			}
		}
	}
	return false
}

// noDateLine asks appendBQStringToSign for a Shared Key Lite string without the Date line.
const noDateLine = "\x00"

func matchKeys(st *macState, sig []byte) bool {
	for i := range st.keys {
		if hmac.Equal(st.sum(i, st.buf), sig) {
			return true
		}
	}
	return false
}

func appendBQStringToSign(dst []byte, s Scheme, req RequestInfo, date string, res canonRes, codePoint bool) []byte {
	h := req.Header
	dst = append(dst, req.Method...)
	dst = append(dst, '\n')
	if s == SchemeSharedKeyLite {
		dst = append(dst, h.Get(hdrContentMD5)...)
		dst = append(dst, '\n')
		dst = append(dst, h.Get(hdrContentType)...)
		dst = append(dst, '\n')
		if date != noDateLine {
			dst = append(dst, date...)
			dst = append(dst, '\n')
		}
		dst = appendCanonHeaders(dst, h, codePoint)
		return res.appendTo(dst)
	}
	for _, name := range bqStandardHeaders {
		v := h.Get(name)
		switch name {
		case "Date":
			v = date
		case "Content-Length":
			if v == "0" {
				v = ""
			}
		}
		dst = append(dst, v...)
		dst = append(dst, '\n')
	}
	dst = appendCanonHeaders(dst, h, codePoint)
	res.hasComp = false
	dst = res.appendTo(dst)
	return appendCanonQuery(dst, req.RawQuery)
}

type headerLine struct{ name, value string }

// msHeaders collects the x-ms-* headers, names lower-cased, values without leading
// whitespace, repeated headers joined with ",".
func msHeaders(h Header) []headerLine {
	hl, ok := h.(HeaderLister)
	if !ok {
		return nil
	}
	var out []headerLine
	hl.EachHeader(func(name, value string) {
		if len(name) < 5 || !strings.EqualFold(name[:5], "x-ms-") {
			return
		}
		name = strings.ToLower(name)
		value = strings.TrimLeft(value, " \t")
		for i := range out {
			if out[i].name == name {
				out[i].value += "," + value
				return
			}
		}
		out = append(out, headerLine{name, value})
	})
	return out
}

func appendCanonHeaders(dst []byte, h Header, codePoint bool) []byte {
	lines := msHeaders(h)
	if codePoint {
		slices.SortFunc(lines, func(a, b headerLine) int { return strings.Compare(a.name, b.name) })
	} else {
		slices.SortFunc(lines, func(a, b headerLine) int { return compareServiceOrder(a.name, b.name) })
	}
	for _, l := range lines {
		dst = append(dst, l.name...)
		dst = append(dst, ':')
		dst = append(dst, l.value...)
		dst = append(dst, '\n')
	}
	return dst
}

// headerOrdersDiffer reports whether the service order and code-point order of the
// request's x-ms-* headers differ (only then is the second order worth a try).
func headerOrdersDiffer(h Header) bool {
	lines := msHeaders(h)
	a := slices.Clone(lines)
	slices.SortFunc(lines, func(a, b headerLine) int { return strings.Compare(a.name, b.name) })
	slices.SortFunc(a, func(a, b headerLine) int { return compareServiceOrder(a.name, b.name) })
	for i := range a {
		if a[i].name != lines[i].name {
			return true
		}
	}
	return false
}

// compareServiceOrder is the storage service's culture-aware order of header names, as
// far as header names go: '-' is ignored, then '_' < digits < letters; a prefix sorts
// first. Names equal once '-' is dropped fall back to code-point order.
func compareServiceOrder(a, b string) int {
	i, j := 0, 0
	for {
		for i < len(a) && a[i] == '-' {
			i++
		}
		for j < len(b) && b[j] == '-' {
			j++
		}
		if i == len(a) || j == len(b) {
			if i == len(a) && j == len(b) {
				return strings.Compare(a, b)
			}
			if i == len(a) {
				return -1
			}
			return 1
		}
		if wa, wb := serviceWeight(a[i]), serviceWeight(b[j]); wa != wb {
			if wa < wb {
				return -1
			}
			return 1
		}
		i++
		j++
	}
}

func serviceWeight(c byte) int {
	switch {
	case c == '_':
		return 0
	case c >= '0' && c <= '9':
		return 1 + int(c-'0')
	case c >= 'a' && c <= 'z':
		return 11 + int(c-'a')
	case c >= 'A' && c <= 'Z':
		return 11 + int(c-'A')
	}
	return 100 + int(c)
}

// appendCanonQuery appends "\nname:value" for every query parameter: names lower-cased
// and sorted, values decoded ('+' is a space), several values of a name sorted and joined
// with ",".
func appendCanonQuery(dst []byte, rawQuery string) []byte {
	if rawQuery == "" {
		return dst
	}
	vals := map[string][]string{}
	for rest := rawQuery; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if n, err := url.QueryUnescape(k); err == nil {
			k = n
		}
		if n, err := url.QueryUnescape(v); err == nil {
			v = n
		}
		k = strings.ToLower(k)
		vals[k] = append(vals[k], v)
	}
	names := make([]string, 0, len(vals))
	for k := range vals {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		vs := vals[k]
		slices.Sort(vs)
		dst = append(dst, '\n')
		dst = append(dst, k...)
		dst = append(dst, ':')
		dst = append(dst, strings.Join(vs, ",")...)
	}
	return dst
}
