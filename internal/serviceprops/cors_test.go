package serviceprops

import "testing"

func TestCorsMatching(t *testing.T) {
	p := Default()
	p.Cors = []CorsRule{
		{AllowedOrigins: []string{"http://a.com"}, AllowedMethods: []string{"GET"}, AllowedHeaders: []string{"x-ms-meta-*", "content-type"}, MaxAgeInSeconds: 10},
		{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"PUT", "GET"}, AllowedHeaders: []string{"*"}, MaxAgeInSeconds: 20},
		{AllowedOrigins: []string{"http://b.com", "*"}, AllowedMethods: []string{"DELETE"}, MaxAgeInSeconds: 30},
	}
	tests := []struct {
		name, origin, method, headers string
		preflight                     bool
		ok                            bool
		rule                          int
		allow                         string
		creds                         bool
	}{
		{"exact origin", "http://a.com", "GET", "x-ms-meta-foo, Content-Type", true, true, 0, "http://a.com", true},
		{"origin case-insensitive", "HTTP://A.COM", "GET", "", true, true, 0, "HTTP://A.COM", true},
		{"header not allowed falls through to *", "http://a.com", "GET", "x-other", true, true, 1, "*", false},
		{"method only in wildcard rule", "http://a.com", "PUT", "", true, true, 1, "*", false},
		{"exact beats * in the same rule", "http://b.com", "DELETE", "", true, true, 2, "http://b.com", true},
		{"no rule allows headers for DELETE", "http://c.com", "DELETE", "x-ms-version", true, false, 0, "", false},
		{"method must match exactly", "http://a.com", "get", "", true, false, 0, "", false},
		{"unknown method", "http://a.com", "PATCH", "", true, false, 0, "", false},
		{"actual ignores headers", "http://a.com", "GET", "", false, true, 0, "http://a.com", true},
		{"actual wildcard", "http://z.com", "PUT", "", false, true, 1, "*", false},
		{"actual no match", "http://z.com", "POST", "", false, false, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g Grant
			var ok bool
			if tt.preflight {
				g, ok = p.Preflight(tt.origin, tt.method, tt.headers)
			} else {
				g, ok = p.Actual(tt.origin, tt.method)
			}
			if ok != tt.ok {
				t.Fatalf("ok = %v", ok)
			}
			if !ok {
				return
			}
			if g.Rule != &p.Cors[tt.rule] || g.AllowOrigin != tt.allow || g.Credentials != tt.creds {
				t.Fatalf("grant %+v (rule %d)", g, g.Rule.MaxAgeInSeconds)
			}
		})
	}
	if d := Default(); func() bool { _, ok := d.Preflight("http://a.com", "GET", ""); return ok }() {
		t.Fatal("no rules must not match")
	}
}
