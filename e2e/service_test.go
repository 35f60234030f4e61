package e2e

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

const defaultServiceProperties = `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>` +
	`<Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>` +
	`<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>` +
	`<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>` +
	`<Cors /></StorageServiceProperties>`

const servicePropsPath = "?restype=service&comp=properties"

// wantAzErr fails unless err is an *azcore.ResponseError with the given status and code.
func wantAzErr(t testing.TB, what string, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("%s: want %d %s, got %v", what, status, code, err)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("%s: want %d %s, got %d %s", what, status, code, re.StatusCode, re.ErrorCode)
	}
}

func sdkCorsRule() *aztables.CorsRule {
	return &aztables.CorsRule{
		AllowedOrigins:  to.Ptr("https://example.com"),
		AllowedMethods:  to.Ptr("GET,PUT"),
		AllowedHeaders:  to.Ptr("x-ms-meta-*"),
		ExposedHeaders:  to.Ptr("x-ms-request-id"),
		MaxAgeInSeconds: to.Ptr(int32(60)),
	}
}

func TestServicePropertiesDefaultsAndRoundTrip(t *testing.T) {
	ts := startServer(t)
	svc := ts.service(t)

	status, h, body := ts.do(t, http.MethodGet, servicePropsPath, map[string]string{"Accept": "application/xml"}, "")
	if status != http.StatusOK || body != defaultServiceProperties || !strings.HasPrefix(h.Get("Content-Type"), "application/xml") {
		t.Fatalf("default properties: %d %q\n%s", status, h.Get("Content-Type"), body)
	}
	got, err := svc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Cors) != 0 || *got.Logging.Read || *got.HourMetrics.Enabled || *got.MinuteMetrics.Version != "1.0" {
		t.Fatalf("default properties via SDK: %+v", got.ServiceProperties)
	}

	props := aztables.ServiceProperties{
		Logging: &aztables.Logging{Version: to.Ptr("1.0"), Delete: to.Ptr(false), Read: to.Ptr(true), Write: to.Ptr(true),
			RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}},
		HourMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true),
			RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}},
		MinuteMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(false),
			RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(false)}},
		Cors: []*aztables.CorsRule{sdkCorsRule()},
	}
	if _, err := svc.SetProperties(ctx, props, nil); err != nil {
		t.Fatal(err)
	}
	got, err = svc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !*got.Logging.Read || *got.Logging.Delete || *got.Logging.RetentionPolicy.Days != 7 ||
		!*got.HourMetrics.IncludeAPIs || *got.MinuteMetrics.Enabled || len(got.Cors) != 1 ||
		*got.Cors[0].AllowedOrigins != "https://example.com" || *got.Cors[0].MaxAgeInSeconds != 60 ||
		*got.Cors[0].AllowedHeaders != "x-ms-meta-*" || *got.Cors[0].ExposedHeaders != "x-ms-request-id" {
		t.Fatalf("round trip: %+v", got.ServiceProperties)
	}

	// Partial update (az storage logging update): only Logging changes, CORS stays.
	status, _, body = ts.do(t, http.MethodPut, servicePropsPath, map[string]string{"Content-Type": "application/xml"},
		`<?xml version='1.0' encoding='utf-8'?>`+"\n"+`<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging></StorageServiceProperties>`)
	if status != http.StatusAccepted || body != "" {
		t.Fatalf("partial set: %d %s", status, body)
	}
	got, err = svc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !*got.Logging.Delete || *got.Logging.Read || len(got.Cors) != 1 || !*got.HourMetrics.Enabled {
		t.Fatalf("after partial update: %+v", got.ServiceProperties)
	}

	// <Cors /> clears the rules and nothing else (az storage cors clear).
	status, _, _ = ts.do(t, http.MethodPut, servicePropsPath, map[string]string{"Content-Type": "application/xml"},
		`<?xml version='1.0' encoding='utf-8'?>`+"\n"+`<StorageServiceProperties><Cors /></StorageServiceProperties>`)
	if status != http.StatusAccepted {
		t.Fatalf("cors clear: %d", status)
	}
	got, err = svc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Cors) != 0 || !*got.Logging.Delete {
		t.Fatalf("after cors clear: %+v", got.ServiceProperties)
	}

	// Properties are per account and survive a restart.
	dir := ts.dataDir
	ts.stop(t)
	ts2 := startServerAt(t, dir)
	got, err = ts2.service(t).GetProperties(ctx, nil)
	if err != nil || !*got.Logging.Delete {
		t.Fatalf("after restart: %v %+v", err, got.ServiceProperties)
	}
}

func TestServicePropertiesValidation(t *testing.T) {
	ts := startServer(t)
	svc := ts.service(t)
	rules := make([]*aztables.CorsRule, 6)
	for i := range rules {
		rules[i] = sdkCorsRule()
	}
	_, err := svc.SetProperties(ctx, aztables.ServiceProperties{Cors: rules}, nil)
	wantAzErr(t, "six CORS rules", err, 400, "InvalidXmlDocument")

	bad := sdkCorsRule()
	bad.AllowedMethods = to.Ptr("GET,TRACE")
	_, err = svc.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{bad}}, nil)
	wantAzErr(t, "TRACE method", err, 400, "InvalidXmlDocument")

	// Out-of-range values are InvalidXmlDocument on Azure (not InvalidXmlNodeValue).
	for _, days := range []int32{0, 366} {
		_, err = svc.SetProperties(ctx, aztables.ServiceProperties{HourMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(false),
			RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(days)}}}, nil)
		wantAzErr(t, "retention days", err, 400, "InvalidXmlDocument")
		_, err = svc.SetProperties(ctx, aztables.ServiceProperties{Logging: &aztables.Logging{Version: to.Ptr("1.0"), Read: to.Ptr(true), Write: to.Ptr(false), Delete: to.Ptr(false),
			RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(days)}}}, nil)
		wantAzErr(t, "logging retention days", err, 400, "InvalidXmlDocument")
	}
	negative := sdkCorsRule()
	negative.MaxAgeInSeconds = to.Ptr(int32(-1))
	_, err = svc.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{negative}}, nil)
	wantAzErr(t, "negative MaxAgeInSeconds", err, 400, "InvalidXmlDocument")

	status, h, body := ts.do(t, http.MethodPut, servicePropsPath, map[string]string{"Content-Type": "application/xml"}, "<StorageServiceProperties><Logging>")
	if status != 400 || h.Get("x-ms-error-code") != "InvalidXmlDocument" || !strings.Contains(body, "<Code>InvalidXmlDocument</Code>") {
		t.Fatalf("malformed: %d %s", status, body)
	}
	// Nothing above changed the stored properties.
	if _, _, body := ts.do(t, http.MethodGet, servicePropsPath, nil, ""); body != defaultServiceProperties {
		t.Fatalf("failed sets changed the properties:\n%s", body)
	}
}

func TestServiceStats(t *testing.T) {
	ts := startServer(t)
	_, err := ts.service(t).GetStatistics(ctx, nil)
	wantAzErr(t, "stats on primary", err, 400, "InvalidQueryParameterValue")

	cs := strings.Replace(ts.connString(), "/"+devAccount+";", "/"+devAccount+"-secondary;", 1)
	sec, err := aztables.NewServiceClientFromConnectionString(cs, clientOptions())
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-2 * time.Second)
	st, err := sec.GetStatistics(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.GeoReplication == nil || *st.GeoReplication.Status != aztables.GeoReplicationStatusLive ||
		st.GeoReplication.LastSyncTime == nil || st.GeoReplication.LastSyncTime.Before(before) {
		t.Fatalf("stats: %+v", st.GeoReplication)
	}
}
