package blobwire

import (
	"net/http"
	"strconv"
	"strings"

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
	seq := blob.NoSeqCond
	for _, x := range []struct {
		h string
		v *int64
	}{{"X-Ms-If-Sequence-Number-Le", &seq.LE}, {"X-Ms-If-Sequence-Number-Lt", &seq.LT}, {"X-Ms-If-Sequence-Number-Eq", &seq.EQ}} {
		if *x.v, err = c.seqHeader(x.h); err != nil {
			return err
		}
	}
	res, err := s.svc.PutPage(c.Ctx, r, off, n, body, cond, seq)
	if err != nil {
		return err
	}
	h := &c.FC.Response.Header
	setETag(h, res.Blob.ETag(), res.Blob.Modified)
	h.Set("X-Ms-Blob-Sequence-Number", strconv.FormatInt(res.Blob.Seq, 10))
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
	var changed, cleared [][2]int64
	if v := c.q.Get("prevsnapshot"); v != "" {
		prevTicks, err := parseSnapshot(v)
		if err != nil {
			return err
		}
		if r.Snapshot != 0 && prevTicks >= r.Snapshot {
			return azerr.New(azerr.PreviousSnapshotCannotBeNewer)
		}
		prev, err := s.svc.Get(c.Ctx, blob.Ref{Account: r.Account, Container: r.Container, Name: r.Name, Snapshot: prevTicks}, blob.Cond{})
		if azerr.Is(err, azerr.BlobNotFound) {
			return azerr.New(azerr.PreviousSnapshotNotFound)
		}
		if err != nil {
			return err
		}
		changed, cleared = blob.PageDiff(b, prev, off, n)
	} else {
		changed = blob.PageRanges(b, off, n)
	}
	h := &c.FC.Response.Header
	setETag(h, b.ETag(), b.Modified)
	h.Set("X-Ms-Blob-Content-Length", strconv.FormatInt(b.Size, 10))
	h.Set("Content-Type", "application/xml")
	out := []byte(`<?xml version="1.0" encoding="utf-8"?><PageList>`)
	// Both kinds in offset order, as Azure lists them.
	for len(changed) > 0 || len(cleared) > 0 {
		tag, pr := "PageRange", changed
		if len(changed) == 0 || len(cleared) > 0 && cleared[0][0] < changed[0][0] {
			tag, pr = "ClearRange", cleared
			cleared = cleared[1:]
		} else {
			changed = changed[1:]
		}
		out = append(out, "<"+tag+"><Start>"...)
		out = strconv.AppendInt(out, pr[0][0], 10)
		out = append(out, "</Start><End>"...)
		out = strconv.AppendInt(out, pr[0][1], 10)
		out = append(out, "</End></"+tag+">"...)
	}
	out = append(out, "</PageList>"...)
	s.status(c, http.StatusOK)
	c.FC.Response.SetBody(out)
	return nil
}

// seqHeader reads a sequence number header: 0 to 2^63-1, -1 when absent.
func (c *call) seqHeader(name string) (int64, error) {
	v := c.Header.Get(name)
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, azerr.New(azerr.InvalidHeaderValue)
	}
	return n, nil
}

// contentHeaders are the properties Set Blob Properties replaces.
var contentHeaders = []string{"X-Ms-Blob-Content-Type", "X-Ms-Blob-Content-Encoding", "X-Ms-Blob-Content-Language",
	"X-Ms-Blob-Content-Disposition", "X-Ms-Blob-Cache-Control", "X-Ms-Blob-Content-Md5"}

// pageProps reads Set Blob Properties' page blob headers: x-ms-blob-content-length (resize),
// x-ms-sequence-number-action with x-ms-blob-sequence-number. A request with only these
// (the SDKs' Resize and UpdateSequenceNumber) leaves the content properties alone.
func (c *call) pageProps(p *blob.SetPropsRequest) error {
	if v := c.Header.Get("X-Ms-Blob-Content-Length"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return azerr.New(azerr.InvalidHeaderValue)
		}
		p.Resize = n
	}
	seq, err := c.seqHeader("X-Ms-Blob-Sequence-Number")
	if err != nil {
		return err
	}
	switch a := strings.ToLower(c.Header.Get("X-Ms-Sequence-Number-Action")); a {
	case "":
		if seq >= 0 {
			return azerr.New(azerr.MissingRequiredHeader)
		}
	case "max", "update":
		if seq < 0 {
			return azerr.New(azerr.MissingRequiredHeader)
		}
		p.SeqAction, p.Seq = a, seq
	case "increment":
		if seq >= 0 {
			return azerr.New(azerr.InvalidHeaderValue)
		}
		p.SeqAction = a
	default:
		return azerr.New(azerr.InvalidHeaderValue)
	}
	if p.Resize < 0 && p.SeqAction == "" {
		return nil
	}
	p.KeepProps = true
	for _, h := range contentHeaders {
		if c.Header.Has(h) {
			p.KeepProps = false
		}
	}
	return nil
}
