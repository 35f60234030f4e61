package blobwire

import (
	"crypto/md5"
	"encoding/base64"
	"hash/crc64"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/blob"
)

// Size limits by x-ms-version (blob.md §16).
func maxPutBlob(version string) int64 {
	switch {
	case version >= "2019-12-12":
		return 5000 << 20
	case version >= "2016-05-31":
		return 256 << 20
	}
	return 64 << 20
}

func maxPutBlock(version string) int64 {
	switch {
	case version >= "2019-12-12":
		return 4000 << 20
	case version >= "2016-05-31":
		return 100 << 20
	}
	return 4 << 20
}

func (c *call) version() string {
	if v := c.Header.Get("X-Ms-Version"); v != "" {
		return v
	}
	return "2019-12-12"
}

func (c *call) ref() (blob.Ref, error) {
	snap, err := parseSnapshot(c.q.Get("snapshot"))
	return blob.Ref{Account: c.Account, Container: c.container, Name: c.blob, Snapshot: snap}, err
}

// writeRef is ref for a write: snapshots are read-only.
func (c *call) writeRef() (blob.Ref, error) {
	r, err := c.ref()
	if err == nil && r.Snapshot != 0 {
		err = azerr.Newf(azerr.InvalidQueryParameterValue, "This operation is not permitted on a snapshot.")
	}
	return r, err
}

func (s *Server) putBlob(c *call) error {
	r, err := c.writeRef()
	if err != nil {
		return err
	}
	typ := c.Header.Get("X-Ms-Blob-Type")
	if typ == "" {
		return azerr.New(azerr.MissingRequiredHeader)
	}
	body, err := c.body()
	if err != nil {
		return err
	}
	if body.Size > maxPutBlob(c.version()) {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	p := blob.PutRequest{Type: typ, Meta: c.meta(), Body: body}
	if p.Tags, err = c.tagsHeader(); err != nil {
		return err
	}
	if p.Props, p.SetMD5, err = c.props(); err != nil {
		return err
	}
	if p.Props.ContentType == "" && typ == blob.BlockBlob {
		p.Props.ContentType = c.Header.Get("Content-Type")
	}
	if p.Tier, err = c.tier(); err != nil {
		return err
	}
	if p.Cond, err = c.cond(); err != nil {
		return err
	}
	if typ == blob.PageBlob {
		if p.PageSize, err = strconv.ParseInt(c.Header.Get("X-Ms-Blob-Content-Length"), 10, 64); err != nil {
			return azerr.New(azerr.InvalidHeaderValue)
		}
		if p.Seq, err = c.seqHeader("X-Ms-Blob-Sequence-Number"); err != nil {
			return err
		}
		p.Seq = max(p.Seq, 0)
	}
	b, err := s.svc.Put(c.Ctx, r, p)
	if err != nil {
		return err
	}
	h := &c.FC.Response.Header
	setETag(h, b.ETag(), b.Modified)
	if typ == blob.BlockBlob {
		h.Set("Content-Md5", base64.StdEncoding.EncodeToString(b.Props.ContentMD5))
	}
	if body.CRC64 != nil {
		h.Set("X-Ms-Content-Crc64", base64.StdEncoding.EncodeToString(body.CRC64))
	}
	h.Set("X-Ms-Request-Server-Encrypted", "true")
	s.status(c, http.StatusCreated)
	return nil
}

func (s *Server) putBlock(c *call) error {
	r, err := c.writeRef()
	if err != nil {
		return err
	}
	id := c.q.Get("blockid")
	if id == "" {
		return azerr.New(azerr.MissingRequiredQueryParameter)
	}
	body, err := c.body()
	if err != nil {
		return err
	}
	if body.Size > maxPutBlock(c.version()) {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	cond := blob.Cond{LeaseID: c.Header.Get("X-Ms-Lease-Id")}
	res, err := s.svc.PutBlock(c.Ctx, r, id, body, cond)
	if err != nil {
		return err
	}
	s.stagedHeaders(c, res, body)
	s.status(c, http.StatusCreated)
	return nil
}

// stagedHeaders: Content-MD5 when the request had one, else x-ms-content-crc64.
func (s *Server) stagedHeaders(c *call, res blob.StageResult, body blob.Body) {
	h := &c.FC.Response.Header
	if body.MD5 != nil {
		h.Set("Content-Md5", base64.StdEncoding.EncodeToString(res.MD5))
	} else {
		h.Set("X-Ms-Content-Crc64", base64.StdEncoding.EncodeToString(res.CRC64))
	}
	h.Set("X-Ms-Request-Server-Encrypted", "true")
}

func (s *Server) putBlockList(c *call) error {
	r, err := c.writeRef()
	if err != nil {
		return err
	}
	raw, err := c.readCheckedBody(8 << 20)
	if err != nil {
		return err
	}
	list, err := ParseBlockList(raw)
	if err != nil {
		return err
	}
	p := blob.PutRequest{Type: blob.BlockBlob, Meta: c.meta()}
	if p.Tags, err = c.tagsHeader(); err != nil {
		return err
	}
	if p.Props, p.SetMD5, err = c.props(); err != nil {
		return err
	}
	if p.Tier, err = c.tier(); err != nil {
		return err
	}
	if p.Cond, err = c.cond(); err != nil {
		return err
	}
	b, err := s.svc.PutBlockList(c.Ctx, r, list, p)
	if err != nil {
		return err
	}
	h := &c.FC.Response.Header
	setETag(h, b.ETag(), b.Modified)
	sum := md5.Sum(raw)
	h.Set("Content-Md5", base64.StdEncoding.EncodeToString(sum[:]))
	h.Set("X-Ms-Request-Server-Encrypted", "true")
	s.status(c, http.StatusCreated)
	return nil
}

func (s *Server) getBlockList(c *call) error {
	r, err := c.ref()
	if err != nil {
		return err
	}
	which := c.q.Get("blocklisttype")
	switch which {
	case "":
		which = "committed"
	case "committed", "uncommitted", "all":
	default:
		return azerr.New(azerr.InvalidQueryParameterValue)
	}
	cond, err := c.cond()
	if err != nil {
		return err
	}
	b, committed, uncommitted, err := s.svc.GetBlockList(c.Ctx, r, cond)
	if err != nil {
		return err
	}
	h := &c.FC.Response.Header
	size := int64(0)
	if b != nil {
		setETag(h, b.ETag(), b.Modified)
		size = b.Size
	}
	h.Set("X-Ms-Blob-Content-Length", strconv.FormatInt(size, 10))
	h.Set("Content-Type", "application/xml")
	out := []byte(`<?xml version="1.0" encoding="utf-8"?><BlockList>`)
	list := func(tag string, bl []blob.BlockInfo) {
		if len(bl) == 0 {
			out = append(out, "<"+tag+" />"...)
			return
		}
		out = append(out, "<"+tag+">"...)
		for _, x := range bl {
			out = append(out, "<Block><Name>"...)
			out = appendEscaped(out, x.ID)
			out = append(out, "</Name><Size>"...)
			out = strconv.AppendInt(out, x.Size, 10)
			out = append(out, "</Size></Block>"...)
		}
		out = append(out, "</"+tag+">"...)
	}
	if which != "uncommitted" {
		list("CommittedBlocks", committed)
	}
	if which != "committed" {
		list("UncommittedBlocks", uncommitted)
	}
	out = append(out, "</BlockList>"...)
	s.status(c, http.StatusOK)
	c.FC.Response.SetBody(out)
	return nil
}

func (s *Server) appendBlock(c *call) error {
	r, err := c.writeRef()
	if err != nil {
		return err
	}
	body, err := c.body()
	if err != nil {
		return err
	}
	a := blob.AppendRequest{Body: body, AppendPos: -1, MaxSize: -1}
	if a.Cond, err = c.cond(); err != nil {
		return err
	}
	for _, x := range []struct {
		h string
		v *int64
	}{{"X-Ms-Blob-Condition-Appendpos", &a.AppendPos}, {"X-Ms-Blob-Condition-Maxsize", &a.MaxSize}} {
		if v := c.Header.Get(x.h); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return azerr.New(azerr.InvalidHeaderValue)
			}
			*x.v = n
		}
	}
	res, err := s.svc.AppendBlock(c.Ctx, r, a)
	if err != nil {
		return err
	}
	h := &c.FC.Response.Header
	setETag(h, res.Blob.ETag(), res.Blob.Modified)
	s.stagedHeaders(c, res, body)
	h.Set("X-Ms-Blob-Append-Offset", strconv.FormatInt(res.Offset, 10))
	h.Set("X-Ms-Blob-Committed-Block-Count", strconv.Itoa(res.Count))
	s.status(c, http.StatusCreated)
	return nil
}

// getBlob answers Get Blob and Get Blob Properties (HEAD), streaming the bytes.
func (s *Server) getBlob(c *call) error {
	r, err := c.ref()
	if err != nil {
		return err
	}
	cond, err := c.cond()
	if err != nil {
		return err
	}
	rangeHdr := c.Header.Get("X-Ms-Range")
	if rangeHdr == "" {
		rangeHdr = c.Header.Get("Range")
	}
	rg, hasRange, err := ParseRange(rangeHdr)
	if err != nil {
		return err
	}
	wantMD5 := strings.EqualFold(c.Header.Get("X-Ms-Range-Get-Content-Md5"), "true")
	wantCRC := strings.EqualFold(c.Header.Get("X-Ms-Range-Get-Content-Crc64"), "true")
	if c.Header.Has("X-Ms-Structured-Body") {
		return azerr.New(azerr.InvalidHeaderValue)
	}
	b, err := s.svc.Get(c.Ctx, r, cond)
	if err != nil {
		return err
	}
	h := &c.FC.Response.Header
	setBlobHeaders(h, b, s.svc.Now())
	if c.sas != nil {
		for p, hn := range map[string]string{"rscc": "Cache-Control", "rscd": "Content-Disposition", "rsce": "Content-Encoding", "rscl": "Content-Language", "rsct": "Content-Type"} {
			if v := c.q.Get(p); v != "" {
				h.Set(hn, v)
			}
		}
	}
	if c.Method == http.MethodHead {
		if b.Props.ContentMD5 != nil {
			h.Set("Content-Md5", base64.StdEncoding.EncodeToString(b.Props.ContentMD5))
		}
		s.status(c, http.StatusOK)
		c.FC.Response.SkipBody = true
		h.SetContentLength(int(b.Size))
		return nil
	}
	off, n := int64(0), b.Size
	code := http.StatusOK
	if hasRange && (!rg.Suffix) {
		if rg.Start >= b.Size {
			h.Set("Content-Range", "bytes */"+strconv.FormatInt(b.Size, 10))
			return azerr.New(azerr.InvalidRange)
		}
		end := b.Size - 1
		if rg.End >= 0 && rg.End < end {
			end = rg.End
		}
		off, n, code = rg.Start, end-rg.Start+1, http.StatusPartialContent
		h.Set("Content-Range", "bytes "+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(end, 10)+"/"+strconv.FormatInt(b.Size, 10))
		if b.Props.ContentMD5 != nil {
			h.Set("X-Ms-Blob-Content-Md5", base64.StdEncoding.EncodeToString(b.Props.ContentMD5))
		}
	} else if b.Props.ContentMD5 != nil {
		h.Set("Content-Md5", base64.StdEncoding.EncodeToString(b.Props.ContentMD5))
	}
	if wantMD5 || wantCRC {
		if code != http.StatusPartialContent {
			return azerr.New(azerr.InvalidHeaderValue)
		}
		if n > 4<<20 {
			return azerr.New(azerr.OutOfRangeInput)
		}
		// At most 4 MiB: hash it first, then send the same bytes.
		rc := s.svc.Open(c.Ctx, b, off, n)
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		if wantMD5 {
			sum := md5.Sum(data)
			h.Set("Content-Md5", base64.StdEncoding.EncodeToString(sum[:]))
		} else {
			h.Set("X-Ms-Content-Crc64", base64.StdEncoding.EncodeToString(blob.CRC64Bytes(crc64.Checksum(data, blob.CRC64Table))))
		}
		s.status(c, code)
		c.FC.Response.SetBody(data)
		return nil
	}
	s.status(c, code)
	c.FC.Response.SetBodyStream(s.svc.Open(c.Ctx, b, off, n), int(n))
	return nil
}

func (s *Server) getBlobMetadata(c *call) error {
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
	h := &c.FC.Response.Header
	setETag(h, b.ETag(), b.Modified)
	setMeta(h, b.Meta)
	s.status(c, http.StatusOK)
	return nil
}

func (s *Server) setBlobProperties(c *call) error {
	r, err := c.writeRef()
	if err != nil {
		return err
	}
	p := blob.SetPropsRequest{Resize: -1}
	if p.Props, _, err = c.props(); err != nil {
		return err
	}
	if err := c.pageProps(&p); err != nil {
		return err
	}
	cond, err := c.cond()
	if err != nil {
		return err
	}
	b, err := s.svc.SetProperties(c.Ctx, r, p, cond)
	if err != nil {
		return err
	}
	setETag(&c.FC.Response.Header, b.ETag(), b.Modified)
	if b.Type == blob.PageBlob {
		c.FC.Response.Header.Set("X-Ms-Blob-Sequence-Number", strconv.FormatInt(b.Seq, 10))
	}
	s.status(c, http.StatusOK)
	return nil
}

func (s *Server) setBlobMetadata(c *call) error {
	r, err := c.writeRef()
	if err != nil {
		return err
	}
	cond, err := c.cond()
	if err != nil {
		return err
	}
	b, err := s.svc.SetMetadata(c.Ctx, r, c.meta(), cond)
	if err != nil {
		return err
	}
	setETag(&c.FC.Response.Header, b.ETag(), b.Modified)
	c.FC.Response.Header.Set("X-Ms-Request-Server-Encrypted", "true")
	s.status(c, http.StatusOK)
	return nil
}

func (s *Server) setTier(c *call) error {
	r, err := c.writeRef()
	if err != nil {
		return err
	}
	t, err := c.tier()
	if err != nil {
		return err
	}
	if t == "" {
		return azerr.New(azerr.MissingRequiredHeader)
	}
	if err := s.svc.SetTier(c.Ctx, r, t, blob.Cond{LeaseID: c.Header.Get("X-Ms-Lease-Id")}); err != nil {
		return err
	}
	s.status(c, http.StatusOK)
	return nil
}

func (s *Server) snapshotBlob(c *call) error {
	r, err := c.writeRef()
	if err != nil {
		return err
	}
	cond, err := c.cond()
	if err != nil {
		return err
	}
	meta := c.meta()
	b, snap, err := s.svc.Snapshot(c.Ctx, r, meta, len(meta) > 0, cond)
	if err != nil {
		return err
	}
	h := &c.FC.Response.Header
	setETag(h, b.ETag(), b.Modified)
	h.Set("X-Ms-Snapshot", snapshotTime(snap))
	h.Set("X-Ms-Request-Server-Encrypted", "false")
	s.status(c, http.StatusCreated)
	return nil
}

func (s *Server) leaseBlob(c *call) error {
	r, err := c.writeRef()
	if err != nil {
		return err
	}
	lr, err := c.leaseRequest()
	if err != nil {
		return err
	}
	cond, err := c.cond()
	if err != nil {
		return err
	}
	b, res, err := s.svc.Lease(c.Ctx, r, lr, cond)
	if err != nil {
		return err
	}
	s.leaseReply(c, lr.Action, res, b.ETag(), b.Modified)
	return nil
}

func (s *Server) deleteBlob(c *call) error {
	r, err := c.ref()
	if err != nil {
		return err
	}
	cond, err := c.cond()
	if err != nil {
		return err
	}
	if err := s.svc.Delete(c.Ctx, r, c.Header.Get("X-Ms-Delete-Snapshots"), cond); err != nil {
		return err
	}
	c.FC.Response.Header.Set("X-Ms-Delete-Type-Permanent", "true")
	s.status(c, http.StatusAccepted)
	return nil
}

// copyBlob is Copy Blob and Copy Blob From URL (x-ms-requires-sync): both complete before
// answering. Only sources in this server's accounts are supported.
func (s *Server) copyBlob(c *call) error {
	dst, err := c.writeRef()
	if err != nil {
		return err
	}
	srcURL := c.Header.Get("X-Ms-Copy-Source")
	src, err := s.parseCopySource(c, srcURL)
	if err != nil {
		return err
	}
	req := blob.CopyRequest{Source: src, SourceURL: srcURL, Meta: c.meta(), CopyID: newCopyID()}
	req.SetMeta = len(req.Meta) > 0
	if req.Tags, err = c.tagsHeader(); err != nil {
		return err
	}
	if req.Tier, err = c.tier(); err != nil {
		return err
	}
	if req.Cond, err = c.cond(); err != nil {
		return err
	}
	if req.SourceCond, err = c.condPrefix("X-Ms-Source-"); err != nil {
		return err
	}
	b, err := s.svc.Copy(c.Ctx, dst, req)
	if err != nil {
		return err
	}
	h := &c.FC.Response.Header
	setETag(h, b.ETag(), b.Modified)
	h.Set("X-Ms-Copy-Id", req.CopyID)
	h.Set("X-Ms-Copy-Status", "success")
	s.status(c, http.StatusAccepted)
	return nil
}

// parseCopySource resolves a copy source URL to a blob of an account on this server (path
// style /{account}/{container}/{blob} or host style {account}.blob.…/{container}/{blob}).
func (s *Server) parseCopySource(c *call, raw string) (blob.Ref, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return blob.Ref{}, azerr.New(azerr.InvalidHeaderValue)
	}
	path := strings.TrimPrefix(u.EscapedPath(), "/")
	account := ""
	host := u.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 && !isIPOrLocal(host) {
		account = host[:i]
	} else {
		account, path, _ = strings.Cut(path, "/")
	}
	account = strings.TrimSuffix(account, "-secondary")
	cont, name, _ := strings.Cut(path, "/")
	name, err = url.PathUnescape(name)
	if err != nil || name == "" || account != c.Account {
		return blob.Ref{}, azerr.New(azerr.CannotVerifyCopySource)
	}
	snap, err := parseSnapshot(u.Query().Get("snapshot"))
	if err != nil {
		return blob.Ref{}, err
	}
	return blob.Ref{Account: account, Container: cont, Name: name, Snapshot: snap}, nil
}

func isIPOrLocal(h string) bool {
	if h == "localhost" {
		return true
	}
	for _, r := range h {
		if (r < '0' || r > '9') && r != '.' && r != ':' {
			return false
		}
	}
	return true
}

// abortCopy: every copy here completes synchronously, so there is never one to abort.
func (s *Server) abortCopy(c *call) error {
	if !strings.EqualFold(c.Header.Get("X-Ms-Copy-Action"), "abort") {
		return azerr.New(azerr.InvalidHeaderValue)
	}
	r, err := c.writeRef()
	if err != nil {
		return err
	}
	if _, err := s.svc.Get(c.Ctx, r, blob.Cond{}); err != nil {
		return err
	}
	return azerr.New(azerr.NoPendingCopyOperation)
}
