package blobwire

import (
	"bytes"
	"crypto/rand"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/blob"
)

// ParseBlockList parses a Put Block List body: <BlockList> with <Committed>, <Uncommitted>
// and <Latest> children in order. Any XML declaration is accepted (the SDKs differ).
func ParseBlockList(body []byte) ([]blob.BlockRef, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	d := xml.NewDecoder(bytes.NewReader(body))
	bad := azerr.New(azerr.InvalidXMLDocument)
	var out []blob.BlockRef
	depth := 0
	var cur *blob.BlockRef
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
			depth++
			switch depth {
			case 1:
				if t.Name.Local != "BlockList" || seenRoot {
					return nil, bad
				}
				seenRoot = true
			case 2:
				switch t.Name.Local {
				case "Committed", "Uncommitted", "Latest":
					cur = &blob.BlockRef{Where: t.Name.Local}
					text.Reset()
				default:
					return nil, bad
				}
			default:
				return nil, bad
			}
		case xml.CharData:
			if cur != nil {
				text.Write(t)
			} else if len(bytes.TrimSpace(t)) > 0 {
				return nil, bad
			}
		case xml.EndElement:
			if depth == 2 && cur != nil {
				cur.ID = strings.TrimSpace(text.String())
				if cur.ID == "" {
					return nil, azerr.New(azerr.InvalidBlockList)
				}
				out = append(out, *cur)
				cur = nil
			}
			depth--
		}
		if len(out) > blob.MaxCommittedBlocks {
			return nil, azerr.New(azerr.BlockCountExceedsLimit)
		}
	}
	if !seenRoot || depth != 0 {
		return nil, bad
	}
	return out, nil
}

// Range is a parsed bytes range. End is -1 for "a-".
type Range struct {
	Start, End int64
	// Suffix marks forms Azure ignores (bytes=-n, several ranges): the whole blob is sent.
	Suffix bool
}

// ParseRange parses x-ms-range / Range: "bytes=a-b" or "bytes=a-". ok is false when no
// range was sent.
func ParseRange(v string) (r Range, ok bool, err error) {
	if v == "" {
		return r, false, nil
	}
	spec, found := strings.CutPrefix(strings.TrimSpace(v), "bytes=")
	if !found {
		return r, false, azerr.New(azerr.InvalidRange)
	}
	if strings.Contains(spec, ",") || strings.HasPrefix(spec, "-") {
		return Range{Suffix: true}, true, nil
	}
	a, b, found := strings.Cut(spec, "-")
	if !found {
		return r, false, azerr.New(azerr.InvalidRange)
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 {
		return r, false, azerr.New(azerr.InvalidRange)
	}
	end := int64(-1)
	if b != "" {
		end, err = strconv.ParseInt(b, 10, 64)
		if err != nil || end < start {
			return r, false, azerr.New(azerr.InvalidRange)
		}
	}
	return Range{Start: start, End: end}, true, nil
}

func newCopyID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// appendEscaped appends s with XML's special characters escaped.
func appendEscaped(dst []byte, s string) []byte {
	var buf bytes.Buffer
	_ = xml.EscapeText(&buf, []byte(s))
	return append(dst, buf.Bytes()...)
}
