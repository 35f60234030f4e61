package auth

import (
	"net/url"
	"strings"
)

// canonRes is a canonical resource, "/" + account + path[0] + path[1] + path[2]
// [+ "?comp=" + comp], kept in parts so that it is appended without building a string.
type canonRes struct {
	account string
	path    [3]string
	comp    string
	hasComp bool
}

func (r *canonRes) appendTo(dst []byte) []byte {
	dst = append(dst, '/')
	dst = append(dst, r.account...)
	for _, p := range r.path {
		dst = append(dst, p...)
	}
	if r.hasComp {
		dst = append(dst, "?comp="...)
		dst = append(dst, r.comp...)
	}
	return dst
}

// newCanonRes is "/" + account + rawPath [+ "?comp=" + value]. Only comp is appended; its
// name matches case-insensitively and its value is percent-decoded.
func newCanonRes(account, rawPath, rawQuery string) canonRes {
	if rawPath == "" {
		rawPath = "/"
	}
	r := canonRes{account: account, path: [3]string{rawPath}}
	r.comp, r.hasComp = compParam(rawQuery)
	return r
}

// canonicalResource returns the canonical resource as a string.
func canonicalResource(account, rawPath, rawQuery string) string {
	r := newCanonRes(account, rawPath, rawQuery)
	return string(r.appendTo(nil))
}

func primaryResource(req RequestInfo) canonRes {
	return newCanonRes(req.Account, req.RawPath, req.RawQuery)
}

// candidateResources lists the canonical resources to try (the first n of the array): the
// path as sent and, for a path-style secondary URL, the path with "-secondary" dropped from
// the account segment (Azurite accepts both).
func candidateResources(req RequestInfo) (out [2]canonRes, n int) {
	out[0] = primaryResource(req)
	n = 1
	if req.Secondary && req.PathStyle {
		rest, ok := strings.CutPrefix(req.RawPath, "/")
		if ok {
			rest, ok = strings.CutPrefix(rest, req.Account)
		}
		if ok {
			rest, ok = strings.CutPrefix(rest, "-secondary")
		}
		if ok && (rest == "" || rest[0] == '/') {
			out[1] = out[0]
			out[1].path = [3]string{"/", req.Account, rest}
			n = 2
		}
	}
	return out, n
}

func compParam(rawQuery string) (string, bool) {
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		name, value, _ := strings.Cut(pair, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if !strings.EqualFold(name, "comp") {
			continue
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		return value, true
	}
	return "", false
}
