package serviceprops

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseAcceptsLimits: every limit exactly at its edge is accepted (TestParseErrors has
// one past each).
func TestParseAcceptsLimits(t *testing.T) {
	rule := func(origins, headers string) string {
		return "<CorsRule><AllowedOrigins>" + origins + "</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders>" +
			headers + "</AllowedHeaders><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule>"
	}
	cors := func(rules ...string) string {
		return "<StorageServiceProperties><Cors>" + strings.Join(rules, "") + "</Cors></StorageServiceProperties>"
	}
	items := func(prefix string, n int, suffix string) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("%s%02d%s", prefix, i, suffix)
		}
		return strings.Join(s, ",")
	}
	retention := func(days int) string {
		return fmt.Sprintf("<StorageServiceProperties><Logging><RetentionPolicy><Enabled>true</Enabled><Days>%d</Days></RetentionPolicy></Logging></StorageServiceProperties>", days)
	}
	// 2,048 characters of values: the origin, the method "GET" and nothing else.
	origin2045 := "http://" + strings.Repeat("a", 2045-len("http://"))
	for _, tt := range []struct{ name, body string }{
		{"days 1", retention(1)},
		{"days 365", retention(365)},
		{"five rules", cors(rule("*", ""), rule("*", ""), rule("*", ""), rule("*", ""), rule("*", ""))},
		{"64 origins", cors(rule(items("http://o", 64, ""), ""))},
		{"64 headers", cors(rule("*", items("h", 64, "")))},
		{"two prefixed headers", cors(rule("*", items("x-", 2, "*")))},
		{"64 headers and two prefixes", cors(rule("*", items("h", 64, "")+","+items("x-", 2, "*")))},
		{"cors of exactly 2 KiB", cors(rule(origin2045, ""))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse([]byte(tt.body)); err != nil {
				t.Fatalf("refused at the limit: %v", err)
			}
		})
	}
	if _, err := Parse([]byte(cors(rule("http://"+strings.Repeat("a", 2046-len("http://")), "")))); err == nil {
		t.Fatal("2,049 characters of CORS values accepted")
	}
}

// TestCorsPrefixMatchesItself: a "prefix*" entry allows a header that is exactly the prefix.
func TestCorsPrefixMatchesItself(t *testing.T) {
	if !allHeadersAllowed([]string{"x-ms-meta-"}, []string{"x-ms-meta-*"}) {
		t.Fatal("x-ms-meta- not allowed by x-ms-meta-*")
	}
	if allHeadersAllowed([]string{"x-ms-meta"}, []string{"x-ms-meta-*"}) {
		t.Fatal("x-ms-meta allowed by x-ms-meta-*")
	}
}

// TestParseRefusesPastLimits: one past the limits that TestParseErrors does not cover; the
// commas between list items count towards the 2 KiB.
func TestParseRefusesPastLimits(t *testing.T) {
	rule := func(origins, headers string) string {
		return "<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>" + origins + "</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders>" +
			headers + "</AllowedHeaders><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>"
	}
	headers := make([]string, 65)
	for i := range headers {
		headers[i] = fmt.Sprintf("h%02d", i)
	}
	if _, err := Parse([]byte(rule("*", strings.Join(headers, ",")))); err == nil {
		t.Fatal("65 headers accepted")
	}
	// Two origins, their comma and "GET": 2,048 characters, then 2,049.
	two := func(total int) string {
		first := "http://a"
		return first + ",http://" + strings.Repeat("b", total-len("GET")-len(first)-1-len("http://"))
	}
	if _, err := Parse([]byte(rule(two(2048), ""))); err != nil {
		t.Fatalf("2,048 characters with a comma refused: %v", err)
	}
	if _, err := Parse([]byte(rule(two(2049), ""))); err == nil {
		t.Fatal("2,049 characters with a comma accepted")
	}
}
