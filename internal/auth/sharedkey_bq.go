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
	if bh, ok := h.(bytesHeader); ok {
		if len(bh.Peek(hdrMSDate)) > 0 {
			return ""
		}
	} else if h.Get(hdrMSDate) != "" {
		return ""
	}
	return h.Get(hdrDate)
}

// matchAnyBQ tries the Blob/Queue string-to-sign for every candidate resource (the
// -secondary variants), header order (the service's order, then code-point order as a
// leniency for clients that sort that way: azqueue 1.0.1, azure-cli 2.45) and account key.
// The parts that do not depend on the candidate (the headers in both orders, the query) are
// built once; the order that matched last on this state is tried first (both are accepted,
// so the order of the tries changes only the cost).
func matchAnyBQ(a Authorization, req RequestInfo, st *macState) bool {
	resources, nRes := candidateResources(req)
	date := bqDateLine(req.Header)
	p := st.bq.build(req)
	orders := [2]int{0, 1}
	if st.preferCodePoint && p.differ {
		orders = [2]int{1, 0}
	}
	for n, o := range orders {
		if n == 1 && !p.differ {
			break
		}
		for _, res := range resources[:nRes] {
			st.buf = appendBQParts(st.buf[:0], a.Scheme, req, date, res, p, o)
			if matchKeys(st, a.Signature) {
				st.preferCodePoint = o == 1
				return true
			}
			if a.Scheme == SchemeSharedKeyLite && date == "" {
				// Shared Key Lite without its (empty) Date line: the form of the worked
				// example in our wire reference; the documented form above comes first.
				st.buf = appendBQParts(st.buf[:0], a.Scheme, req, noDateLine, res, p, o)
				if matchKeys(st, a.Signature) {
					st.preferCodePoint = o == 1
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

// bqScratch holds the request-independent parts of Blob/Queue strings-to-sign, reused
// between requests by a macState.
type bqScratch struct {
	arena   []byte
	offs    [][4]int
	lines   []headerLine
	cp      []headerLine
	headers [2][]byte
	query   []byte
	differ  bool
	// std holds the arena offsets of the first value of each of bqStandardHeaders (found in
	// the same pass over the headers as the x-ms-* ones: one pass instead of a lookup each).
	std   [len(bqStandardHeaders)][2]int
	stdOK [len(bqStandardHeaders)]bool
	text  string
}

// stdValue appends the value of bqStandardHeaders[i] gathered by build.
func (b *bqScratch) stdValue(dst []byte, i int) []byte {
	if !b.stdOK[i] {
		return dst
	}
	return append(dst, b.text[b.std[i][0]:b.std[i][1]]...)
}

// build fills the scratch from req: the canonicalized headers in the service's order
// (headers[0]) and in code-point order (headers[1]), whether those differ, and the
// canonicalized query.
//
// Names are distinct (repeated headers are joined) and both orders are total, so when the
// service order is also in code-point order the two are the same; the code-point copy is
// then not built (headers[1] is used only when differ).
func (b *bqScratch) build(req RequestInfo) *bqScratch {
	b.lines = msHeadersInto(req.Header, b)
	slices.SortFunc(b.lines, func(x, y headerLine) int { return compareServiceOrder(x.name, y.name) })
	b.differ = !slices.IsSortedFunc(b.lines, func(x, y headerLine) int { return strings.Compare(x.name, y.name) })
	b.headers[0] = appendHeaderLines(b.headers[0][:0], b.lines)
	if b.differ {
		b.cp = append(b.cp[:0], b.lines...)
		slices.SortFunc(b.cp, func(x, y headerLine) int { return strings.Compare(x.name, y.name) })
		b.headers[1] = appendHeaderLines(b.headers[1][:0], b.cp)
	}
	b.query = appendCanonQuery(b.query[:0], req.RawQuery)
	return b
}

// appendBQStringToSign appends the string-to-sign for one resource and header order.
func appendBQStringToSign(dst []byte, s Scheme, req RequestInfo, date string, res canonRes, codePoint bool) []byte {
	var b bqScratch
	p := b.build(req)
	o := 0
	if codePoint {
		o = 1
	}
	return appendBQParts(dst, s, req, date, res, p, o)
}

// bytesHeader is a Header that can enumerate headers without copying (the server's):
// verifying a request then allocates almost nothing.
type bytesHeader interface {
	Peek(key string) []byte
	EachHeaderBytes(fn func(name, value []byte))
}

// Indexes of the standard header lines that Shared Key Lite also signs.
const (
	stdContentMD5  = 4
	stdContentType = 5
)

func appendBQParts(dst []byte, s Scheme, req RequestInfo, date string, res canonRes, p *bqScratch, order int) []byte {
	dst = append(dst, req.Method...)
	dst = append(dst, '\n')
	if s == SchemeSharedKeyLite {
		dst = p.stdValue(dst, stdContentMD5)
		dst = append(dst, '\n')
		dst = p.stdValue(dst, stdContentType)
		dst = append(dst, '\n')
		if date != noDateLine {
			dst = append(dst, date...)
			dst = append(dst, '\n')
		}
		dst = append(dst, p.headers[order]...)
		return res.appendTo(dst)
	}
	for i, name := range bqStandardHeaders {
		switch name {
		case "Date":
			dst = append(dst, date...)
		case "Content-Length":
			n := len(dst)
			dst = p.stdValue(dst, i)
			if string(dst[n:]) == "0" {
				dst = dst[:n]
			}
		default:
			dst = p.stdValue(dst, i)
		}
		dst = append(dst, '\n')
	}
	dst = append(dst, p.headers[order]...)
	res.hasComp = false
	dst = res.appendTo(dst)
	return append(dst, p.query...)
}

type headerLine struct{ name, value string }

// msHeadersInto collects the x-ms-* headers, names lower-cased, values without leading
// whitespace, repeated headers joined with ",". The text is gathered in the scratch's arena
// and turned into one string, so the lines cost one allocation together.
func msHeadersInto(h Header, b *bqScratch) []headerLine {
	b.arena, b.offs = b.arena[:0], b.offs[:0]
	b.stdOK = [len(bqStandardHeaders)]bool{}
	add := func(name, value []byte) {
		if len(name) < 5 || !strings.EqualFold(string(name[:5]), "x-ms-") {
			for i, std := range bqStandardHeaders {
				if !b.stdOK[i] && len(std) == len(name) && strings.EqualFold(std, string(name)) {
					vs := len(b.arena)
					b.arena = append(b.arena, value...)
					b.std[i], b.stdOK[i] = [2]int{vs, len(b.arena)}, true
					break
				}
			}
			return
		}
		ns := len(b.arena)
		for _, c := range name {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.arena = append(b.arena, c)
		}
		ne := len(b.arena)
		for len(value) > 0 && (value[0] == ' ' || value[0] == '\t') {
			value = value[1:]
		}
		for i, o := range b.offs {
			if string(b.arena[o[0]:o[1]]) == string(b.arena[ns:ne]) {
				// A repeated header: its value becomes "old,new", at the arena's end.
				b.arena = b.arena[:ns]
				vs := len(b.arena)
				b.arena = append(b.arena, b.arena[o[2]:o[3]]...)
				b.arena = append(b.arena, ',')
				b.arena = append(b.arena, value...)
				b.offs[i][2], b.offs[i][3] = vs, len(b.arena)
				return
			}
		}
		b.arena = append(b.arena, value...)
		b.offs = append(b.offs, [4]int{ns, ne, ne, len(b.arena)})
	}
	switch lh := h.(type) {
	case bytesHeader:
		lh.EachHeaderBytes(add)
	case HeaderLister:
		lh.EachHeader(func(name, value string) { add([]byte(name), []byte(value)) })
	default:
		// No enumeration: no x-ms-* lines, the standard headers by name.
		for i, name := range bqStandardHeaders {
			if v := h.Get(name); v != "" {
				vs := len(b.arena)
				b.arena = append(b.arena, v...)
				b.std[i], b.stdOK[i] = [2]int{vs, len(b.arena)}, true
			}
		}
	}
	text := string(b.arena)
	b.text = text
	lines := b.lines[:0]
	for _, o := range b.offs {
		lines = append(lines, headerLine{text[o[0]:o[1]], text[o[2]:o[3]]})
	}
	return lines
}

func appendHeaderLines(dst []byte, lines []headerLine) []byte {
	for _, l := range lines {
		dst = append(dst, l.name...)
		dst = append(dst, ':')
		dst = append(dst, l.value...)
		dst = append(dst, '\n')
	}
	return dst
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
	// Sorted by name, then value: each name's values come out sorted and adjacent. A
	// request has a handful of parameters, so they stay on the stack.
	var buf [8]headerLine
	params := buf[:0]
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
		params = append(params, headerLine{strings.ToLower(k), v})
	}
	slices.SortFunc(params, func(x, y headerLine) int {
		if c := strings.Compare(x.name, y.name); c != 0 {
			return c
		}
		return strings.Compare(x.value, y.value)
	})
	for i, p := range params {
		if i > 0 && params[i-1].name == p.name {
			dst = append(dst, ',')
		} else {
			dst = append(dst, '\n')
			dst = append(dst, p.name...)
			dst = append(dst, ':')
		}
		dst = append(dst, p.value...)
	}
	return dst
}
