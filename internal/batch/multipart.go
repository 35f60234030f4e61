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
// lines are found with delimFinder on "\n--boundary", which skips part contents at memchr
// speed instead of visiting every line; the scan stays linear in len(data) times at most
// the boundary length.
func splitMultipart(data []byte, boundary string, maxParts int, dst [][]byte) ([][]byte, error) {
	var stack [3 + DefaultMaxBoundaryLen]byte // longer boundaries (custom Limits) spill to the heap
	nlDelim := append(append(stack[:0], "\n--"...), boundary...)
	delim := nlDelim[1:]
	find := newDelimFinder(nlDelim)
	parts := dst[:0]
	start, inPart := 0, false // content start of the part being scanned; none in the preamble
	from := 0                 // where to look for the next "\n--boundary"
	for atStart := true; ; atStart = false {
		at := 0 // start of a line that begins with delim
		if !atStart || !bytes.HasPrefix(data, delim) {
			j := find.index(data[from:])
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
		if inPart {
			if len(parts) == maxParts {
				return nil, errTooManyParts
			}
			parts = append(parts, data[start:contentEnd(data, start, at)])
		}
		if isClose {
			return parts, nil
		}
		start, inPart = next, true
		// The next delimiter may start right at next: search from the LF that ends this line.
		from = max(next-1, at)
	}
	if !inPart {
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

// delimFinder is bytes.Index for a "\n--boundary" pattern, tuned for multipart bodies.
// bytes.Index looks for the pattern's first byte, '\n', which starts every line of every
// part header, so it stops (and pays a call) once per line. SDK boundaries hold a byte that is
// rare in part contents ('_' in "changeset_<uuid>"): searching for that byte first skips
// whole parts per call. When the anchor byte turns out to be common (more than one miss per
// 32 bytes scanned), the rest of the search falls back to bytes.Index, which keeps hostile
// input as cheap as before.
type delimFinder struct {
	pat    []byte // "\n--" + boundary
	anchor int    // index in pat of the byte searched first; 0 means plain bytes.Index
}

// newDelimFinder picks as anchor the first byte of the boundary that is neither a letter, a
// digit nor '-': those fill header lines and JSON bodies.
func newDelimFinder(pat []byte) delimFinder {
	for i := 3; i < len(pat); i++ {
		c := pat[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return delimFinder{pat: pat, anchor: i}
		}
	}
	return delimFinder{pat: pat}
}

// index returns the index of the first occurrence of the pattern in data, or -1.
func (f *delimFinder) index(data []byte) int {
	if f.anchor == 0 || len(data) < len(f.pat) {
		return bytes.Index(data, f.pat)
	}
	c := f.pat[f.anchor]
	misses := 0
	// i is where the anchor byte of the earliest possible match lies.
	for i := f.anchor; i < len(data); {
		j := bytes.IndexByte(data[i:], c)
		if j < 0 {
			return -1
		}
		at := i + j - f.anchor
		if bytes.HasPrefix(data[at:], f.pat) {
			return at
		}
		i += j + 1
		if misses++; misses > 8 && misses > i/32 {
			if k := bytes.Index(data[at+1:], f.pat); k >= 0 {
				return at + 1 + k
			}
			return -1
		}
	}
	return -1
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
// Request lines and header values are long and plain: eight bytes are tested at a time, and
// only a block holding a byte below 0x20 or 0x7f is looked at byte by byte.
func hasControl[T ~string | ~[]byte](b T, allowTab bool) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		if mayHoldControl(x) && hasControlSlow(b[i:i+8], allowTab) {
			return true
		}
	}
	return hasControlSlow(b[i:], allowTab)
}

// mayHoldControl reports whether one of the eight bytes of x is below 0x20 or is 0x7f; the
// caller then looks at the block byte by byte, for the tab exception.
func mayHoldControl(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	del := x ^ (ones * 0x7f)
	// b - n has its high bit set for b < n (no borrow reaches the first such byte);
	// &^x drops bytes >= 0x80, which are not control characters.
	return ((x-ones*0x20)|(del-ones))&^x&highs != 0
}

func hasControlSlow[T ~string | ~[]byte](b T, allowTab bool) bool {
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
