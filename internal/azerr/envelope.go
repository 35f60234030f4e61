package azerr

// The XML error envelope of the Blob and Queue services (and of the Table service's ACL and
// service endpoints); package edge chooses it per service and writes the JSON one itself.

// AppendXML appends <?xml?><Error><Code>code</Code><Message>msg</Message>details</Error>.
func AppendXML(dst []byte, code, msg string, details ...Detail) []byte {
	dst = append(dst, `<?xml version="1.0" encoding="utf-8"?><Error><Code>`...)
	dst = AppendXMLText(dst, code)
	dst = append(dst, "</Code><Message>"...)
	dst = AppendXMLText(dst, msg)
	dst = append(dst, "</Message>"...)
	for _, d := range details {
		dst = append(dst, '<')
		dst = append(dst, d.Name...)
		dst = append(dst, '>')
		dst = AppendXMLText(dst, d.Value)
		dst = append(dst, "</"...)
		dst = append(dst, d.Name...)
		dst = append(dst, '>')
	}
	return append(dst, "</Error>"...)
}

// AppendXMLText appends s escaped as element text the way Azure writes it: only &, < and >
// (and a carriage return, which a parser would otherwise turn into a newline). Newlines and
// quotes stay as they are: the JS SDK's XML parser does not decode numeric character
// references such as &#xA; or &#34;.
func AppendXMLText(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			dst = append(dst, "&amp;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '\r':
			dst = append(dst, "&#xD;"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
