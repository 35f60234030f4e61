package serviceprops

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// AppendXML appends the Get Table Service Properties body for p (table-api.md §9): no
// whitespace, elements in Azure's order, IncludeAPIs only for enabled metrics, Days only for
// an enabled retention policy, <Cors /> when there are no rules.
func (p *Properties) AppendXML(dst []byte) []byte {
	dst = append(dst, `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>`...)
	dst = append(dst, "<Logging>"...)
	dst = appendElem(dst, "Version", p.Logging.Version)
	dst = appendBool(dst, "Delete", p.Logging.Delete)
	dst = appendBool(dst, "Read", p.Logging.Read)
	dst = appendBool(dst, "Write", p.Logging.Write)
	dst = appendRetention(dst, p.Logging.Retention)
	dst = append(dst, "</Logging>"...)
	dst = appendMetrics(dst, "HourMetrics", &p.HourMetrics)
	dst = appendMetrics(dst, "MinuteMetrics", &p.MinuteMetrics)
	if len(p.Cors) == 0 {
		dst = append(dst, "<Cors />"...)
	} else {
		dst = append(dst, "<Cors>"...)
		for i := range p.Cors {
			c := &p.Cors[i]
			dst = append(dst, "<CorsRule>"...)
			dst = appendElem(dst, "AllowedOrigins", strings.Join(c.AllowedOrigins, ","))
			dst = appendElem(dst, "AllowedMethods", strings.Join(c.AllowedMethods, ","))
			dst = appendElem(dst, "MaxAgeInSeconds", strconv.Itoa(c.MaxAgeInSeconds))
			dst = appendElem(dst, "ExposedHeaders", strings.Join(c.ExposedHeaders, ","))
			dst = appendElem(dst, "AllowedHeaders", strings.Join(c.AllowedHeaders, ","))
			dst = append(dst, "</CorsRule>"...)
		}
		dst = append(dst, "</Cors>"...)
	}
	dst = p.Blob.appendXML(dst)
	return append(dst, "</StorageServiceProperties>"...)
}

func appendMetrics(dst []byte, name string, m *Metrics) []byte {
	dst = append(dst, '<')
	dst = append(dst, name...)
	dst = append(dst, '>')
	dst = appendElem(dst, "Version", m.Version)
	dst = appendBool(dst, "Enabled", m.Enabled)
	if m.Enabled {
		dst = appendBool(dst, "IncludeAPIs", m.IncludeAPIs)
	}
	dst = appendRetention(dst, m.Retention)
	dst = append(dst, "</"...)
	dst = append(dst, name...)
	return append(dst, '>')
}

func appendRetention(dst []byte, r RetentionPolicy) []byte {
	dst = append(dst, "<RetentionPolicy>"...)
	dst = appendBool(dst, "Enabled", r.Enabled)
	if r.Enabled {
		dst = appendElem(dst, "Days", strconv.Itoa(r.Days))
	}
	return append(dst, "</RetentionPolicy>"...)
}

func appendBool(dst []byte, name string, v bool) []byte {
	return appendElem(dst, name, strconv.FormatBool(v))
}

func appendElem(dst []byte, name, text string) []byte {
	dst = append(dst, '<')
	dst = append(dst, name...)
	dst = append(dst, '>')
	dst = appendEscaped(dst, text)
	dst = append(dst, "</"...)
	dst = append(dst, name...)
	return append(dst, '>')
}

// appendEscaped escapes XML text so that the decoder returns exactly s again: markup
// characters and the whitespace characters XML would normalise become references; a
// character XML cannot carry becomes U+FFFD (the parser never produces one).
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '<':
			dst = append(dst, "&lt;"...)
		case r == '>':
			dst = append(dst, "&gt;"...)
		case r == '&':
			dst = append(dst, "&amp;"...)
		case r == '"':
			dst = append(dst, "&#34;"...)
		case r == '\'':
			dst = append(dst, "&#39;"...)
		case r == '\t':
			dst = append(dst, "&#x9;"...)
		case r == '\n':
			dst = append(dst, "&#xA;"...)
		case r == '\r':
			dst = append(dst, "&#xD;"...)
		case r == utf8.RuneError && n == 1, !xmlChar(r):
			dst = utf8.AppendRune(dst, utf8.RuneError)
		default:
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}
