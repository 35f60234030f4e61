package serviceprops

import (
	"slices"
	"strings"
)

// Grant is the outcome of a CORS match: the rule that matched and how to answer.
type Grant struct {
	Rule *CorsRule
	// AllowOrigin is the Access-Control-Allow-Origin value: the request's origin, or "*" when
	// the rule admits every origin and does not list this one.
	AllowOrigin string
	// Credentials is true unless the answer is the "*" origin (browsers reject credentials
	// with a wildcard).
	Credentials bool
}

// Preflight finds the first rule that admits origin, the requested method and every header
// of requestHeaders (the comma-separated Access-Control-Request-Headers value).
func (p *Properties) Preflight(origin, method, requestHeaders string) (Grant, bool) {
	headers := splitList(requestHeaders)
	for i := range p.Cors {
		r := &p.Cors[i]
		g, ok := r.grant(origin)
		if !ok || !r.allowsMethod(method) {
			continue
		}
		if !allHeadersAllowed(headers, r.AllowedHeaders) {
			continue
		}
		return g, true
	}
	return Grant{}, false
}

// Actual finds the first rule that admits origin and method for an actual (non-preflight)
// request.
func (p *Properties) Actual(origin, method string) (Grant, bool) {
	for i := range p.Cors {
		r := &p.Cors[i]
		if g, ok := r.grant(origin); ok && r.allowsMethod(method) {
			return g, true
		}
	}
	return Grant{}, false
}

// grant matches origin against the rule: an exact (case-insensitive) entry wins over "*".
func (r *CorsRule) grant(origin string) (Grant, bool) {
	wildcard := false
	for _, o := range r.AllowedOrigins {
		if strings.EqualFold(o, origin) {
			return Grant{Rule: r, AllowOrigin: origin, Credentials: true}, true
		}
		wildcard = wildcard || o == "*"
	}
	if wildcard {
		return Grant{Rule: r, AllowOrigin: "*"}, true
	}
	return Grant{}, false
}

func (r *CorsRule) allowsMethod(method string) bool {
	return slices.Contains(r.AllowedMethods, method)
}

// allHeadersAllowed reports whether every requested header matches an allowed entry: "*",
// an exact name, or a "prefix*" (all case-insensitive).
func allHeadersAllowed(requested, allowed []string) bool {
	for _, h := range requested {
		ok := false
		for _, a := range allowed {
			if prefix, isPrefix := strings.CutSuffix(a, "*"); isPrefix {
				ok = len(h) >= len(prefix) && strings.EqualFold(h[:len(prefix)], prefix)
			} else {
				ok = strings.EqualFold(h, a)
			}
			if ok {
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
