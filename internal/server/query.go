package server

import (
	"net/url"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
)

// queryParams are the query-string parameters Tablo reads, decoded with form semantics
// (Go's SDK percent-encodes the '$' of names and writes spaces as '+'). For each name the
// first occurrence counts.
type queryParams struct {
	format, filter, selectList, top string
	hasFilter, hasSelect, hasTop    bool
	nextPK, nextRK, nextTable       string
	hasNextPK, hasNextRK            bool
	comp, restype                   string
	// unsupported names an OData option the Table service does not implement ($orderby,
	// $skip, $expand, $count, $inlinecount), refused rather than silently ignored.
	unsupported string
	// hasSig reports a "sig" parameter: the request claims a SAS, whose many parameters
	// form() decodes in full.
	hasSig bool
	// raw is the query string as given to parseQuery.
	raw string
}

// queryName identifies a parameter parseQuery keeps.
type queryName uint8

const (
	qnOther queryName = iota
	qnFormat
	qnFilter
	qnSelect
	qnTop
	qnNextPK
	qnNextRK
	qnNextTable
	qnComp
	qnRestype
	qnSig
	qnUnsupported
)

// parseQuery decodes raw as parseForm would and keeps the parameters Tablo reads, without
// building parseForm's map: a name is compared after unescaping into a stack buffer, and a
// value is unescaped (allocating) only when it is kept and holds a '%' or '+'. Every pair,
// kept or not, must be well-escaped, as for parseForm.
func parseQuery(raw string) (queryParams, error) {
	q := queryParams{raw: raw}
	var seen uint16 // bit n: queryName n already taken (the first occurrence wins)
	for rest := raw; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if !validEscapes(k) || !validEscapes(v) {
			return queryParams{}, azerr.New(azerr.InvalidQueryParameterValue)
		}
		name := lookupQueryName(k)
		if name == qnOther || seen&(1<<name) != 0 {
			continue
		}
		if name == qnUnsupported {
			seen |= 1 << name
			q.unsupported, _ = url.QueryUnescape(k)
			continue
		}
		seen |= 1 << name
		// Cannot fail: v was checked above. QueryUnescape returns v itself when it holds
		// neither '%' nor '+'.
		v, _ = url.QueryUnescape(v)
		switch name {
		case qnFormat:
			q.format = v
		case qnFilter:
			q.filter, q.hasFilter = v, true
		case qnSelect:
			q.selectList, q.hasSelect = v, true
		case qnTop:
			q.top, q.hasTop = v, true
		case qnNextPK:
			q.nextPK, q.hasNextPK = v, true
		case qnNextRK:
			q.nextRK, q.hasNextRK = v, true
		case qnNextTable:
			q.nextTable = v
		case qnComp:
			q.comp = v
		case qnRestype:
			q.restype = v
		case qnSig:
			q.hasSig = true
		}
	}
	return q, nil
}

// form returns every parameter of the query, decoded (for SAS verification).
func (q *queryParams) form() (url.Values, error) { return parseForm(q.raw) }

// validEscapes reports whether every '%' in s starts a two-hex-digit escape, the only way
// url.QueryUnescape can fail.
func validEscapes(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0; {
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return false
		}
		j := strings.IndexByte(s[i+3:], '%')
		if j < 0 {
			return true
		}
		i += 3 + j
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unhex is the value of the hex digit c (checked by isHex): '|0x20' lowers 'A'-'F'.
func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return (c | 0x20) - 'a' + 10
}

// maxQueryName is the longest name lookupQueryName knows ("NextPartitionKey"); an escape
// takes three bytes of the raw name for one byte of the decoded one.
const maxQueryName = len("NextPartitionKey")

// lookupQueryName decodes the well-escaped name k (form semantics) and returns which kept
// parameter it names, qnOther for any other.
func lookupQueryName(k string) queryName {
	if len(k) > 3*maxQueryName {
		return qnOther // too long to decode to a known name
	}
	var buf [maxQueryName]byte
	n := 0
	for i := 0; i < len(k); i++ {
		if n == len(buf) {
			return qnOther
		}
		c := k[i]
		switch c {
		case '%':
			c = unhex(k[i+1])<<4 | unhex(k[i+2])
			i += 2
		case '+':
			c = ' '
		}
		buf[n] = c
		n++
	}
	switch string(buf[:n]) { // compared in place, not converted
	case "$format":
		return qnFormat
	case "$filter":
		return qnFilter
	case "$select":
		return qnSelect
	case "$top":
		return qnTop
	case "NextPartitionKey":
		return qnNextPK
	case "NextRowKey":
		return qnNextRK
	case "NextTableName":
		return qnNextTable
	case "comp":
		return qnComp
	case "restype":
		return qnRestype
	case "sig":
		return qnSig
	case "$orderby", "$skip", "$expand", "$count", "$inlinecount":
		return qnUnsupported
	}
	return qnOther
}

// parseForm decodes a query string like url.ParseQuery, except that ';' is an ordinary
// character: clients put $format=application/json;odata=… in URLs unencoded.
func parseForm(raw string) (url.Values, error) {
	v := url.Values{}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, val, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(val)
		if err1 != nil || err2 != nil {
			return nil, azerr.New(azerr.InvalidQueryParameterValue)
		}
		v[k] = append(v[k], val)
	}
	return v, nil
}
