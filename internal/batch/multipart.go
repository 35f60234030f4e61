package batch

import (
	"bytes"
	"errors"
	"mime"
	"strings"
)

var (
	errNoDelimiter  = errors.New("batch: no multipart delimiter")
	errTooManyParts = errors.New("batch: too many multipart parts")
)

// splitMultipart returns the body parts of a multipart entity (RFC 2046 §5.1.1), stored in
// dst's backing array when it is large enough (callers pass a stack buffer):
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
// examined, so callers never do per-part work for hostile part counts. Candidate delimiter
// lines are found with bytes.Index on "\n--boundary", which skips part contents at memchr
// speed instead of visiting every line; the scan stays linear in len(data) times at most
// the boundary length.
func splitMultipart(data []byte, boundary string, maxParts int, dst [][]byte) ([][]byte, error) {
	var stack [3 + DefaultMaxBoundaryLen]byte // longer boundaries (custom Limits) spill to the heap
	nlDelim := append(append(stack[:0], "\n--"...), boundary...)
	delim := nlDelim[1:]
	parts := dst[:0]
	start := -1 // content start of the part being scanned; -1 while in the preamble
	from := 0   // where to look for the next "\n--boundary"
	for atStart := true; ; atStart = false {
		at := 0 // start of a line that begins with delim
		if !atStart || !bytes.HasPrefix(data, delim) {
			j := bytes.Index(data[from:], nlDelim)
			if j < 0 {
				break
			}
			at = from + j + 1
		}
		isDelim, isClose, next := delimiterAt(data, at, delim)
		if !isDelim {
			from = at
			continue
		}
		if start >= 0 {
			if len(parts) == maxParts {
				return nil, errTooManyParts
			}
			parts = append(parts, data[start:contentEnd(data, start, at)])
		}
		if isClose {
			return parts, nil
		}
		start = next
		// The next delimiter may start right at next: search from the LF that ends this line.
		from = max(next-1, at)
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
func validFieldName[T ~string | ~[]byte](b T) bool {
	if len(b) == 0 {
		return false
	}
	for i := 0; i < len(b); i++ {
		if !isTokenChar(b[i]) {
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
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// hasControl reports whether b holds an ASCII control character (tab allowed if allowTab).
func hasControl[T ~string | ~[]byte](b T, allowTab bool) bool {
	for i := 0; i < len(b); i++ {
		if c := b[i]; (c < 0x20 && !(allowTab && c == '\t')) || c == 0x7f {
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
	if strings.EqualFold(v, "application/http") { // every sub-request part: spare mime's map
		return "application/http", "", nil
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
	case b[len(b)-1] == ' ' || hasControl(b, false):
		return errors.New("malformed boundary")
	}
	return nil
}
