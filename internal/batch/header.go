package batch

import (
	"bytes"
	"errors"
	"maps"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
)

// field is one field of a header block. Name aliases the block; the value is
// data[valStart:valEnd] of the scanned data, or folded when continuation lines followed.
type field struct {
	name             []byte
	valStart, valEnd int
	isFolded         bool
	folded           string
}

// fieldScanner reads a header block: lines of "Name: value" (CRLF or LF), ended by an empty
// line or by the end of data, with obsolete line folding joined by a space. Values are
// trimmed of SP and HT. The block may take at most lim.MaxHeaderBytes bytes (counted from
// the start of data) and lim.MaxHeaders fields. Fields are reported as offsets so that a
// caller holding a string copy of data takes values as substrings, without allocating.
type fieldScanner struct {
	data   []byte
	off    int // start of the next line; after the block, where the content starts
	lim    *Limits
	fields int
	ended  bool // the block ended with its empty line, not with the end of data
}

// next returns the next field; ok is false once the block has ended, and s.off is then the
// offset of what follows the empty line.
func (s *fieldScanner) next() (f field, ok bool, err error) {
	if s.off == len(s.data) { // nextLine never moves past the end
		return field{}, false, nil
	}
	line, next, err := nextLine(s.data, s.off, s.lim.MaxHeaderBytes)
	if err != nil {
		return field{}, false, err
	}
	lineStart := s.off
	s.off = next
	if len(line) == 0 {
		s.ended = true
		return field{}, false, nil
	}
	if line[0] == ' ' || line[0] == '\t' {
		return field{}, false, errors.New("continuation line before the first header")
	}
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		return field{}, false, errors.New("malformed header line")
	}
	f.name = bytes.TrimRight(name, " \t")
	if !validFieldName(f.name) {
		return field{}, false, errors.New("malformed header line")
	}
	if s.fields++; s.fields > s.lim.MaxHeaders {
		return field{}, false, errors.New("too many header fields")
	}
	if hasControl(value, true) {
		return field{}, false, errors.New("control character in a header value")
	}
	trimmed := bytes.TrimLeft(value, " \t")
	f.valStart = lineStart + len(line) - len(trimmed)
	f.valEnd = f.valStart + len(bytes.TrimRight(trimmed, " \t"))
	// Obsolete folding (rare): join the continuation lines that follow.
	for s.off < len(s.data) && isBlank(s.data[s.off]) {
		if !f.isFolded {
			f.isFolded, f.folded = true, string(s.data[f.valStart:f.valEnd])
		}
		cont, next, err := nextLine(s.data, s.off, s.lim.MaxHeaderBytes)
		if err != nil {
			return field{}, false, err
		}
		if hasControl(cont, true) { // a continuation is part of the value
			return field{}, false, errors.New("control character in a header value")
		}
		s.off = next
		f.folded = strings.Trim(f.folded+" "+string(bytes.Trim(cont, " \t")), " \t")
	}
	return f, true, nil
}

// value returns the field's value, taken from text (a string copy of the scanned data) when
// it is not folded.
func (f *field) value(text string) string {
	if f.isFolded {
		return f.folded
	}
	return text[f.valStart:f.valEnd]
}

// valueBytes is value for a caller without a string copy of the data: it allocates.
func (f *field) valueBytes(data []byte) string {
	if f.isFolded {
		return f.folded
	}
	return string(data[f.valStart:f.valEnd])
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// partHeader is what Parse uses of a MIME part's header block (the first of each field).
type partHeader struct {
	contentType, contentID       string
	hasContentType, hasContentID bool
}

// readPartHeader reads a MIME part's header block from data, taking values from text (a
// string copy of data), or copying them out of data when text is "". It returns the offset
// of the part's content and whether the block ended with its empty line.
func readPartHeader(data []byte, text string, lim *Limits) (partHeader, int, bool, error) {
	var h partHeader
	s := fieldScanner{data: data, lim: lim}
	for {
		f, ok, err := s.next()
		if err != nil {
			return partHeader{}, 0, false, err
		}
		if !ok {
			return h, s.off, s.ended, nil
		}
		var dst *string
		var seen *bool
		switch {
		case equalFoldASCII(f.name, "Content-Type"):
			dst, seen = &h.contentType, &h.hasContentType
		case equalFoldASCII(f.name, "Content-Id"):
			dst, seen = &h.contentID, &h.hasContentID
		default:
			continue
		}
		if *seen {
			continue
		}
		*seen = true
		if text != "" {
			*dst = f.value(text)
		} else {
			*dst = f.valueBytes(data)
		}
	}
}

// readRequestHeader reads a sub-request's header block from data into an http.Header,
// taking values from text (a string copy of data) and their one-element slices from arena.
// It returns the offset of the sub-request's body and whether the block ended with its
// empty line.
func readRequestHeader(data []byte, text string, arena *stringArena, lim *Limits) (http.Header, int, bool, error) {
	var stack [16]field // gathered first, so the map is made once at its final size
	fields := stack[:0]
	s := fieldScanner{data: data, lim: lim}
	for {
		f, ok, err := s.next()
		if err != nil {
			return nil, 0, false, err
		}
		if !ok {
			break
		}
		fields = append(fields, f)
	}
	var keyStack [len(stack)]string
	keys := keyStack[:0]
	dup := false
	for i := range fields {
		k := canonicalKey(fields[i].name)
		dup = dup || slices.Contains(keys, k) // a few fields: cheaper than map lookups
		keys = append(keys, k)
	}
	h := make(http.Header, len(fields))
	for i := range fields {
		v := fields[i].value(text)
		if dup {
			if vs, ok := h[keys[i]]; ok {
				h[keys[i]] = append(vs, v) // cap-limited arena slices: this copies
				continue
			}
		}
		h[keys[i]] = arena.one(v)
	}
	return h, s.off, s.ended, nil
}

// headerCache remembers the last MIME part header and sub-request header parsed in a batch.
// SDKs repeat the same part header, and usually the same sub-request headers, in every part,
// so a block byte-identical to the previous one is not scanned again: its parsed result,
// Header map included, is shared. Only blocks ended by their empty line are remembered (a
// block cut short by the end of its data parses differently as the prefix of a longer one).
// Parsing depends on nothing but the block's bytes and the limits, so sharing is exact.
//
// Go aztables also sends each sub-request's Content-Length, so the request header blocks of a
// batch of differently sized entities differ in those digits only. A block that matches the
// cached one except for them, and is no longer than it (so it meets every limit the cached
// one met), gets a copy of the cached Header with its own Content-Length: about a third of
// the cost of parsing it.
type headerCache struct {
	arena     stringArena
	partBlock []byte
	part      partHeader
	reqBlock  []byte
	req       http.Header
	// lenStart:lenEnd is the value of reqBlock's one "Content-Length:" line, all digits;
	// lenStart == lenEnd when there is no such line.
	lenStart, lenEnd int
}

// partHeader is readPartHeader through the cache.
func (c *headerCache) partHeader(data []byte, text string, lim *Limits) (partHeader, int, error) {
	if c.partBlock != nil && bytes.HasPrefix(data, c.partBlock) {
		return c.part, len(c.partBlock), nil
	}
	h, off, ended, err := readPartHeader(data, text, lim)
	if ended { // never with an error
		c.partBlock, c.part = data[:off], h
	}
	return h, off, err
}

// requestHeader is readRequestHeader through the cache.
func (c *headerCache) requestHeader(data []byte, text string, lim *Limits) (http.Header, int, error) {
	if c.reqBlock != nil {
		if bytes.HasPrefix(data, c.reqBlock) {
			return c.req, len(c.reqBlock), nil
		}
		if h, n, ok := c.otherLength(data, text); ok {
			return h, n, nil
		}
	}
	h, off, ended, err := readRequestHeader(data, text, &c.arena, lim)
	if ended { // never with an error
		c.reqBlock, c.req = data[:off], h
		c.lenStart, c.lenEnd = contentLengthSpan(c.reqBlock, h)
	}
	return h, off, err
}

// otherLength matches a block that differs from the cached one only in its Content-Length
// digits and is not longer, and makes it the cached one.
func (c *headerCache) otherLength(data []byte, text string) (http.Header, int, bool) {
	if c.lenStart == c.lenEnd || !bytes.HasPrefix(data, c.reqBlock[:c.lenStart]) {
		return nil, 0, false
	}
	end := c.lenStart + digitPrefix(data[c.lenStart:])
	rest := c.reqBlock[c.lenEnd:] // starts with the byte after the digits: not a digit
	n := end + len(rest)
	if end == c.lenStart || n > len(c.reqBlock) || !bytes.HasPrefix(data[end:], rest) {
		return nil, 0, false
	}
	h := maps.Clone(c.req) // the other values are shared read-only, as on an exact match
	h["Content-Length"] = c.arena.one(text[c.lenStart:end])
	c.reqBlock, c.req, c.lenEnd = data[:n], h, end
	return h, n, true
}

// contentLengthSpan finds the value of block's "Content-Length:" line when h holds exactly
// that one value and it is all digits (not folded, not repeated); else it returns 0, 0.
func contentLengthSpan(block []byte, h http.Header) (int, int) {
	const name = "Content-Length:"
	vs := h["Content-Length"]
	if len(vs) != 1 {
		return 0, 0
	}
	rest, ok := bytes.CutPrefix(block, []byte(name))
	if !ok {
		if _, rest, ok = bytes.Cut(block, []byte("\n"+name)); !ok {
			return 0, 0
		}
	}
	rest = bytes.TrimLeft(rest, " \t")
	start := len(block) - len(rest)
	end := start + digitPrefix(rest)
	if end == start || string(block[start:end]) != vs[0] {
		return 0, 0
	}
	return start, end
}

// digitPrefix returns how many ASCII digits b starts with.
func digitPrefix(b []byte) int { return len(b) - len(bytes.TrimLeft(b, "0123456789")) }

// stringArena hands out one-element []string values carved from shared blocks, so building
// a header map costs no allocation per field. Every slice is capacity-limited, so appending
// to one reallocates instead of overwriting its neighbour.
type stringArena struct{ block []string }

func (a *stringArena) one(v string) []string {
	if len(a.block) == cap(a.block) {
		a.block = make([]string, 0, 128)
	}
	n := len(a.block)
	a.block = append(a.block, v)
	return a.block[n : n+1 : n+1]
}

// canonicalKey is textproto.CanonicalMIMEHeaderKey for a valid field name read from a batch
// body, without allocating for the names SDKs put in sub-requests.
func canonicalKey(name []byte) string {
	if k := commonKey(name); k != "" {
		return k
	}
	return textproto.CanonicalMIMEHeaderKey(string(name))
}

// commonKey returns the canonical form of name if it is one of the header names SDKs send in
// batch parts and sub-requests (in any case), else "". Candidates are picked by length, so
// each name costs at most two case-insensitive compares.
func commonKey(name []byte) string {
	var a, b string
	switch len(name) {
	case 4:
		a, b = "Date", "Host"
	case 6:
		a, b = "Accept", "Prefer"
	case 8:
		a = "If-Match"
	case 9:
		a = "X-Ms-Date"
	case 10:
		a, b = "Content-Id", "User-Agent"
	case 12:
		a, b = "Content-Type", "X-Ms-Version"
	case 14:
		a, b = "Content-Length", "Accept-Charset"
	case 18:
		a = "Dataserviceversion"
	case 21:
		a = "Maxdataserviceversion"
	case 22:
		a = "X-Ms-Client-Request-Id"
	case 25:
		a = "Content-Transfer-Encoding"
	default:
		return ""
	}
	switch {
	case equalFoldASCII(name, a):
		return a
	case b != "" && equalFoldASCII(name, b):
		return b
	}
	return ""
}

// equalFoldASCII reports whether b equals s ignoring ASCII letter case (header names are
// ASCII tokens, so this is their case-insensitive comparison).
func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lowerASCII(b[i]) != lowerASCII(s[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
