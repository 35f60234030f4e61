package blobwire

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/blob"
)

func decodeB64(v string, n int) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != n {
		return nil, azerr.New(azerr.InvalidHeaderValue)
	}
	return b, nil
}

func parseHTTPTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return time.Time{}, azerr.New(azerr.InvalidHeaderValue)
	}
	return t, nil
}

// cond reads the conditional headers and the lease id (prefix "" or "X-Ms-Source-").
func (c *call) cond() (blob.Cond, error) {
	return c.condPrefix("")
}

func (c *call) condPrefix(prefix string) (blob.Cond, error) {
	var k blob.Cond
	var err error
	k.IfMatch = c.Header.Get(prefix + "If-Match")
	k.IfNoneMatch = c.Header.Get(prefix + "If-None-Match")
	if k.IfModifiedSince, err = parseHTTPTime(c.Header.Get(prefix + "If-Modified-Since")); err != nil {
		return k, err
	}
	if k.IfUnmodifiedSince, err = parseHTTPTime(c.Header.Get(prefix + "If-Unmodified-Since")); err != nil {
		return k, err
	}
	if prefix == "" {
		k.LeaseID = c.Header.Get("X-Ms-Lease-Id")
		if k.IfTags, err = c.ifTags(); err != nil {
			return k, err
		}
	}
	return k, nil
}

// meta collects x-ms-meta-* headers (names as sent).
func (c *call) meta() blob.Meta {
	var m blob.Meta
	for k, v := range c.FC.Request.Header.All() {
		if len(k) > 10 && strings.EqualFold(string(k[:10]), "x-ms-meta-") {
			m = append(m, [2]string{string(k[10:]), string(v)})
		}
	}
	return m
}

// props reads the x-ms-blob-content-* headers; setMD5 reports x-ms-blob-content-md5.
func (c *call) props() (p blob.Props, setMD5 bool, err error) {
	p.ContentType = c.Header.Get("X-Ms-Blob-Content-Type")
	p.ContentEncoding = c.Header.Get("X-Ms-Blob-Content-Encoding")
	p.ContentLanguage = c.Header.Get("X-Ms-Blob-Content-Language")
	p.ContentDisposition = c.Header.Get("X-Ms-Blob-Content-Disposition")
	p.CacheControl = c.Header.Get("X-Ms-Blob-Cache-Control")
	if v := c.Header.Get("X-Ms-Blob-Content-Md5"); v != "" {
		if p.ContentMD5, err = decodeB64(v, 16); err != nil {
			return p, false, err
		}
		setMD5 = true
	}
	return p, setMD5, nil
}

var tiers = map[string]string{"hot": "Hot", "cool": "Cool", "cold": "Cold", "archive": "Archive"}

func (c *call) tier() (string, error) {
	v := c.Header.Get("X-Ms-Access-Tier")
	if v == "" {
		return "", nil
	}
	t, ok := tiers[strings.ToLower(v)]
	if !ok {
		return "", azerr.New(azerr.InvalidHeaderValue)
	}
	return t, nil
}

func httpTime(ticks int64) string {
	return time.Unix(0, ticks*100).UTC().Format(http.TimeFormat)
}

// snapshotTime formats a snapshot's ticks as Azure does (7 fractional digits).
func snapshotTime(ticks int64) string {
	return time.Unix(0, ticks*100).UTC().Format("2006-01-02T15:04:05.0000000Z")
}

func parseSnapshot(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0, azerr.New(azerr.InvalidQueryParameterValue)
	}
	return t.UnixNano() / 100, nil
}

// setETag writes ETag and Last-Modified.
func setETag(h *fasthttp.ResponseHeader, etag string, modified int64) {
	h.Set("Etag", etag)
	h.Set("Last-Modified", httpTime(modified))
}

// setMeta writes x-ms-meta-* headers with the names in the case they were set in (fasthttp
// would capitalise them; Python's SDK reads the prefix case-sensitively).
func setMeta(h *fasthttp.ResponseHeader, m blob.Meta) {
	for _, kv := range m {
		h.SetCanonical([]byte("x-ms-meta-"+kv[0]), []byte(kv[1]))
	}
}

// setBlobHeaders writes every property header of a blob (Get Blob, HEAD).
func setBlobHeaders(h *fasthttp.ResponseHeader, b *blob.Blob, now int64) {
	setETag(h, b.ETag(), b.Modified)
	h.Set("X-Ms-Creation-Time", httpTime(b.Created))
	h.Set("X-Ms-Blob-Type", b.Type)
	h.Set("Accept-Ranges", "bytes")
	h.Set("Content-Type", b.Props.ContentType)
	set := func(k, v string) {
		if v != "" {
			h.Set(k, v)
		}
	}
	set("Content-Encoding", b.Props.ContentEncoding)
	set("Content-Language", b.Props.ContentLanguage)
	set("Content-Disposition", b.Props.ContentDisposition)
	set("Cache-Control", b.Props.CacheControl)
	setMeta(h, b.Meta)
	h.Set("X-Ms-Lease-Status", b.Lease.Status(now))
	h.Set("X-Ms-Lease-State", b.Lease.State(now))
	set("X-Ms-Lease-Duration", b.Lease.DurationName(now))
	h.Set("X-Ms-Server-Encrypted", "true")
	switch b.Type {
	case blob.AppendBlob:
		h.Set("X-Ms-Blob-Committed-Block-Count", strconv.Itoa(b.Appends))
	case blob.PageBlob:
		h.Set("X-Ms-Blob-Sequence-Number", strconv.FormatInt(b.Seq, 10))
	case blob.BlockBlob:
		if b.Tier == "" {
			h.Set("X-Ms-Access-Tier", "Hot")
			h.Set("X-Ms-Access-Tier-Inferred", "true")
		}
	}
	set("X-Ms-Access-Tier", b.Tier)
	if b.Snapshot != 0 {
		h.Set("X-Ms-Snapshot", snapshotTime(b.Snapshot))
	}
	if len(b.Tags) > 0 {
		h.Set("X-Ms-Tag-Count", strconv.Itoa(len(b.Tags)))
	}
	if cp := b.Copy; cp != nil {
		h.Set("X-Ms-Copy-Id", cp.ID)
		h.Set("X-Ms-Copy-Source", cp.Source)
		h.Set("X-Ms-Copy-Status", "success")
		h.Set("X-Ms-Copy-Progress", strconv.FormatInt(cp.Size, 10)+"/"+strconv.FormatInt(cp.Size, 10))
		h.Set("X-Ms-Copy-Completion-Time", httpTime(cp.Completed))
	}
}
