package batch

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
)

// Request is a parsed $batch body.
type Request struct {
	// Boundary is the outer (batch) boundary from the request's Content-Type.
	Boundary string
	// ChangesetBoundary is the changeset's boundary; empty for a retrieve batch.
	ChangesetBoundary string
	// Retrieve is true when the batch holds one bare GET instead of a changeset (legacy .NET
	// TableBatchOperation.Retrieve). Its response has no changeset level: WriteRetrieveResponse.
	Retrieve bool
	// Operations are the sub-requests in request order; a changeset may hold none.
	Operations []Operation
}

// Operation is one HTTP sub-request.
type Operation struct {
	// Method is the request-line method exactly as sent (POST, PUT, PATCH, MERGE, DELETE, GET).
	Method string
	// URL is the request target exactly as sent, still percent-encoded; usually absolute
	// (http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='a',RowKey='b')). See PathAndQuery.
	URL string
	// Header holds the sub-request's own headers (If-Match, Prefer, Content-Type, Accept, …),
	// not the MIME part headers. Empty values are kept: Go aztables sends
	// "DataServiceVersion: " and "x-ms-version: ". Operations whose header blocks are
	// byte-identical share one map, so treat it as read-only.
	Header http.Header
	// Body is the sub-request body with surrounding whitespace trimmed; it aliases the slice
	// given to Parse. Content-Length is ignored: the part delimiter ends the body.
	Body []byte
	// BodyText is Body as a string, for decoders that work on strings (entity.DecodeJSONString)
	// and would otherwise copy Body again.
	BodyText string
	// ContentID is the MIME part's Content-ID (Python) or else the sub-request's own
	// Content-ID header (legacy azure-storage-node); empty when neither was sent.
	ContentID string
}

// Parse parses a $batch request body. contentType is the outer request's Content-Type header
// (multipart/mixed with a boundary). Whole-request failures are *azerr.Error values (wrapped):
// 413 RequestBodyTooLarge, or 400 InvalidInput for anything malformed. A failure that belongs
// to one operation (a malformed sub-request, a GET in a changeset, more than
// lim.MaxOperations operations) is an *OpError.
func Parse(contentType string, body []byte, lim Limits) (*Request, error) {
	lim = lim.withDefaults()
	if len(body) > lim.MaxBodyBytes {
		return nil, fmt.Errorf("batch: body of %d bytes: %w", len(body), azerr.New(azerr.RequestBodyTooLarge))
	}
	boundary, err := multipartBoundary(contentType, &lim)
	if err != nil {
		return nil, invalid("request Content-Type %q: %v", contentType, err)
	}
	var one [1][]byte
	parts, err := splitMultipart(body, boundary, 1, one[:])
	switch {
	case errors.Is(err, errTooManyParts):
		return nil, invalid("more than one batch part (only one changeset is allowed)")
	case err != nil:
		return nil, invalid("batch body: %v", err)
	case len(parts) == 0:
		return nil, invalid("empty batch")
	}
	hdr, off, _, err := readPartHeader(parts[0], "", &lim)
	if err != nil {
		return nil, invalid("batch part header: %v", err)
	}
	content := parts[0][off:]
	media, csBoundary, err := mediaType(hdr.contentType)
	if err != nil {
		return nil, invalid("batch part Content-Type: %v", err)
	}
	req := &Request{Boundary: boundary}
	switch media {
	case "multipart/mixed":
		if err := checkBoundary(csBoundary, &lim); err != nil {
			return nil, invalid("changeset Content-Type: %v", err)
		}
		req.ChangesetBoundary = csBoundary
		req.Operations, err = parseChangeset(content, csBoundary, &lim)
	case "", "application/http":
		req.Retrieve = true
		req.Operations, err = parseRetrieve(hdr, content, &lim)
	default:
		return nil, invalid("batch part of type %q", media)
	}
	if err != nil {
		return nil, err
	}
	return req, nil
}

// multipartBoundary returns the boundary of a multipart/mixed Content-Type.
func multipartBoundary(contentType string, lim *Limits) (string, error) {
	media, boundary, err := mediaType(contentType)
	if err != nil {
		return "", err
	}
	if media != "multipart/mixed" {
		return "", errors.New("not multipart/mixed")
	}
	return boundary, checkBoundary(boundary, lim)
}

// parseChangeset parses the changeset's parts, each one application/http sub-request.
func parseChangeset(content []byte, boundary string, lim *Limits) ([]Operation, error) {
	var stack [DefaultMaxOperations][]byte
	parts, err := splitMultipart(content, boundary, lim.MaxOperations, stack[:])
	switch {
	case errors.Is(err, errTooManyParts):
		return nil, tooManyOperations(lim.MaxOperations)
	case err != nil:
		return nil, invalid("changeset: %v", err)
	}
	ops := make([]Operation, len(parts))
	var cache headerCache
	for i, p := range parts {
		// One copy per part: method, URL, header values and BodyText are substrings of it,
		// so what a decoded entity retains is its own part (and at most the header values of
		// an earlier one), never the whole batch.
		text := string(p)
		hdr, off, err := cache.partHeader(p, text, lim)
		if err != nil {
			return nil, opInvalid(i, "part header: %v", err)
		}
		if err := parseOperation(&ops[i], hdr, p[off:], text[off:], &cache, lim); err != nil {
			return nil, &OpError{Index: i, Err: err}
		}
		if ops[i].Method == http.MethodGet {
			return nil, opInvalid(i, "GET inside a changeset")
		}
	}
	return ops, nil
}

// parseRetrieve parses the bare application/http part of a retrieve batch: one GET.
func parseRetrieve(hdr partHeader, content []byte, lim *Limits) ([]Operation, error) {
	var op Operation
	var cache headerCache
	if err := parseOperation(&op, hdr, content, string(content), &cache, lim); err != nil {
		return nil, err
	}
	if op.Method != http.MethodGet {
		return nil, invalid("%s outside a changeset", op.Method)
	}
	return []Operation{op}, nil
}

// parseOperation parses one application/http part, given its MIME headers and content
// (text is the same bytes as a string; the operation's strings are substrings of it):
//
//	content := *( [CR] LF ) request-line header-block [ body ]
//	request-line := method SP request-target [ SP HTTP-version ] [CR] LF
func parseOperation(op *Operation, partHdr partHeader, content []byte, text string, cache *headerCache, lim *Limits) error {
	media, _, err := mediaType(partHdr.contentType)
	if err != nil || (media != "" && media != "application/http") {
		return invalid("sub-request part of type %q", partHdr.contentType)
	}
	skip := len(content) - len(bytes.TrimLeft(content, "\r\n"))
	content, text = content[skip:], text[skip:]
	line, next, err := nextLine(content, 0, lim.MaxHeaderBytes)
	if err != nil {
		return invalid("request line: %v", err)
	}
	if op.Method, op.URL, err = parseRequestLine(text[:len(line)]); err != nil {
		return invalid("request line: %v", err)
	}
	content, text = content[next:], text[next:]
	hdr, off, err := cache.requestHeader(content, text, lim)
	if err != nil {
		return invalid("sub-request header: %v", err)
	}
	op.Header = hdr
	start, end := trimSpan(content, off, len(content))
	op.Body, op.BodyText = content[start:end], text[start:end]
	op.ContentID = partHdr.contentID
	if v := hdr["Content-Id"]; op.ContentID == "" && len(v) > 0 { // hdr.Get, key already canonical
		op.ContentID = v[0]
	}
	return nil
}

// trimSpan narrows data[start:end] by the whitespace bytes.Trim(…, " \t\r\n") removes.
func trimSpan(data []byte, start, end int) (int, int) {
	for start < end && isSpace(data[start]) {
		start++
	}
	for end > start && isSpace(data[end-1]) {
		end--
	}
	return start, end
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// parseRequestLine splits "METHOD target HTTP/1.1". The version may be missing, and the
// target is whatever lies between method and version, trimmed, so a hand-written target with
// a space survives for the resource parser to judge.
func parseRequestLine(line string) (method, target string, err error) {
	if hasControl(line, true) {
		return "", "", errors.New("control character")
	}
	method, rest, _ := strings.Cut(trimBlank(line), " ")
	if !validFieldName(method) {
		return "", "", errors.New("malformed method")
	}
	rest = trimBlank(rest)
	if i := strings.LastIndexAny(rest, " \t"); i != -1 && strings.HasPrefix(rest[i+1:], "HTTP/") {
		rest = trimBlank(rest[:i])
	}
	if rest == "" || strings.ContainsRune(rest, '\t') {
		return "", "", errors.New("malformed request target")
	}
	return method, rest, nil
}

// trimBlank is strings.Trim(s, " \t") without building a cutset per call.
func trimBlank(s string) string {
	for len(s) > 0 && isBlank(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isBlank(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
