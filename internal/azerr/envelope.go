package azerr

import (
	"encoding/xml"
	"strings"
)

// Envelope is the form of an error body, chosen by the service (and, for the Table
// service, by the operation: its ACL and service endpoints answer in XML). The edge
// pipeline writes both; the JSON form is the entity codec's.
type Envelope uint8

// The envelopes.
const (
	// JSON is the Table service's odata.error body.
	JSON Envelope = iota
	// XML is the storage-common <Error><Code/><Message/>…</Error> body of Blob and Queue.
	XML
)

// AppendXML appends <?xml?><Error><Code>code</Code><Message>msg</Message>details</Error>.
func AppendXML(dst []byte, code, msg string, details ...Detail) []byte {
	dst = append(dst, `<?xml version="1.0" encoding="utf-8"?><Error><Code>`...)
	dst = appendXMLText(dst, code)
	dst = append(dst, "</Code><Message>"...)
	dst = appendXMLText(dst, msg)
	dst = append(dst, "</Message>"...)
	for _, d := range details {
		dst = append(dst, '<')
		dst = append(dst, d.Name...)
		dst = append(dst, '>')
		dst = appendXMLText(dst, d.Value)
		dst = append(dst, "</"...)
		dst = append(dst, d.Name...)
		dst = append(dst, '>')
	}
	return append(dst, "</Error>"...)
}

func appendXMLText(dst []byte, s string) []byte {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return append(dst, b.String()...)
}
