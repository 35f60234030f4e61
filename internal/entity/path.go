package entity

// KeyLiteral returns a key as it appears in an entity URL: in single quotes, with quotes
// doubled and every byte outside the URL path characters percent-encoded (space → %20,
// '"' → %22, '%' → %25, non-ASCII as UTF-8 bytes), so the result is safe in a Location header.
func KeyLiteral(s string) string {
	return string(appendKeyLiteral(make([]byte, 0, len(s)+8), s))
}

// EntityPath returns table(PartitionKey='…',RowKey='…'), the form used in Location,
// DataServiceId, odata.id and odata.editLink.
func EntityPath(table, pk, rk string) string {
	return string(AppendEntityPath(make([]byte, 0, len(table)+len(pk)+len(rk)+32), table, pk, rk))
}

// AppendEntityPath appends EntityPath(table, pk, rk) to dst.
func AppendEntityPath(dst []byte, table, pk, rk string) []byte {
	dst = append(dst, table...)
	dst = append(dst, "(PartitionKey="...)
	dst = appendKeyLiteral(dst, pk)
	dst = append(dst, ",RowKey="...)
	dst = appendKeyLiteral(dst, rk)
	return append(dst, ')')
}

func appendKeyLiteral(dst []byte, s string) []byte {
	const hexDigits = "0123456789ABCDEF"
	dst = append(dst, '\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			dst = append(dst, '\'', '\'')
		case pathSafe(c):
			dst = append(dst, c)
		default:
			dst = append(dst, '%', hexDigits[c>>4], hexDigits[c&0xF])
		}
	}
	return append(dst, '\'')
}

// pathSafe reports RFC 3986 pchar bytes (unreserved, sub-delims, ':' and '@') that may stay
// literal in a path segment.
func pathSafe(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '-', '.', '_', '~', '!', '$', '&', '(', ')', '*', '+', ',', ';', '=', ':', '@':
		return true
	}
	return false
}
