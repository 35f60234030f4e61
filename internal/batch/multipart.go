package batch

import (
	"bytes"
	"errors"
	"mime"
	"net/http"
	"net/textproto"
	"strings"
)

var (
	errNoDelimiter  = errors.New("batch: no multipart delimiter")
	errTooManyParts = errors.New("batch: too many multipart parts")
)

// splitMultipart returns the body parts of a multipart entity (RFC 2046 §5.1.1):
//
//	multipart := preamble delimiter part *( delimiter part ) close-delimiter epilogue
//	delimiter := ( start-of-data / [CR] LF ) "--" boundary *( SP / HT ) ( [CR] LF / end-of-data )
//	close-delimiter := ( start-of-data / [CR] LF ) "--" boundary "--" *any-but-LF
//
// The line break before a delimiter belongs to the delimiter, not to the part. Preamble and
// epilogue are dropped. Without a close delimiter the last part ends at the end of data (old JS
// clients), and a trailing part that is only whitespace is dropped. Parts alias data.
//
// At most maxParts parts are collected: finding one more returns errTooManyParts before it is
// examined, so callers never do per-part work for hostile part counts. The scan touches each
// line once, so it is linear in len(data) times at most the boundary length.
func splitMultipart(data []byte, boundary string, maxParts int) ([][]byte, error) {
	delim := []byte("--" + boundary)
	var parts [][]byte
	start := -1 // content start of the part being scanned; -1 while in the preamble
	for i := 0; i < len(data); {
		if isDelim, isClose, next := delimiterAt(data, i, delim); isDelim {
			if start >= 0 {
				if len(parts) == maxParts {
					return nil, errTooManyParts
				}
				parts = append(parts, data[start:contentEnd(data, start, i)])
			}
			if isClose {
				return parts, nil
			}
			start, i = next, next
			continue
		}
		nl := bytes.IndexByte(data[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	if start < 0 {
		return nil, errNoDelimiter
	}
	if last := data[start:]; len(bytes.Trim(last, " \t\r\n")) > 0 {
		if len(parts) == maxParts {
			return nil, errTooManyParts
		}
		parts = append(parts, last)
	}
	return parts, nil
}

// delimiterAt reports whether the line starting at i is a delimiter line for delim ("--" +
// boundary), whether it is the close delimiter, and where the line after it starts.
func delimiterAt(data []byte, i int, delim []byte) (isDelim, isClose bool, next int) {
	if !bytes.HasPrefix(data[i:], delim) {
		return false, false, 0
	}
	j := i + len(delim)
	if bytes.HasPrefix(data[j:], []byte("--")) {
		return true, true, len(data)
	}
	for j < len(data) && (data[j] == ' ' || data[j] == '\t') { // transport padding
		j++
	}
	switch {
	case j == len(data):
		return true, false, j
	case data[j] == '\n':
		return true, false, j + 1
	case data[j] == '\r' && j+1 == len(data):
		return true, false, j + 1
	case data[j] == '\r' && data[j+1] == '\n':
		return true, false, j + 2
	}
	return false, false, 0 // e.g. "--boundaryX": another boundary that merely shares a prefix
}

// contentEnd is the end of a part that starts at start and is followed by a delimiter line at
// i: the CRLF or LF before i belongs to the delimiter.
func contentEnd(data []byte, start, i int) int {
	end := i
	if end > start && data[end-1] == '\n' {
		end--
		if end > start && data[end-1] == '\r' {
			end--
		}
	}
	return end
}

// readHeader parses a header block: lines of "Name: value" (CRLF or LF), ended by an empty
// line or by the end of data, with obsolete line folding joined by a space. It returns the
// header (canonical keys, values trimmed) and the bytes after the empty line. The block may
// take at most lim.MaxHeaderBytes bytes and lim.MaxHeaders fields.
func readHeader(data []byte, lim *Limits) (http.Header, []byte, error) {
	h := make(http.Header)
	var lastKey string
	fields := 0
	for off := 0; off < len(data); {
		line, next, err := nextLine(data, off, lim.MaxHeaderBytes)
		if err != nil {
			return nil, nil, err
		}
		off = next
		if len(line) == 0 {
			return h, data[off:], nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			if lastKey == "" {
				return nil, nil, errors.New("continuation line before the first header")
			}
			vs := h[lastKey]
			vs[len(vs)-1] = strings.Trim(vs[len(vs)-1]+" "+string(bytes.Trim(line, " \t")), " \t")
			continue
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		name = bytes.TrimRight(name, " \t")
		if !ok || !validFieldName(name) {
			return nil, nil, errors.New("malformed header line")
		}
		if fields++; fields > lim.MaxHeaders {
			return nil, nil, errors.New("too many header fields")
		}
		if hasControl(value, true) {
			return nil, nil, errors.New("control character in a header value")
		}
		lastKey = canonicalKey(name)
		h[lastKey] = append(h[lastKey], internValue(bytes.Trim(value, " \t")))
	}
	return h, data[len(data):], nil
}

// nextLine returns the line starting at off without its CRLF or LF, and where the next line
// starts. A line may not end beyond limit bytes from the start of data, so a hostile block
// costs at most limit bytes of scanning.
func nextLine(data []byte, off, limit int) (line []byte, next int, err error) {
	window := data[:min(len(data), limit)]
	if off > len(window) {
		return nil, 0, errors.New("header block too large")
	}
	nl := bytes.IndexByte(window[off:], '\n')
	switch {
	case nl >= 0:
		line, next = data[off:off+nl], off+nl+1
	case len(window) < len(data):
		return nil, 0, errors.New("header block too large")
	default:
		line, next = data[off:], len(data)
	}
	return bytes.TrimSuffix(line, []byte("\r")), next, nil
}

// validFieldName reports whether b is an HTTP token (RFC 9110 §5.1).
func validFieldName(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !isTokenChar(c) {
			return false
		}
	}
	return true
}

func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// hasControl reports whether b holds an ASCII control character (tab allowed if allowTab).
func hasControl(b []byte, allowTab bool) bool {
	for _, c := range b {
		if (c < 0x20 && !(allowTab && c == '\t')) || c == 0x7f {
			return true
		}
	}
	return false
}

// mediaType parses a Content-Type value into its lower-case media type and boundary
// parameter; an empty value gives "", "".
func mediaType(v string) (media, boundary string, err error) {
	if v == "" {
		return "", "", nil
	}
	media, params, err := mime.ParseMediaType(v)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return "", "", err
	}
	return media, params["boundary"], nil
}

// checkBoundary validates a boundary from a Content-Type parameter (RFC 2046 §5.1.1: 1 to 70
// characters, not ending in a space), with our own length limit.
func checkBoundary(b string, lim *Limits) error {
	switch {
	case b == "":
		return errors.New("missing boundary")
	case len(b) > lim.MaxBoundaryLen:
		return errors.New("boundary too long")
	case b[len(b)-1] == ' ' || hasControl([]byte(b), false):
		return errors.New("malformed boundary")
	}
	return nil
}

// commonKeys are the canonical forms of the header names SDKs put in batch parts and
// sub-requests; canonicalKey returns them without allocating.
var commonKeys = []string{
	"Accept", "Content-Type", "Content-Transfer-Encoding", "Content-Length", "Content-Id",
	"Dataserviceversion", "Maxdataserviceversion", "Prefer", "If-Match", "X-Ms-Version",
	"X-Ms-Date", "Date", "Host", "Accept-Charset", "User-Agent", "X-Ms-Client-Request-Id",
}

// canonicalKey is textproto.CanonicalMIMEHeaderKey for a header name read from a batch body,
// sparing the allocations for the names every sub-request repeats.
func canonicalKey(name []byte) string {
	for _, k := range commonKeys {
		if len(k) == len(name) && bytes.EqualFold(name, []byte(k)) {
			return k
		}
	}
	return textproto.CanonicalMIMEHeaderKey(string(name))
}

// commonValues are header values that recur in every sub-request of a batch.
var commonValues = []string{
	"application/http", "binary", "3.0", "3.0;", "", "return-no-content", "return-content",
	"application/json", "application/json;odata=minimalmetadata",
	"application/json;odata=nometadata", "application/json;odata=fullmetadata", "*",
}

// internValue returns v as a string, without allocating for the values in commonValues.
func internValue(v []byte) string {
	for _, c := range commonValues {
		if string(v) == c {
			return c
		}
	}
	return string(v)
}
