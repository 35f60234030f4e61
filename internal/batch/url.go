package batch

import (
	"strings"
)

// PathAndQuery splits the operation's URL into the resource path below the account and the
// raw query, both still percent-encoded exactly as sent (keys must be decoded by the resource
// parser, once, and clients escape differently: spec/table-api.md §2.1).
//
// accountPrefix is the path-style account segment the outer request used, e.g.
// "/devstoreaccount1", or "" for host-style endpoints. The result path starts with "/":
//
//	http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='a',RowKey='b')?$format=x
//	    with "/devstoreaccount1" → "/t(PartitionKey='a',RowKey='b')", "$format=x"
//	https://acct.table.core.windows.net/t                with ""  → "/t", ""
//	/devstoreaccount1/t, /t, t (hand-written relative targets)   → "/t"
//
// Scheme and authority of an absolute URL are ignored (only the outer request is
// authenticated and routed), but in path style its path must start with the same account
// segment: a sub-request may not address another account. Nothing after "?" is part of the
// path; a literal '#' is kept in the path so the resource parser rejects it like any other
// forbidden key character instead of silently cutting the key.
func (op *Operation) PathAndQuery(accountPrefix string) (rawPath, rawQuery string, err error) {
	target := op.URL
	absolute := false
	if scheme, authority, ok := strings.Cut(target, "://"); ok && isScheme(scheme) {
		absolute = true
		if j := strings.IndexAny(authority, "/?"); j < 0 {
			target = ""
		} else {
			target = authority[j:]
		}
	}
	rawPath, rawQuery, _ = strings.Cut(target, "?")
	if !strings.HasPrefix(rawPath, "/") {
		rawPath = "/" + rawPath
	}
	accountPrefix = strings.TrimSuffix(accountPrefix, "/")
	if accountPrefix == "" {
		return rawPath, rawQuery, nil
	}
	if !strings.HasPrefix(accountPrefix, "/") {
		accountPrefix = "/" + accountPrefix
	}
	switch {
	case rawPath == accountPrefix:
		return "/", rawQuery, nil
	case strings.HasPrefix(rawPath, accountPrefix+"/"):
		return rawPath[len(accountPrefix):], rawQuery, nil
	case absolute:
		return "", "", invalid("sub-request URL %q is not below account path %q", op.URL, accountPrefix)
	}
	return rawPath, rawQuery, nil // relative target, already below the account
}

// isScheme reports whether s is a URI scheme (RFC 3986 §3.1).
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}
