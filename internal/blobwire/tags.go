package blobwire

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/blob"
	"github.com/tablo/tablo/internal/tagquery"
)

// maxTagsBody bounds a Set Blob Tags body: ten tags of 128 + 256 characters fit many times.
const maxTagsBody = 64 << 10

// ParseTags parses a Set Blob Tags body, <Tags><TagSet><Tag><Key/><Value/></Tag>…</TagSet></Tags>,
// into key/value pairs in document order (limits are checked by blob.NewTags).
func ParseTags(body []byte) ([][2]string, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	bad := azerr.New(azerr.InvalidXMLDocument)
	d := xml.NewDecoder(bytes.NewReader(body))
	var path []string
	var out [][2]string
	var cur *[2]string
	var text strings.Builder
	seenRoot := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, bad
		}
		switch t := tok.(type) {
		case xml.StartElement:
			want := [...]string{"Tags", "TagSet", "Tag", ""}[min(len(path), 3)]
			switch {
			case len(path) == 0 && (t.Name.Local != "Tags" || seenRoot):
				return nil, bad
			case len(path) == 3 && (t.Name.Local == "Key" || t.Name.Local == "Value"):
				text.Reset()
			case len(path) < 3 && t.Name.Local == want:
			default:
				return nil, bad
			}
			if len(path) == 0 {
				seenRoot = true
			}
			if len(path) == 2 {
				out = append(out, [2]string{})
				cur = &out[len(out)-1]
			}
			path = append(path, t.Name.Local)
			if len(out) > 1000 {
				return nil, bad
			}
		case xml.CharData:
			if len(path) == 4 {
				text.Write(t)
			} else if len(bytes.TrimSpace(t)) > 0 {
				return nil, bad
			}
		case xml.EndElement:
			if len(path) == 4 {
				if path[3] == "Key" {
					cur[0] = text.String()
				} else {
					cur[1] = text.String()
				}
			}
			path = path[:len(path)-1]
		}
	}
	if !seenRoot || len(path) != 0 {
		return nil, bad
	}
	return out, nil
}

// ParseTagsHeader parses x-ms-tags: a query string, key=value pairs joined by &, each part
// percent-encoded ("+" is a space).
func ParseTagsHeader(v string) (blob.Tags, error) {
	if v == "" {
		return nil, nil
	}
	var kvs [][2]string
	for _, part := range strings.Split(v, "&") {
		k, val, _ := strings.Cut(part, "=")
		k, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(val)
		if err1 != nil || err2 != nil {
			return nil, azerr.New(azerr.InvalidTag)
		}
		kvs = append(kvs, [2]string{k, val})
	}
	return blob.NewTags(kvs)
}

// tagsHeader reads x-ms-tags.
func (c *call) tagsHeader() (blob.Tags, error) { return ParseTagsHeader(c.Header.Get("X-Ms-Tags")) }

// ifTags reads x-ms-if-tags (nil: absent); a bad expression is 400 InvalidHeaderValue.
func (c *call) ifTags() (*tagquery.Expr, error) {
	v := c.Header.Get("X-Ms-If-Tags")
	if v == "" {
		return nil, nil
	}
	e, err := tagquery.Parse(v, tagquery.Condition)
	if err != nil {
		return nil, azerr.Newf(azerr.InvalidHeaderValue, "The value for one of the HTTP headers is not in the correct format. (x-ms-if-tags: %v)", err)
	}
	return e, nil
}

// tagsCond is the conditions of Get/Set Blob Tags: the x-ms-blob-if-* headers the SDKs send
// there, or the plain ones, with x-ms-if-tags and the lease id.
func (c *call) tagsCond() (blob.Cond, error) {
	k, err := c.condPrefix("X-Ms-Blob-")
	if err != nil {
		return k, err
	}
	plain, err := c.cond()
	if err != nil {
		return k, err
	}
	if k.IfMatch == "" && k.IfNoneMatch == "" && k.IfModifiedSince.IsZero() && k.IfUnmodifiedSince.IsZero() {
		k = plain
	}
	k.LeaseID, k.IfTags = plain.LeaseID, plain.IfTags
	return k, nil
}

func appendTagSet(b []byte, t blob.Tags) []byte {
	b = append(b, "<Tags><TagSet>"...)
	for _, kv := range t {
		b = append(b, "<Tag>"...)
		b = elem(b, "Key", kv[0])
		b = elem(b, "Value", kv[1])
		b = append(b, "</Tag>"...)
	}
	return append(b, "</TagSet></Tags>"...)
}

func (s *Server) setBlobTags(c *call) error {
	r, err := c.ref()
	if err != nil {
		return err
	}
	raw, err := c.readCheckedBody(maxTagsBody)
	if err != nil {
		return err
	}
	kvs, err := ParseTags(raw)
	if err != nil {
		return err
	}
	tags, err := blob.NewTags(kvs)
	if err != nil {
		return err
	}
	cond, err := c.tagsCond()
	if err != nil {
		return err
	}
	if err := s.svc.SetTags(c.Ctx, r, tags, cond); err != nil {
		return err
	}
	s.status(c, http.StatusNoContent)
	return nil
}

func (s *Server) getBlobTags(c *call) error {
	r, err := c.ref()
	if err != nil {
		return err
	}
	cond, err := c.tagsCond()
	if err != nil {
		return err
	}
	b, err := s.svc.Get(c.Ctx, r, cond)
	if err != nil {
		return err
	}
	out := appendTagSet([]byte(`<?xml version="1.0" encoding="utf-8"?>`), b.Tags)
	return s.sendXML(c, out)
}

// findBlobs is Find Blobs by Tags, in the account (c.container "") or in one container.
func (s *Server) findBlobs(c *call) error {
	where := c.q.Get("where")
	e, err := tagquery.Parse(where, tagquery.Find)
	if err != nil {
		return azerr.Newf(azerr.InvalidQueryParameterValue, "Value for one of the query parameters specified in the request URI is invalid. (where: %v)", err)
	}
	max, err := c.maxResults()
	if err != nil {
		return err
	}
	found, next, err := s.svc.FindByTags(c.Ctx, c.Account, c.container, e, c.q.Get("marker"), max)
	if err != nil {
		return err
	}
	b := []byte(`<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="`)
	b = appendEscaped(b, c.serviceEndpoint())
	if c.container != "" {
		b = append(b, `" ContainerName="`...)
		b = appendEscaped(b, c.container)
	}
	b = append(b, `">`...)
	b = elem(b, "Where", where)
	if c.q.Has("maxresults") {
		b = elem(b, "MaxResults", strconv.Itoa(max))
	}
	b = append(b, "<Blobs>"...)
	for _, f := range found {
		s.p.NoteEntity(&c.Call, f.Name)
		b = append(b, "<Blob>"...)
		b = elem(b, "Name", f.Name)
		b = elem(b, "ContainerName", f.Container)
		b = appendTagSet(b, f.Tags)
		b = append(b, "</Blob>"...)
	}
	b = append(b, "</Blobs>"...)
	b = elemOpt(b, "NextMarker", next)
	b = append(b, "</EnumerationResults>"...)
	return s.sendXML(c, b)
}
