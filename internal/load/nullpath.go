package load

import (
	"errors"
	"strings"
)

// resourceKind says what a Table service request path names.
type resourceKind int

const (
	resTables     resourceKind = iota + 1 // /Tables
	resTable                              // /Tables('name')
	resBatch                              // /$batch
	resCollection                         // /name or /name()
	resEntity                             // /name(PartitionKey='pk',RowKey='rk')
)

// resource is a parsed request path. Table is empty for resTables and resBatch.
type resource struct {
	kind   resourceKind
	table  string
	pk, rk string
}

// maxPathLen bounds path parsing; Azure keys are at most 1 KiB each.
const maxPathLen = 8192

var errBadPath = errors.New("unrecognised resource path")

// parseResource parses a decoded URL path in either path style (/account/resource) or host style
// (/resource). Only the null server uses it, so it accepts what the SDK sends and rejects the rest.
func parseResource(path string) (resource, error) {
	if len(path) > maxPathLen {
		return resource{}, errBadPath
	}
	p := strings.TrimPrefix(path, "/")
	// Quoted keys may contain '/', so only a '/' before the first '(' separates the account.
	head := p
	if i := strings.IndexByte(p, '('); i >= 0 {
		head = p[:i]
	}
	if i := strings.IndexByte(head, '/'); i >= 0 {
		p = p[i+1:]
		head = head[i+1:]
	}
	if head == "" || strings.ContainsRune(head, '/') {
		return resource{}, errBadPath
	}
	args := p[len(head):]
	switch {
	case head == "$batch" && args == "":
		return resource{kind: resBatch}, nil
	case head == "Tables" && args == "":
		return resource{kind: resTables}, nil
	case head == "Tables":
		name, ok := parseSingleQuoted(args)
		if !ok {
			return resource{}, errBadPath
		}
		return resource{kind: resTable, table: name}, nil
	case args == "" || args == "()":
		return resource{kind: resCollection, table: head}, nil
	}
	pk, rk, ok := parseKeyPredicate(args)
	if !ok {
		return resource{}, errBadPath
	}
	return resource{kind: resEntity, table: head, pk: pk, rk: rk}, nil
}

// parseSingleQuoted parses "('value')" with ” standing for a quote.
func parseSingleQuoted(s string) (string, bool) {
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return "", false
	}
	v, rest, ok := cutQuoted(s[1 : len(s)-1])
	return v, ok && rest == ""
}

// parseKeyPredicate parses "(PartitionKey='pk',RowKey='rk')".
func parseKeyPredicate(s string) (pk, rk string, ok bool) {
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return "", "", false
	}
	s = s[1 : len(s)-1]
	rest, found := strings.CutPrefix(s, "PartitionKey=")
	if !found {
		return "", "", false
	}
	pk, rest, ok = cutQuoted(rest)
	if !ok {
		return "", "", false
	}
	rest, found = strings.CutPrefix(rest, ",RowKey=")
	if !found {
		return "", "", false
	}
	rk, rest, ok = cutQuoted(rest)
	if !ok || rest != "" {
		return "", "", false
	}
	return pk, rk, true
}

// cutQuoted reads one OData string literal ('...' with ” escaping a quote) from the start of s
// and returns its value and what follows it.
func cutQuoted(s string) (val, rest string, ok bool) {
	if !strings.HasPrefix(s, "'") {
		return "", "", false
	}
	// Without a doubled quote the value is a substring: no copy.
	if i := strings.IndexByte(s[1:], '\''); i >= 0 && !strings.HasPrefix(s[i+2:], "'") {
		return s[1 : i+1], s[i+2:], true
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i+1:], true
	}
	return "", "", false
}

// quoteLiteral renders an OData string literal; cutQuoted(quoteLiteral(v)) returns v.
func quoteLiteral(v string) string {
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}
