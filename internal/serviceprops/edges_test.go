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

// TestXMLCharRanges: the characters XML 1.0 allows, at every edge of its ranges.
func TestXMLCharRanges(t *testing.T) {
	for r, want := range map[rune]bool{
		0x00: false, 0x08: false, 0x09: true, 0x0A: true, 0x0B: false, 0x0C: false, 0x0D: true, 0x0E: false,
		0x1F: false, 0x20: true, 0xD7FF: true, 0xD800: false, 0xDFFF: false, 0xE000: true,
		0xFFFD: true, 0xFFFE: false, 0xFFFF: false, 0x10000: true, 0x10FFFF: true, 0x110000: false,
	} {
		if got := xmlChar(r); got != want {
			t.Errorf("xmlChar(%#x) = %v, want %v", r, got, want)
		}
	}
}

// TestIntegerEdges: MaxAgeInSeconds takes every value up to 2^31-1 (ten digits), not one more.
func TestIntegerEdges(t *testing.T) {
	body := func(v string) []byte {
		return []byte("<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>" +
			v + "</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>\n")
	}
	if _, err := Parse(body("2147483647")); err != nil {
		t.Fatalf("2147483647 (and a newline after the root) refused: %v", err)
	}
	for _, v := range []string{"2147483648", "10000000000"} {
		if _, err := Parse(body(v)); err == nil {
			t.Fatalf("%s accepted", v)
		}
	}
}
