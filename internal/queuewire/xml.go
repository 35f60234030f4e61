package queuewire

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
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

func rfc1123(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

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
		b = appendElem(b, "InsertionTime", rfc1123(m.Inserted))
		b = appendElem(b, "ExpirationTime", rfc1123(m.Expires))
		if !peek {
			b = appendElem(b, "PopReceipt", m.PopReceipt)
			b = appendElem(b, "TimeNextVisible", rfc1123(m.NextVisible))
		}
		if !put {
			b = appendElem(b, "DequeueCount", itoa(m.DequeueCount))
			b = appendElem(b, "MessageText", m.Text)
		}
		b = append(b, "</QueueMessage>"...)
	}
	return append(b, "</QueueMessagesList>"...)
}

func itoa(n int) string {
	var buf [20]byte
	i := len(buf)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}
