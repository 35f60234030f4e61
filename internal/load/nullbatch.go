package load

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"
)

// maxBatchOps is Azure's limit on operations in one entity group transaction.
const maxBatchOps = 100

// countBatchOps reads a $batch body (multipart/mixed holding one multipart/mixed changeset) and
// returns how many operations the changeset holds. It checks structure only, not the embedded
// HTTP requests: the null server answers every operation with 204.
func countBatchOps(contentType string, body io.Reader) (int, error) {
	outer, err := multipartBoundary(contentType)
	if err != nil {
		return 0, fmt.Errorf("batch: %w", err)
	}
	mr := multipart.NewReader(body, outer)
	part, err := mr.NextPart()
	if err != nil {
		return 0, fmt.Errorf("batch: first part: %w", err)
	}
	inner, err := multipartBoundary(part.Header.Get("Content-Type"))
	if err != nil {
		return 0, fmt.Errorf("batch: changeset: %w", err)
	}
	cr := multipart.NewReader(part, inner)
	n := 0
	for {
		op, err := cr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("batch: operation %d: %w", n+1, err)
		}
		if _, err := io.Copy(io.Discard, op); err != nil {
			return 0, fmt.Errorf("batch: operation %d: %w", n+1, err)
		}
		n++
		if n > maxBatchOps {
			return 0, fmt.Errorf("batch: more than %d operations", maxBatchOps)
		}
	}
	if n == 0 {
		return 0, errors.New("batch: empty changeset")
	}
	return n, nil
}

// multipartBoundary returns the boundary of a multipart/mixed content type.
func multipartBoundary(contentType string) (string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", fmt.Errorf("content type %q: %w", contentType, err)
	}
	if mt != "multipart/mixed" || params["boundary"] == "" {
		return "", fmt.Errorf("content type %q: want multipart/mixed with a boundary", contentType)
	}
	return params["boundary"], nil
}

// batchResponse renders a successful $batch response body for n operations, each answered
// "204 No Content" with an ETag, and returns it with its Content-Type.
func batchResponse(id string, n int, etag string) (body, contentType string) {
	batchB := "batchresponse_" + id
	csB := "changesetresponse_" + id
	var b strings.Builder
	b.Grow(200 + n*180)
	b.WriteString("--" + batchB + "\r\nContent-Type: multipart/mixed; boundary=" + csB + "\r\n\r\n")
	for range n {
		b.WriteString("--" + csB + "\r\n")
		b.WriteString("Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString("HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n")
		b.WriteString("DataServiceVersion: 3.0;\r\nETag: " + etag + "\r\n\r\n\r\n")
	}
	b.WriteString("--" + csB + "--\r\n--" + batchB + "--\r\n")
	return b.String(), "multipart/mixed; boundary=" + batchB
}
