package serviceprops

import (
	"reflect"
	"testing"
)

func TestAppendXML(t *testing.T) {
	tests := []struct {
		name string
		p    Properties
		want string
	}{
		{"default", Default(), `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>` +
			`<Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>` +
			`<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>` +
			`<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>` +
			`<Cors /></StorageServiceProperties>`},
		{"sdk", sdkProps, `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>` +
			`<Logging><Version>1.0</Version><Delete>false</Delete><Read>true</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging>` +
			`<HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></HourMetrics>` +
			`<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>` +
			`<Cors><CorsRule><AllowedOrigins>https://example.com</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds>` +
			`<ExposedHeaders>x-ms-request-id</ExposedHeaders><AllowedHeaders>x-ms-meta-*</AllowedHeaders></CorsRule></Cors></StorageServiceProperties>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tt.p.AppendXML(nil))
			if got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			back, err := Decode([]byte(got))
			if err != nil || !reflect.DeepEqual(back, tt.p) {
				t.Fatalf("decode: %v\n%+v", err, back)
			}
		})
	}
}

func TestDecodeNilIsDefault(t *testing.T) {
	p, err := Decode(nil)
	if err != nil || !reflect.DeepEqual(p, Default()) {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestEscapingRoundTrip(t *testing.T) {
	p := Default()
	p.Cors = []CorsRule{{AllowedOrigins: []string{`http://a.com/<&>"'` + "\tx"}, AllowedMethods: []string{"GET"}}}
	back, err := Decode(p.AppendXML(nil))
	if err != nil || !reflect.DeepEqual(back, p) {
		t.Fatalf("%v\n%+v", err, back)
	}
}
