package blobwire

import (
	"net/http"
	"strconv"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/blob"
)

// pageRange reads x-ms-range (or Range) for page operations: both ends required.
func (c *call) pageRange() (off, n int64, err error) {
	v := c.Header.Get("X-Ms-Range")
	if v == "" {
		v = c.Header.Get("Range")
	}
	r, ok, err := ParseRange(v)
	if err != nil || !ok || r.Suffix || r.End < 0 {
		return 0, 0, azerr.New(azerr.InvalidPageRange)
	}
	return r.Start, r.End - r.Start + 1, nil
}

// pageListRange reads the optional range of Get Page Ranges. Unlike a page write, an open end
// ("bytes=0-", which the JavaScript SDK sends by default) is allowed: it runs to the blob's end
// (n < 0).
func (c *call) pageListRange() (off, n int64, err error) {
	v := c.Header.Get("X-Ms-Range")
	if v == "" {
		v = c.Header.Get("Range")
	}
	r, ok, err := ParseRange(v)
	switch {
	case err != nil || (ok && r.Suffix):
		return 0, 0, azerr.New(azerr.InvalidPageRange)
	case !ok:
		return 0, -1, nil
	case r.End < 0:
		return r.Start, -1, nil
	}
	return r.Start, r.End - r.Start + 1, nil
}

func (s *Server) putPage(c *call) error {
	r, err := c.writeRef()
	if err != nil {
		return err
	}
	off, n, err := c.pageRange()
	if err != nil {
		return err
	}
	cond, err := c.cond()
	if err != nil {
		return err
	}
	var body *blob.Body
	switch c.Header.Get("X-Ms-Page-Write") {
	case "update":
		b, err := c.body()
		if err != nil {
			return err
		}
		body = &b
	case "clear":
		if c.FC.Request.Header.ContentLength() > 0 {
			return azerr.New(azerr.InvalidHeaderValue)
		}
	case "":
		return azerr.New(azerr.MissingRequiredHeader)
	default:
		return azerr.New(azerr.InvalidHeaderValue)
	}
	res, err := s.svc.PutPage(c.Ctx, r, off, n, body, cond)
	if err != nil {
		return err
	}
	h := &c.FC.Response.Header
	setETag(h, res.Blob.ETag(), res.Blob.Modified)
	h.Set("X-Ms-Blob-Sequence-Number", "0")
	if body != nil {
		s.stagedHeaders(c, res, *body)
	}
	s.status(c, http.StatusCreated)
	return nil
}

func (s *Server) getPageRanges(c *call) error {
	r, err := c.ref()
	if err != nil {
		return err
	}
	cond, err := c.cond()
	if err != nil {
		return err
	}
	b, err := s.svc.Get(c.Ctx, r, cond)
	if err != nil {
		return err
	}
	if b.Type != blob.PageBlob {
		return azerr.New(azerr.InvalidBlobType)
	}
	off, n, err := c.pageListRange()
	if err != nil {
		return err
	}
	h := &c.FC.Response.Header
	setETag(h, b.ETag(), b.Modified)
	h.Set("X-Ms-Blob-Content-Length", strconv.FormatInt(b.Size, 10))
	h.Set("Content-Type", "application/xml")
	out := []byte(`<?xml version="1.0" encoding="utf-8"?><PageList>`)
	for _, pr := range blob.PageRanges(b, off, n) {
		out = append(out, "<PageRange><Start>"...)
		out = strconv.AppendInt(out, pr[0], 10)
		out = append(out, "</Start><End>"...)
		out = strconv.AppendInt(out, pr[1], 10)
		out = append(out, "</End></PageRange>"...)
	}
	out = append(out, "</PageList>"...)
	s.status(c, http.StatusOK)
	c.FC.Response.SetBody(out)
	return nil
}
