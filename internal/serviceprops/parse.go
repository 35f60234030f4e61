package serviceprops

import (
	"bytes"
	"math"
	"slices"
	"strings"
)

// Parse parses a Set Table Service Properties body (table-api.md §9.1) into an Update.
//
// Elements are matched by name in any order; unknown elements are skipped; a UTF-8 BOM is
// allowed. Omitted optional values take their "off" value (false, no retention, MaxAge 0,
// Version 1.0). Every error is InvalidXmlDocument, as Azure answers: malformed XML, a wrong
// root, a repeated element, more than 5 CORS rules, a CORS rule without origins or methods,
// an enabled retention policy without Days, a bad boolean or integer (a negative
// MaxAgeInSeconds), Days outside 1..365, an unknown method, too many origins or headers,
// CORS text over 2 KiB.
func Parse(body []byte) (*Update, error) { return parse(body, false) }

// ParseBlob is Parse for the Blob service, whose document adds DefaultServiceVersion,
// DeleteRetentionPolicy and StaticWebsite (blob.go); Parse skips them as unknown.
func ParseBlob(body []byte) (*Update, error) { return parse(body, true) }

func parse(body []byte, blob bool) (*Update, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, invalidDoc("empty body")
	}
	r := newReader(body)
	root, err := r.root()
	if err != nil {
		return nil, err
	}
	if root != "StorageServiceProperties" {
		return nil, invalidDoc("root element is %s, not StorageServiceProperties", root)
	}
	u := &Update{}
	seen := once{}
	err = r.children(func(name string) error {
		switch name {
		case "Logging", "HourMetrics", "MinuteMetrics", "Cors":
			if err := seen.see(root, name); err != nil {
				return err
			}
		}
		switch name {
		case "Logging":
			l, err := parseLogging(r)
			u.Logging = &l
			return err
		case "HourMetrics":
			m, err := parseMetrics(r, name)
			u.HourMetrics = &m
			return err
		case "MinuteMetrics":
			m, err := parseMetrics(r, name)
			u.MinuteMetrics = &m
			return err
		case "Cors":
			u.HasCors = true
			var err error
			u.Cors, err = parseCors(r)
			return err
		}
		if blob {
			if handled, err := parseBlobElement(r, name, &u.Blob, seen); handled {
				return err
			}
		}
		return r.skip()
	})
	if err != nil {
		return nil, err
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return u, nil
}

func parseVersion(r *reader, parent string) (string, error) {
	v, err := r.text()
	if err != nil {
		return "", err
	}
	switch v {
	case "":
		return defaultVersion, nil
	case "1.0", "2.0":
		return v, nil
	}
	return "", invalidValue("%s Version %q is not supported", parent, v)
}

func parseLogging(r *reader) (Logging, error) {
	l := Logging{Version: defaultVersion}
	seen := once{}
	err := r.children(func(name string) error {
		var err error
		switch name {
		case "Version", "Delete", "Read", "Write", "RetentionPolicy":
			if err := seen.see("Logging", name); err != nil {
				return err
			}
		}
		switch name {
		case "Version":
			l.Version, err = parseVersion(r, "Logging")
		case "Delete":
			l.Delete, err = r.boolText(name)
		case "Read":
			l.Read, err = r.boolText(name)
		case "Write":
			l.Write, err = r.boolText(name)
		case "RetentionPolicy":
			l.Retention, err = parseRetention(r)
		default:
			err = r.skip()
		}
		return err
	})
	return l, err
}

func parseMetrics(r *reader, parent string) (Metrics, error) {
	m := Metrics{Version: defaultVersion}
	seen := once{}
	err := r.children(func(name string) error {
		var err error
		switch name {
		case "Version", "Enabled", "IncludeAPIs", "RetentionPolicy":
			if err := seen.see(parent, name); err != nil {
				return err
			}
		}
		switch name {
		case "Version":
			m.Version, err = parseVersion(r, parent)
		case "Enabled":
			m.Enabled, err = r.boolText(name)
		case "IncludeAPIs":
			m.IncludeAPIs, err = r.boolText(name)
		case "RetentionPolicy":
			m.Retention, err = parseRetention(r)
		default:
			err = r.skip()
		}
		return err
	})
	if !m.Enabled {
		m.IncludeAPIs = false // only meaningful (and only rendered) when enabled
	}
	return m, err
}

func parseRetention(r *reader) (RetentionPolicy, error) {
	var p RetentionPolicy
	hasDays := false
	seen := once{}
	err := r.children(func(name string) error {
		var err error
		switch name {
		case "Enabled":
			if err = seen.see("RetentionPolicy", name); err == nil {
				p.Enabled, err = r.boolText(name)
			}
		case "Days":
			if err = seen.see("RetentionPolicy", name); err == nil {
				hasDays = true
				p.Days, err = r.intText(name, math.MaxInt32)
				if err == nil && (p.Days < 1 || p.Days > MaxRetentionDays) {
					err = invalidValue("RetentionPolicy Days %d is outside 1..%d", p.Days, MaxRetentionDays)
				}
			}
		default:
			err = r.skip()
		}
		return err
	})
	if err != nil {
		return RetentionPolicy{}, err
	}
	if p.Enabled && !hasDays {
		return RetentionPolicy{}, invalidDoc("RetentionPolicy is enabled without Days")
	}
	if !p.Enabled {
		p.Days = 0 // ignored when disabled
	}
	return p, nil
}

func parseCors(r *reader) ([]CorsRule, error) {
	var rules []CorsRule
	err := r.children(func(name string) error {
		if name != "CorsRule" {
			return r.skip()
		}
		if len(rules) == MaxCorsRules {
			return invalidDoc("more than %d CORS rules", MaxCorsRules)
		}
		rule, err := parseCorsRule(r)
		if err != nil {
			return err
		}
		rules = append(rules, rule)
		return nil
	})
	if err != nil {
		return nil, err
	}
	total := 0
	for i := range rules {
		total += rules[i].textLen()
	}
	if total > maxCorsChars {
		return nil, invalidValue("CORS rules hold %d characters, more than %d", total, maxCorsChars)
	}
	return rules, nil
}

func parseCorsRule(r *reader) (CorsRule, error) {
	var c CorsRule
	seen := once{}
	err := r.children(func(name string) error {
		switch name {
		case "AllowedOrigins", "AllowedMethods", "AllowedHeaders", "ExposedHeaders", "MaxAgeInSeconds":
			if err := seen.see("CorsRule", name); err != nil {
				return err
			}
		default:
			return r.skip()
		}
		if name == "MaxAgeInSeconds" {
			var err error
			c.MaxAgeInSeconds, err = r.intText(name, math.MaxInt32)
			return err
		}
		s, err := r.text()
		if err != nil {
			return err
		}
		items := splitList(s)
		switch name {
		case "AllowedOrigins":
			c.AllowedOrigins = items
		case "AllowedMethods":
			c.AllowedMethods = items
		case "AllowedHeaders":
			c.AllowedHeaders = items
		case "ExposedHeaders":
			c.ExposedHeaders = items
		}
		return nil
	})
	if err != nil {
		return CorsRule{}, err
	}
	return c, c.validate(seen)
}

func (c *CorsRule) validate(seen once) error {
	if !seen["AllowedOrigins"] || !seen["AllowedMethods"] {
		return invalidDoc("a CorsRule needs AllowedOrigins and AllowedMethods")
	}
	if len(c.AllowedOrigins) == 0 || len(c.AllowedOrigins) > maxOrigins {
		return invalidValue("a CorsRule needs 1..%d allowed origins", maxOrigins)
	}
	if len(c.AllowedMethods) == 0 {
		return invalidValue("a CorsRule needs at least one allowed method")
	}
	for i, m := range c.AllowedMethods {
		up := strings.ToUpper(m)
		if !slices.Contains(allowedMethods[:], up) {
			return invalidValue("CORS method %q is not allowed", m)
		}
		c.AllowedMethods[i] = up
	}
	for _, list := range [][]string{c.AllowedHeaders, c.ExposedHeaders} {
		defined, prefixed := 0, 0
		for _, h := range list {
			if strings.HasSuffix(h, "*") {
				prefixed++
			} else {
				defined++
			}
		}
		if defined > maxDefinedHeaders || prefixed > maxPrefixedHeaders {
			return invalidValue("a CORS header list may hold %d headers and %d prefixes", maxDefinedHeaders, maxPrefixedHeaders)
		}
	}
	return nil
}

// textLen is the rule's size as Azure counts it for the 2 KiB limit (values, not tags).
func (c *CorsRule) textLen() int {
	n := 0
	for _, list := range [][]string{c.AllowedOrigins, c.AllowedMethods, c.AllowedHeaders, c.ExposedHeaders} {
		for i, s := range list {
			if i > 0 {
				n++
			}
			n += len(s)
		}
	}
	return n
}

// splitList splits a comma-separated value into trimmed, non-empty items (nil for none).
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
