package serviceprops

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// Bodies as the SDKs send them (wire-samples 07).
const (
	goBody = `<?xml version="1.0" encoding="UTF-8"?>
<StorageServiceProperties><HourMetrics><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy><Version>1.0</Version></HourMetrics><Logging><Delete>false</Delete><Read>true</Read><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy><Version>1.0</Version><Write>true</Write></Logging><MinuteMetrics><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy><Version>1.0</Version></MinuteMetrics><Cors><CorsRule><AllowedHeaders>x-ms-meta-*</AllowedHeaders><AllowedMethods>GET,PUT</AllowedMethods><AllowedOrigins>https://example.com</AllowedOrigins><ExposedHeaders>x-ms-request-id</ExposedHeaders><MaxAgeInSeconds>60</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`
	pythonBody = `<?xml version='1.0' encoding='utf-8'?>
<StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete><Read>true</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></HourMetrics><MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics><Cors><CorsRule><AllowedOrigins>https://example.com</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods><AllowedHeaders>x-ms-meta-*</AllowedHeaders><ExposedHeaders>x-ms-request-id</ExposedHeaders><MaxAgeInSeconds>60</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`
	azCorsClear = `<?xml version='1.0' encoding='utf-8'?>
<StorageServiceProperties><Cors /></StorageServiceProperties>`
	azLogging = `<?xml version='1.0' encoding='utf-8'?>
<StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete><Read>true</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging></StorageServiceProperties>`
	// specBody is table-api.md §9.1's example, indented.
	specBody = `<?xml version="1.0" encoding="utf-8"?>
<StorageServiceProperties>
  <Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write>
    <RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging>
  <HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs>
    <RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></HourMetrics>
  <MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled>
    <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>
  <Cors><CorsRule><AllowedOrigins>http://a.com,http://b.com</AllowedOrigins>
    <AllowedMethods>GET,PUT</AllowedMethods><MaxAgeInSeconds>500</MaxAgeInSeconds>
    <ExposedHeaders>x-ms-meta-*</ExposedHeaders><AllowedHeaders>x-ms-meta-abc,x-ms-meta-data*</AllowedHeaders>
  </CorsRule></Cors>
</StorageServiceProperties>`
)

var sdkProps = Properties{
	Logging:       Logging{Version: "1.0", Read: true, Write: true, Retention: RetentionPolicy{Enabled: true, Days: 7}},
	HourMetrics:   Metrics{Version: "1.0", Enabled: true, IncludeAPIs: true, Retention: RetentionPolicy{Enabled: true, Days: 7}},
	MinuteMetrics: Metrics{Version: "1.0"},
	Cors: []CorsRule{{
		AllowedOrigins: []string{"https://example.com"}, AllowedMethods: []string{"GET", "PUT"},
		AllowedHeaders: []string{"x-ms-meta-*"}, ExposedHeaders: []string{"x-ms-request-id"}, MaxAgeInSeconds: 60,
	}},
}

func TestParseApply(t *testing.T) {
	tests := []struct {
		name string
		base Properties
		body string
		want Properties
	}{
		{"go", Default(), goBody, sdkProps},
		{"python", Default(), pythonBody, sdkProps},
		{"spec", Default(), specBody, Properties{
			Logging:       Logging{Version: "1.0", Delete: true, Write: true, Retention: RetentionPolicy{Enabled: true, Days: 7}},
			HourMetrics:   Metrics{Version: "1.0", Enabled: true, Retention: RetentionPolicy{Enabled: true, Days: 7}},
			MinuteMetrics: Metrics{Version: "1.0"},
			Cors: []CorsRule{{
				AllowedOrigins: []string{"http://a.com", "http://b.com"}, AllowedMethods: []string{"GET", "PUT"},
				MaxAgeInSeconds: 500, ExposedHeaders: []string{"x-ms-meta-*"},
				AllowedHeaders: []string{"x-ms-meta-abc", "x-ms-meta-data*"},
			}},
		}},
		{"cors clear keeps the rest", sdkProps, azCorsClear, func() Properties { p := sdkProps; p.Cors = nil; return p }()},
		{"logging only keeps cors", func() Properties { p := Default(); p.Cors = sdkProps.Cors; return p }(), azLogging,
			func() Properties { p := Default(); p.Cors = sdkProps.Cors; p.Logging = sdkProps.Logging; return p }()},
		{"empty root changes nothing", sdkProps, `<StorageServiceProperties/>`, sdkProps},
		{"bom, unknown elements, lower-case method, spaces", Default(),
			"\xef\xbb\xbf<StorageServiceProperties><DefaultServiceVersion>2019-02-02</DefaultServiceVersion><Cors><CorsRule><X/><AllowedOrigins> * </AllowedOrigins><AllowedMethods>get , post,</AllowedMethods><MaxAgeInSeconds>0</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>",
			func() Properties {
				p := Default()
				p.Cors = []CorsRule{{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET", "POST"}}}
				return p
			}()},
		{"disabled retention drops days, disabled metrics drop IncludeAPIs", Default(),
			`<StorageServiceProperties><HourMetrics><Enabled>0</Enabled><IncludeAPIs>true</IncludeAPIs><RetentionPolicy><Enabled>false</Enabled><Days>9</Days></RetentionPolicy></HourMetrics></StorageServiceProperties>`,
			Default()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := Parse([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.base.Apply(u); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	rule := func(inner string) string {
		return "<StorageServiceProperties><Cors><CorsRule>" + inner + "</CorsRule></Cors></StorageServiceProperties>"
	}
	okRule := "<AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>1</MaxAgeInSeconds>"
	retention := func(inner string) string {
		return "<StorageServiceProperties><Logging><RetentionPolicy>" + inner + "</RetentionPolicy></Logging></StorageServiceProperties>"
	}
	tests := []struct {
		name, body string
		code       azerr.Code
	}{
		{"empty", "", azerr.InvalidXMLDocument},
		{"not xml", "hello", azerr.InvalidXMLDocument},
		{"truncated", "<StorageServiceProperties><Logging>", azerr.InvalidXMLDocument},
		{"wrong root", "<SignedIdentifiers/>", azerr.InvalidXMLDocument},
		{"two roots", "<StorageServiceProperties/><StorageServiceProperties/>", azerr.InvalidXMLDocument},
		{"duplicate logging", "<StorageServiceProperties><Logging/><Logging/></StorageServiceProperties>", azerr.InvalidXMLDocument},
		{"six rules", "<StorageServiceProperties><Cors>" + strings.Repeat("<CorsRule>"+okRule+"</CorsRule>", 6) + "</Cors></StorageServiceProperties>", azerr.InvalidXMLDocument},
		{"rule without origins", rule("<AllowedMethods>GET</AllowedMethods>"), azerr.InvalidXMLDocument},
		{"rule without methods", rule("<AllowedOrigins>*</AllowedOrigins>"), azerr.InvalidXMLDocument},
		{"rule with empty origins", rule("<AllowedOrigins></AllowedOrigins><AllowedMethods>GET</AllowedMethods>"), azerr.InvalidXMLDocument},
		{"bad method", rule("<AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET,TRACE</AllowedMethods>"), azerr.InvalidXMLDocument},
		{"negative max age", rule("<AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>-1</MaxAgeInSeconds>"), azerr.InvalidXMLDocument},
		{"three prefixed headers", rule(okRule + "<AllowedHeaders>a*,b*,c*</AllowedHeaders>"), azerr.InvalidXMLDocument},
		{"65 origins", rule("<AllowedMethods>GET</AllowedMethods><AllowedOrigins>" + strings.Repeat("http://a,", 65) + "</AllowedOrigins>"), azerr.InvalidXMLDocument},
		{"cors over 2 KiB", rule("<AllowedMethods>GET</AllowedMethods><AllowedOrigins>http://" + strings.Repeat("a", 2100) + "</AllowedOrigins>"), azerr.InvalidXMLDocument},
		{"days 0", retention("<Enabled>true</Enabled><Days>0</Days>"), azerr.InvalidXMLDocument},
		{"days 366", retention("<Enabled>true</Enabled><Days>366</Days>"), azerr.InvalidXMLDocument},
		{"days text", retention("<Enabled>true</Enabled><Days>seven</Days>"), azerr.InvalidXMLDocument},
		{"days huge", retention("<Enabled>true</Enabled><Days>99999999999999</Days>"), azerr.InvalidXMLDocument},
		{"enabled without days", retention("<Enabled>true</Enabled>"), azerr.InvalidXMLDocument},
		{"bad bool", "<StorageServiceProperties><Logging><Read>yes</Read></Logging></StorageServiceProperties>", azerr.InvalidXMLDocument},
		{"bad version", "<StorageServiceProperties><HourMetrics><Version>9.9</Version></HourMetrics></StorageServiceProperties>", azerr.InvalidXMLDocument},
		{"element inside a value", "<StorageServiceProperties><Logging><Read><b/></Read></Logging></StorageServiceProperties>", azerr.InvalidXMLDocument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.body))
			if !azerr.Is(err, tt.code) {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
		})
	}
}
