package batch

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Conventional prefixes of response boundaries. JS finds sub-responses by splitting on the
// literal "--changesetresponse_", so the changeset prefix is mandatory.
const (
	BatchResponsePrefix     = "batchresponse_"
	ChangesetResponsePrefix = "changesetresponse_"
)

// Content types used in sub-responses.
const (
	// JSONMinimalMetadata is the Content-Type of JSON bodies in sub-responses.
	JSONMinimalMetadata = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
)

// NewBoundary returns prefix followed by a random UUID (version 4), e.g.
// NewBoundary(BatchResponsePrefix) = "batchresponse_4c637ba4-b2e8-40f8-8e88-e2f0de4ce0f4".
func NewBoundary(prefix string) string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (it crashes the program instead)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(prefix, u)
}

// formatUUID is fmt.Sprintf("%s%x-%x-%x-%x-%x", prefix, u[0:4], u[4:6], u[6:8], u[8:10],
// u[10:16]) without fmt's allocations.
func formatUUID(prefix string, u [16]byte) string {
	var buf [64]byte
	b := append(buf[:0], prefix...)
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return string(b)
}

const hexDigits = "0123456789abcdef"

// ResponseContentType is the outer response's Content-Type for a batch boundary.
func ResponseContentType(boundary string) string {
	return "multipart/mixed; boundary=" + boundary
}

// SubResponse is one application/http part of a batch response. The writer emits the set
// fields in this fixed order, with these exact spellings (JS matches "ETag: " case-sensitively):
//
//	HTTP/1.1 <Status> <text>
//	Content-ID                (only if set)
//	X-Content-Type-Options: nosniff
//	Cache-Control: no-cache
//	Preference-Applied, DataServiceVersion, Content-Type, Location, DataServiceId, ETag
//
// Use the constructors (InsertedNoContent, Inserted, Updated, Deleted, Failed, Retrieved),
// which follow the table in spec/batch.md §3. Body must be single-line JSON (never pretty
// printed): JS extracts error bodies with a regexp that does not cross lines.
type SubResponse struct {
	Status             int
	ContentID          string // echoed right after the status line when set (legacy behaviour)
	PreferenceApplied  string
	DataServiceVersion string
	ContentType        string
	Location           string
	DataServiceID      string
	ETag               string
	Body               []byte
}

// InsertedNoContent is an insert answered under Prefer: return-no-content (what every current
// SDK asks for in a batch): 204 with Location, DataServiceId and ETag.
func InsertedNoContent(location, etag string) SubResponse {
	return SubResponse{
		Status:             http.StatusNoContent,
		PreferenceApplied:  "return-no-content",
		DataServiceVersion: "3.0;",
		Location:           location,
		DataServiceID:      location,
		ETag:               etag,
	}
}

// Inserted is an insert answered with the stored entity: 201 with body (entity JSON at the
// negotiated metadata level, contentType to match). preferenceApplied reports that the client
// sent Prefer: return-content. Only for inserts without Prefer: return-no-content: JS reads
// any JSON body in a part as an error.
func Inserted(location, etag, contentType string, body []byte, preferenceApplied bool) SubResponse {
	r := SubResponse{
		Status:             http.StatusCreated,
		DataServiceVersion: "3.0;",
		ContentType:        contentType,
		Location:           location,
		ETag:               etag,
		Body:               body,
	}
	if preferenceApplied {
		r.PreferenceApplied = "return-content"
	}
	return r
}

// Updated is an update, merge, insert-or-replace or insert-or-merge: 204 with the new ETag.
func Updated(etag string) SubResponse {
	return SubResponse{Status: http.StatusNoContent, DataServiceVersion: "1.0;", ETag: etag}
}

// Deleted is a delete: 204 with no ETag.
func Deleted() SubResponse {
	return SubResponse{Status: http.StatusNoContent, DataServiceVersion: "1.0;"}
}

// Failed is the one sub-response of a failed changeset: the status of err (an *azerr.Error,
// possibly wrapped; anything else is InternalError) and the JSON body of ErrorBody, whose
// message starts with "<index>:". Set ContentType to the nometadata/fullmetadata variant if
// the sub-request negotiated one; the body is the same at every level.
func Failed(index int, err error, requestID string, now time.Time) SubResponse {
	body, status := ErrorBody(index, err, requestID, now)
	return SubResponse{
		Status:             status,
		DataServiceVersion: "3.0;",
		ContentType:        JSONMinimalMetadata,
		Body:               body,
	}
}

// Retrieved is the 200 answer to a retrieve batch (one GET, WriteRetrieveResponse).
func Retrieved(etag, contentType string, body []byte) SubResponse {
	return SubResponse{
		Status:             http.StatusOK,
		DataServiceVersion: "3.0;",
		ContentType:        contentType,
		ETag:               etag,
		Body:               body,
	}
}

// WriteResponse writes the body of a 202 batch response: the batch part holding a changeset
// with subs in order (spec/batch.md §3 and §4). There is no preamble, every line ends in CRLF,
// and every sub-response's header block is closed by an empty line even without a body. It
// fails, writing nothing, if a boundary or field is unusable (empty status, CR/LF in a
// value, a body holding a line that starts with the delimiter): those are server bugs.
func WriteResponse(w io.Writer, batchBoundary, changesetBoundary string, subs []SubResponse) error {
	b, err := AppendResponse(nil, batchBoundary, changesetBoundary, subs)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// AppendResponse is WriteResponse appending to dst (a reused buffer spares the copy through
// an io.Writer). On error it returns dst unchanged.
func AppendResponse(dst []byte, batchBoundary, changesetBoundary string, subs []SubResponse) ([]byte, error) {
	n := 4*len(batchBoundary) + 3*len(changesetBoundary) + 64
	for i := range subs {
		n += len(changesetBoundary) + 6 + subSize(&subs[i])
	}
	w := NewChangesetWriter(slices.Grow(dst, n), batchBoundary, changesetBoundary)
	for i := range subs {
		w.Write(&subs[i])
	}
	b, err := w.Finish()
	if err != nil {
		return dst, err
	}
	return b, nil
}

// ChangesetWriter renders the body AppendResponse renders, one sub-response at a time, into a
// caller's buffer: a server writes each sub-response as it builds it, without a
// []SubResponse or per-operation strings. The first error (an unusable boundary or field,
// as AppendResponse reports it) sticks: later writes do nothing and Finish returns it.
type ChangesetWriter struct {
	b                 []byte
	orig              int // len of the caller's buffer: Finish cuts back to it on error
	batchBoundary     string
	changesetBoundary string
	bounds            [2]string // both boundaries, for checkSub
	n                 int       // sub-responses written
	err               error
}

// NewChangesetWriter starts a changeset response body after dst's contents.
func NewChangesetWriter(dst []byte, batchBoundary, changesetBoundary string) ChangesetWriter {
	w := ChangesetWriter{b: dst, orig: len(dst), batchBoundary: batchBoundary, changesetBoundary: changesetBoundary,
		bounds: [2]string{batchBoundary, changesetBoundary}}
	if w.err = checkBoundaries(w.bounds[:]...); w.err == nil {
		w.b = appendDelimiter(w.b, batchBoundary, false)
		w.b = append(w.b, "Content-Type: multipart/mixed; boundary="...)
		w.b = append(w.b, changesetBoundary...)
		w.b = append(w.b, "\r\n\r\n"...)
	}
	return w
}

// Write appends one sub-response.
func (w *ChangesetWriter) Write(s *SubResponse) {
	if w.err != nil {
		return
	}
	if w.err = checkSub(w.n, s, w.bounds[:]...); w.err != nil {
		return
	}
	w.n++
	w.b = appendDelimiter(w.b, w.changesetBoundary, false)
	w.b = appendSub(w.b, s)
	w.b = append(w.b, "\r\n"...)
}

// WriteInsertedNoContent appends InsertedNoContent(string(location), etag), sparing the
// caller the location string: a server renders each Location into one reused buffer.
func (w *ChangesetWriter) WriteInsertedNoContent(location []byte, etag string) {
	if w.err != nil {
		return
	}
	// The constructor's other fields are constants: only the two values can break framing.
	sub := InsertedNoContent("", etag)
	bad := ""
	switch {
	case bytes.IndexByte(location, '\r') >= 0 || bytes.IndexByte(location, '\n') >= 0:
		bad = string(location)
	case hasLineBreak(etag):
		bad = etag
	}
	if bad != "" {
		w.err = fmt.Errorf("batch: sub-response %d: line break in header value %q", w.n, bad)
		return
	}
	w.n++
	w.b = appendDelimiter(w.b, w.changesetBoundary, false)
	w.b = appendSubAt(w.b, &sub, location, location)
	w.b = append(w.b, "\r\n"...)
}

// Finish appends the close delimiters and returns the buffer, or the caller's buffer as it
// was (cut back to its original length) and the first error.
func (w *ChangesetWriter) Finish() ([]byte, error) {
	if w.err != nil {
		return w.b[:w.orig], w.err
	}
	w.b = appendDelimiter(w.b, w.changesetBoundary, true)
	return appendDelimiter(w.b, w.batchBoundary, true), nil
}

// WriteRetrieveResponse writes the body of the 202 response to a retrieve batch: one
// application/http part directly in the batch, with no changeset level.
func WriteRetrieveResponse(w io.Writer, batchBoundary string, sub SubResponse) error {
	b, err := AppendRetrieveResponse(nil, batchBoundary, sub)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// AppendRetrieveResponse is WriteRetrieveResponse appending to dst. On error it returns dst
// unchanged.
func AppendRetrieveResponse(dst []byte, batchBoundary string, sub SubResponse) ([]byte, error) {
	if err := checkWrite([]string{batchBoundary}, []SubResponse{sub}); err != nil {
		return dst, err
	}
	b := slices.Grow(dst, 3*len(batchBoundary)+16+subSize(&sub))
	b = appendDelimiter(b, batchBoundary, false)
	b = appendSub(b, &sub)
	b = append(b, "\r\n"...)
	return appendDelimiter(b, batchBoundary, true), nil
}

// appendDelimiter appends "--boundary" (plus "--" for the close delimiter) and CRLF.
func appendDelimiter(b []byte, boundary string, close bool) []byte {
	b = append(b, "--"...)
	b = append(b, boundary...)
	if close {
		b = append(b, "--"...)
	}
	return append(b, "\r\n"...)
}

// Constant parts of every sub-response: the MIME part header and the fields that follow the
// optional Content-ID.
const (
	subPartHeader = "Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 "
	subFixed      = "X-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n"
)

// appendSub appends one part: MIME headers, empty line, status line, headers, empty line,
// body. The caller writes the CRLF that starts the next delimiter.
func appendSub(b []byte, s *SubResponse) []byte {
	return appendSubAt(b, s, s.Location, s.DataServiceID)
}

// appendSubAt is appendSub with the Location and DataServiceId values given apart, so that a
// caller can pass bytes from a reused buffer.
func appendSubAt[T ~string | ~[]byte](b []byte, s *SubResponse, location, dataServiceID T) []byte {
	b = append(b, subPartHeader...)
	b = strconv.AppendInt(b, int64(s.Status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(s.Status)...)
	b = append(b, "\r\n"...)
	b = appendField(b, "Content-ID: ", s.ContentID)
	b = append(b, subFixed...)
	b = appendField(b, "Preference-Applied: ", s.PreferenceApplied)
	b = appendField(b, "DataServiceVersion: ", s.DataServiceVersion)
	b = appendField(b, "Content-Type: ", s.ContentType)
	b = appendField(b, "Location: ", location)
	b = appendField(b, "DataServiceId: ", dataServiceID)
	b = appendField(b, "ETag: ", s.ETag)
	b = append(b, "\r\n"...)
	return append(b, s.Body...)
}

// appendField appends "Name: value" CRLF (prefix holds "Name: "), or nothing for an empty value.
func appendField[T ~string | ~[]byte](b []byte, prefix string, value T) []byte {
	if len(value) == 0 {
		return b
	}
	b = append(b, prefix...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

// subSize bounds the bytes appendSub writes for s, so the output is allocated once.
func subSize(s *SubResponse) int {
	const names = len("Content-ID: Preference-Applied: DataServiceVersion: Content-Type: Location: DataServiceId: ETag: ")
	return len(subPartHeader) + 48 + len(subFixed) + names + 2*7 + 2 + len(s.ContentID) + len(s.PreferenceApplied) +
		len(s.DataServiceVersion) + len(s.ContentType) + len(s.Location) + len(s.DataServiceID) + len(s.ETag) + len(s.Body)
}

// checkWrite rejects output that would not frame correctly.
func checkWrite(bounds []string, subs []SubResponse) error {
	if err := checkBoundaries(bounds...); err != nil {
		return err
	}
	for i := range subs {
		if err := checkSub(i, &subs[i], bounds...); err != nil {
			return err
		}
	}
	return nil
}

// checkBoundaries rejects response boundaries that cannot frame parts.
func checkBoundaries(bounds ...string) error {
	for _, bd := range bounds {
		if bd == "" || len(bd) > DefaultMaxBoundaryLen || hasControl(bd, false) {
			return fmt.Errorf("batch: unusable response boundary %q", bd)
		}
	}
	return nil
}

// checkSub rejects sub-response i if it would not frame correctly within bounds.
func checkSub(i int, s *SubResponse, bounds ...string) error {
	if http.StatusText(s.Status) == "" {
		return fmt.Errorf("batch: sub-response %d: status %d", i, s.Status)
	}
	for _, v := range [...]string{s.ContentID, s.PreferenceApplied, s.DataServiceVersion,
		s.ContentType, s.Location, s.DataServiceID, s.ETag} {
		if hasLineBreak(v) {
			return fmt.Errorf("batch: sub-response %d: line break in header value %q", i, v)
		}
	}
	if len(s.Body) == 0 {
		return nil
	}
	for _, bd := range bounds {
		if containsDelimiter(s.Body, bd) {
			return errors.New("batch: sub-response body contains a delimiter")
		}
	}
	return nil
}

// hasLineBreak reports whether v holds a CR or LF.
func hasLineBreak(v string) bool {
	return strings.IndexByte(v, '\r') >= 0 || strings.IndexByte(v, '\n') >= 0
}

// containsDelimiter reports whether body holds a line starting with "--" + boundary (at
// most DefaultMaxBoundaryLen bytes, as checkWrite ensures).
func containsDelimiter(body []byte, boundary string) bool {
	var stack [3 + DefaultMaxBoundaryLen]byte
	nlDelim := append(append(stack[:0], "\n--"...), boundary...)
	return bytes.HasPrefix(body, nlDelim[1:]) || bytes.Contains(body, nlDelim)
}
