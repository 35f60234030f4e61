package blobwire

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/blob"
)

func (c *call) maxResults() (int, error) {
	v := c.q.Get("maxresults")
	if v == "" {
		return blob.MaxListResults, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, azerr.New(azerr.OutOfRangeQueryParameterValue)
	}
	return min(n, blob.MaxListResults), nil
}

// serviceEndpoint is the ServiceEndpoint attribute of listings.
func (c *call) serviceEndpoint() string { return c.BaseURL() + "/" }

func elem(b []byte, name, v string) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = appendEscaped(b, v)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

// elemOpt writes an element, empty (<X />) when v is "".
func elemOpt(b []byte, name, v string) []byte {
	if v == "" {
		return append(b, "<"+name+" />"...)
	}
	return elem(b, name, v)
}

func appendMeta(b []byte, m blob.Meta) []byte {
	b = append(b, "<Metadata>"...)
	for _, kv := range m {
		b = elem(b, kv[0], kv[1])
	}
	return append(b, "</Metadata>"...)
}

func (s *Server) listContainers(c *call) error {
	max, err := c.maxResults()
	if err != nil {
		return err
	}
	withMeta := false
	for _, inc := range strings.Split(c.q.Get("include"), ",") {
		switch inc {
		case "metadata":
			withMeta = true
		case "", "deleted", "system":
		default:
			return azerr.New(azerr.InvalidQueryParameterValue)
		}
	}
	prefix, marker := c.q.Get("prefix"), c.q.Get("marker")
	cs, next, err := s.svc.ListContainers(c.Ctx, c.Account, prefix, marker, max)
	if err != nil {
		return err
	}
	now := s.svc.Now()
	b := []byte(`<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="`)
	b = appendEscaped(b, c.serviceEndpoint())
	b = append(b, `">`...)
	if c.q.Has("prefix") {
		b = elem(b, "Prefix", prefix)
	}
	if c.q.Has("marker") {
		b = elem(b, "Marker", marker)
	}
	if c.q.Has("maxresults") {
		b = elem(b, "MaxResults", strconv.Itoa(max))
	}
	b = append(b, "<Containers>"...)
	for _, ct := range cs {
		b = append(b, "<Container>"...)
		b = elem(b, "Name", ct.Name)
		b = append(b, "<Properties>"...)
		b = elem(b, "Last-Modified", httpTime(ct.Modified))
		b = elem(b, "Etag", ct.ETag())
		b = elem(b, "LeaseStatus", ct.Lease.Status(now))
		b = elem(b, "LeaseState", ct.Lease.State(now))
		if d := ct.Lease.DurationName(now); d != "" {
			b = elem(b, "LeaseDuration", d)
		}
		if ct.Public != "" {
			b = elem(b, "PublicAccess", ct.Public)
		}
		b = append(b, "<DefaultEncryptionScope>$account-encryption-key</DefaultEncryptionScope><DenyEncryptionScopeOverride>false</DenyEncryptionScopeOverride><HasImmutabilityPolicy>false</HasImmutabilityPolicy><HasLegalHold>false</HasLegalHold></Properties>"...)
		if withMeta {
			b = appendMeta(b, ct.Meta)
		}
		b = append(b, "</Container>"...)
	}
	b = append(b, "</Containers>"...)
	b = elemOpt(b, "NextMarker", next)
	b = append(b, "</EnumerationResults>"...)
	return s.sendXML(c, b)
}

func (s *Server) listBlobs(c *call) error {
	max, err := c.maxResults()
	if err != nil {
		return err
	}
	q := blob.ListRequest{Prefix: c.q.Get("prefix"), Delimiter: c.q.Get("delimiter"), Marker: c.q.Get("marker"), Max: max}
	var withMeta, withCopy, withTags bool
	for _, inc := range strings.Split(c.q.Get("include"), ",") {
		switch strings.TrimSpace(inc) {
		case "metadata":
			withMeta = true
		case "snapshots":
			q.Snapshots = true
		case "uncommittedblobs":
			q.Uncommitted = true
		case "copy":
			withCopy = true
		case "tags":
			withTags = true
		case "", "deleted", "versions", "immutabilitypolicy", "legalhold", "deletedwithversions", "permissions":
		default:
			return azerr.New(azerr.InvalidQueryParameterValue)
		}
	}
	items, next, err := s.svc.List(c.Ctx, c.Account, c.container, q)
	if err != nil {
		return err
	}
	now := s.svc.Now()
	b := []byte(`<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="`)
	b = appendEscaped(b, c.serviceEndpoint())
	b = append(b, `" ContainerName="`...)
	b = appendEscaped(b, c.container)
	b = append(b, `">`...)
	if c.q.Has("prefix") {
		b = elem(b, "Prefix", q.Prefix)
	}
	if c.q.Has("marker") {
		b = elem(b, "Marker", q.Marker)
	}
	if c.q.Has("maxresults") {
		b = elem(b, "MaxResults", strconv.Itoa(max))
	}
	if q.Delimiter != "" {
		b = elem(b, "Delimiter", q.Delimiter)
	}
	b = append(b, "<Blobs>"...)
	for _, it := range items {
		if it.Blob == nil {
			s.p.NoteEntity(&c.Call, it.Prefix)
			b = append(b, "<BlobPrefix>"...)
			b = elem(b, "Name", it.Prefix)
			b = append(b, "</BlobPrefix>"...)
			continue
		}
		bl := it.Blob
		s.p.NoteEntity(&c.Call, bl.Name)
		b = append(b, "<Blob>"...)
		b = elem(b, "Name", bl.Name)
		if bl.Snapshot != 0 {
			b = elem(b, "Snapshot", snapshotTime(bl.Snapshot))
		}
		b = append(b, "<Properties>"...)
		if bl.Created != 0 {
			b = elem(b, "Creation-Time", httpTime(bl.Created))
			b = elem(b, "Last-Modified", httpTime(bl.Modified))
			b = elem(b, "Etag", strings.Trim(bl.ETag(), `"`))
		}
		b = elem(b, "Content-Length", strconv.FormatInt(bl.Size, 10))
		b = elemOpt(b, "Content-Type", bl.Props.ContentType)
		b = elemOpt(b, "Content-Encoding", bl.Props.ContentEncoding)
		b = elemOpt(b, "Content-Language", bl.Props.ContentLanguage)
		b = append(b, "<Content-CRC64 />"...)
		md5 := ""
		if bl.Props.ContentMD5 != nil {
			md5 = base64.StdEncoding.EncodeToString(bl.Props.ContentMD5)
		}
		b = elemOpt(b, "Content-MD5", md5)
		b = elemOpt(b, "Cache-Control", bl.Props.CacheControl)
		b = elemOpt(b, "Content-Disposition", bl.Props.ContentDisposition)
		b = elem(b, "BlobType", bl.Type)
		if bl.Type == blob.BlockBlob {
			if bl.Tier == "" {
				b = append(b, "<AccessTier>Hot</AccessTier><AccessTierInferred>true</AccessTierInferred>"...)
			} else {
				b = elem(b, "AccessTier", bl.Tier)
			}
		}
		b = elem(b, "LeaseStatus", bl.Lease.Status(now))
		b = elem(b, "LeaseState", bl.Lease.State(now))
		if d := bl.Lease.DurationName(now); d != "" {
			b = elem(b, "LeaseDuration", d)
		}
		if withCopy && bl.Copy != nil {
			b = elem(b, "CopyId", bl.Copy.ID)
			b = elem(b, "CopyStatus", "success")
			b = elem(b, "CopySource", bl.Copy.Source)
			n := strconv.FormatInt(bl.Copy.Size, 10)
			b = elem(b, "CopyProgress", n+"/"+n)
			b = elem(b, "CopyCompletionTime", httpTime(bl.Copy.Completed))
		}
		b = append(b, "<ServerEncrypted>true</ServerEncrypted>"...)
		if withTags && len(bl.Tags) > 0 {
			b = elem(b, "TagCount", strconv.Itoa(len(bl.Tags)))
		}
		b = append(b, "</Properties>"...)
		if withMeta {
			b = appendMeta(b, bl.Meta)
		}
		if withTags && len(bl.Tags) > 0 {
			b = appendTagSet(b, bl.Tags)
		}
		b = append(b, "</Blob>"...)
	}
	b = append(b, "</Blobs>"...)
	b = elemOpt(b, "NextMarker", next)
	b = append(b, "</EnumerationResults>"...)
	return s.sendXML(c, b)
}
