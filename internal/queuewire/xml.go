package queuewire

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/queue"
)

// ParseMessageText reads a <QueueMessage><MessageText>…</MessageText></QueueMessage> body
// and returns the unescaped text. Elements are matched by name; unknown ones are skipped;
// a leading BOM and any XML declaration are allowed. Anything else is 400
// InvalidXmlDocument. present is false when the document has no MessageText element.
func ParseMessageText(body []byte) (text string, present bool, err error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if text, ok := parseCommonMessage(body); ok {
		return text, true, nil
	}
	return parseMessageXML(body)
}

// The body every SDK sends: an optional declaration, then exactly these elements.
var (
	commonDecls = [][]byte{
		[]byte(`<?xml version="1.0" encoding="utf-8"?>`),
		[]byte(`<?xml version="1.0" encoding="UTF-8"?>`),
		[]byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`),
	}
	commonOpen  = []byte(`<QueueMessage><MessageText>`)
	commonClose = []byte(`</MessageText></QueueMessage>`)
)

// parseCommonMessage reads the common shape of a put body without a general XML decoder
// (which cost a put ~5% of its server CPU): text of printable ASCII and the entities
// encoding/xml and the SDKs write. ok is false for anything else, which the full parser
// then reads (with the same result for anything this accepts: FuzzParseMessageText).
func parseCommonMessage(body []byte) (string, bool) {
	for _, d := range commonDecls {
		if bytes.HasPrefix(body, d) {
			body = bytes.TrimLeft(body[len(d):], " \t\r\n")
			break
		}
	}
	if !bytes.HasPrefix(body, commonOpen) {
		return "", false
	}
	body = body[len(commonOpen):]
	end := bytes.Index(body, commonClose)
	if end < 0 || len(bytes.TrimRight(body[end+len(commonClose):], " \t\r\n")) != 0 {
		return "", false
	}
	raw := body[:end]
	if bytes.IndexByte(raw, '&') < 0 {
		// No entity: the text is raw as it stands, if every byte may appear as is.
		for _, c := range raw {
			if c < 0x20 && c != '\t' && c != '\n' || c >= 0x7f || c == '<' || c == '>' {
				return "", false
			}
		}
		return string(raw), true
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '&':
			n, r := commonEntity(raw[i:])
			if n == 0 {
				return "", false
			}
			out = append(out, r)
			i += n - 1
		case c < 0x20 && c != '\t' && c != '\n', c >= 0x7f, c == '<', c == '>':
			return "", false // control, \r (normalised by XML), non-ASCII, markup: full parser
		default:
			out = append(out, c)
		}
	}
	return string(out), true
}

// commonEntity decodes the entity at the start of b: its length and byte (0, 0 when it is
// not one of these).
func commonEntity(b []byte) (int, byte) {
	for _, e := range [...]struct {
		s string
		r byte
	}{{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}, {"&#34;", '"'}, {"&#39;", '\''}, {"&#x9;", '\t'}, {"&#xA;", '\n'}, {"&#xD;", '\r'}} {
		if bytes.HasPrefix(b, []byte(e.s)) {
			return len(e.s), e.r
		}
	}
	return 0, 0
}

// parseMessageXML is ParseMessageText's general parser.
func parseMessageXML(body []byte) (text string, present bool, err error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = true
	depth := 0
	var sb strings.Builder
	inText, sawRoot := false, false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", false, badXML()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 1:
				if t.Name.Local != "QueueMessage" || sawRoot {
					return "", false, badXML()
				}
				sawRoot = true
			case depth == 2 && t.Name.Local == "MessageText":
				if present {
					return "", false, badXML()
				}
				present, inText = true, true
			case inText:
				return "", false, badXML() // markup inside the text
			}
		case xml.EndElement:
			if depth == 2 {
				inText = false
			}
			depth--
		case xml.CharData:
			if inText {
				sb.Write(t)
			} else if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return "", false, badXML()
			}
		}
	}
	if !sawRoot {
		return "", false, badXML()
	}
	return sb.String(), present, nil
}

func badXML() error { return azerr.New(azerr.InvalidXMLDocument) }

const xmlDecl = `<?xml version="1.0" encoding="utf-8"?>`

func appendEscaped(b []byte, s string) []byte { return azerr.AppendXMLText(b, s) }

func appendElem(b []byte, name, value string) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = appendEscaped(b, value)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

// appendTimeElem appends <name>t in RFC 1123 form</name> without a string copy.
func appendTimeElem(b []byte, name string, t time.Time) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = appendHTTPTime(b, t)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

// appendHTTPTime appends t in UTC as http.TimeFormat ("Mon, 02 Jan 2006 15:04:05 GMT")
// does, written out directly: a reply has up to three times per message, and the general
// formatter (which interprets the layout each call) was a visible part of a put's CPU.
func appendHTTPTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	yy, mm, dd := t.Date()
	if yy < 0 || yy > 9999 {
		return t.AppendFormat(b, http.TimeFormat)
	}
	h, mi, sec := t.Clock()
	b = append(b, t.Weekday().String()[:3]...)
	b = append(b, ',', ' ', byte('0'+dd/10), byte('0'+dd%10), ' ')
	b = append(b, mm.String()[:3]...)
	b = append(b, ' ', byte('0'+yy/1000), byte('0'+yy/100%10), byte('0'+yy/10%10), byte('0'+yy%10), ' ')
	b = append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+sec/10), byte('0'+sec%10))
	return append(b, " GMT"...)
}

func appendIntElem(b []byte, name string, n int) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

// appendMessages renders a QueueMessagesList in Azure's element order. Put answers
// without DequeueCount and MessageText; Peek without PopReceipt and TimeNextVisible.
func appendMessages(b []byte, msgs []queue.Message, put, peek bool) []byte {
	b = append(b, xmlDecl...)
	if len(msgs) == 0 {
		return append(b, "<QueueMessagesList />"...)
	}
	b = append(b, "<QueueMessagesList>"...)
	for _, m := range msgs {
		b = append(b, "<QueueMessage>"...)
		b = appendElem(b, "MessageId", m.ID)
		b = appendTimeElem(b, "InsertionTime", m.Inserted)
		b = appendTimeElem(b, "ExpirationTime", m.Expires)
		if !peek {
			b = appendElem(b, "PopReceipt", m.PopReceipt)
			b = appendTimeElem(b, "TimeNextVisible", m.NextVisible)
		}
		if !put {
			b = appendIntElem(b, "DequeueCount", m.DequeueCount)
			b = appendElem(b, "MessageText", m.Text)
		}
		b = append(b, "</QueueMessage>"...)
	}
	return append(b, "</QueueMessagesList>"...)
}
