package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// acNewTable creates a fresh table and returns its name and a Shared Key client for it.
func acNewTable(t testing.TB, ts *testServer) (string, *aztables.Client) {
	t.Helper()
	name := fmt.Sprintf("ac%d%d", time.Now().UnixNano()%1e9, tableSeq.Add(1))
	svc := ts.service(t)
	if _, err := svc.CreateTable(ctx, name, nil); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	return name, svc.NewClient(name)
}

// corsRequest sends an unauthenticated request (a browser's preflight, or an actual request
// whose credentials do not matter for the test).
func corsRequest(t testing.TB, method, url string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return send(t, req)
}

func TestCORS(t *testing.T) {
	ts := startServer(t)
	name, _ := acNewTable(t, ts)
	tableURL := ts.endpoint + "/" + name

	// Without rules every preflight fails.
	status, _, body := corsRequest(t, http.MethodOptions, tableURL, map[string]string{
		"Origin": "http://www.contoso.com", "Access-Control-Request-Method": "GET"})
	if status != 403 || !strings.Contains(body, "CorsPreflightFailure") {
		t.Fatalf("preflight without rules: %d %s", status, body)
	}
	// Without rules nothing varies by Origin.
	if _, h, _ := ts.do(t, http.MethodGet, "/Tables", map[string]string{"Origin": "http://www.contoso.com"}, ""); h.Get("Vary") != "" {
		t.Fatalf("Vary without CORS rules: %v", h)
	}

	_, err := ts.service(t).SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{
		{
			AllowedOrigins: to.Ptr("http://www.contoso.com,http://fabrikam.com"), AllowedMethods: to.Ptr("GET,PUT,DELETE"),
			AllowedHeaders: to.Ptr("x-ms-meta-*,content-type,x-ms-version,x-ms-date,authorization"),
			ExposedHeaders: to.Ptr("x-ms-request-id,ETag"), MaxAgeInSeconds: to.Ptr(int32(500)),
		},
		{
			AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("GET"),
			AllowedHeaders: to.Ptr(""), ExposedHeaders: to.Ptr(""), MaxAgeInSeconds: to.Ptr(int32(60)),
		},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name        string
		header      map[string]string
		status      int
		allowOrigin string
		maxAge      string
		creds       string
	}{
		{"first rule", map[string]string{"Origin": "http://www.contoso.com", "Access-Control-Request-Method": "PUT",
			"Access-Control-Request-Headers": "content-type,x-ms-version,x-ms-meta-abc"}, 200, "http://www.contoso.com", "500", "true"},
		{"origin case-insensitive", map[string]string{"Origin": "HTTP://FABRIKAM.COM", "Access-Control-Request-Method": "DELETE"},
			200, "HTTP://FABRIKAM.COM", "500", "true"},
		{"wildcard rule", map[string]string{"Origin": "http://other.org", "Access-Control-Request-Method": "GET"}, 200, "*", "60", ""},
		{"header not allowed by the wildcard rule", map[string]string{"Origin": "http://other.org", "Access-Control-Request-Method": "GET",
			"Access-Control-Request-Headers": "x-ms-version"}, 403, "", "", ""},
		{"method not allowed", map[string]string{"Origin": "http://www.contoso.com", "Access-Control-Request-Method": "POST"}, 403, "", "", ""},
		{"missing method", map[string]string{"Origin": "http://www.contoso.com"}, 400, "", "", ""},
		{"missing origin", map[string]string{"Access-Control-Request-Method": "GET"}, 400, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := corsRequest(t, http.MethodOptions, tableURL, tt.header)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if status != 400 && h.Get("Vary") != "Origin" {
				t.Errorf("preflight answer without Vary: Origin: %v", h)
			}
			switch status {
			case 403:
				if h.Get("x-ms-error-code") != "CorsPreflightFailure" {
					t.Fatalf("code %q", h.Get("x-ms-error-code"))
				}
				return
			case 400:
				if h.Get("x-ms-error-code") != "InvalidHeaderValue" {
					t.Fatalf("code %q", h.Get("x-ms-error-code"))
				}
				return
			}
			if h.Get("Access-Control-Allow-Origin") != tt.allowOrigin || h.Get("Access-Control-Max-Age") != tt.maxAge ||
				h.Get("Access-Control-Allow-Credentials") != tt.creds ||
				h.Get("Access-Control-Allow-Methods") != tt.header["Access-Control-Request-Method"] ||
				h.Get("Access-Control-Allow-Headers") != tt.header["Access-Control-Request-Headers"] || body != "" {
				t.Fatalf("headers %v body %q", h, body)
			}
		})
	}

	// Preflight works on any resource shape, also the service root.
	if status, _, _ := corsRequest(t, http.MethodOptions, ts.endpoint+"/Tables", map[string]string{
		"Origin": "http://fabrikam.com", "Access-Control-Request-Method": "GET"}); status != 200 {
		t.Fatalf("preflight on /Tables: %d", status)
	}

	// Actual requests: a signed GET with a matching Origin carries the CORS headers.
	status, h, _ := ts.do(t, http.MethodGet, "/Tables", map[string]string{"Origin": "http://www.contoso.com"}, "")
	if status != 200 || h.Get("Access-Control-Allow-Origin") != "http://www.contoso.com" ||
		h.Get("Access-Control-Allow-Credentials") != "true" || h.Get("Access-Control-Expose-Headers") != "x-ms-request-id,ETag" ||
		h.Get("Vary") != "Origin" {
		t.Fatalf("actual request: %d %v", status, h)
	}
	// The wildcard rule answers "*" without credentials.
	_, h, _ = ts.do(t, http.MethodGet, "/Tables", map[string]string{"Origin": "http://other.org"}, "")
	if h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Credentials") != "" || h.Get("Vary") != "Origin" {
		t.Fatalf("wildcard actual request: %v", h)
	}
	// Even a failing request carries them (browsers can then read the error).
	status, h, _ = corsRequest(t, http.MethodGet, ts.endpoint+"/Tables", map[string]string{"Origin": "http://www.contoso.com"})
	if status != 403 || h.Get("Access-Control-Allow-Origin") != "http://www.contoso.com" {
		t.Fatalf("unauthenticated actual request: %d %v", status, h)
	}
	// No matching rule (POST is allowed by none) and no Origin: no CORS headers.
	_, h, _ = ts.do(t, http.MethodPost, "/Tables", map[string]string{"Origin": "http://other.org", "Content-Type": "application/json"}, `{"TableName":"corsnew"}`)
	if h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("unmatched method got CORS headers: %v", h)
	}
	// but its answer still varies by Origin (with rules configured, Azure always says so),
	// also when the request fails.
	if vs := h.Values("Vary"); len(vs) != 1 || vs[0] != "Origin" {
		t.Fatalf("unmatched request: Vary %q, want Origin once", vs)
	}
	if _, h, _ = corsRequest(t, http.MethodGet, ts.endpoint+"/Tables", map[string]string{"Origin": "http://nomatch.example"}); h.Get("Vary") != "Origin" {
		t.Fatalf("unmatched failing request: no Vary: Origin: %v", h)
	}
	_, h, _ = ts.do(t, http.MethodGet, "/Tables", nil, "")
	if h.Get("Access-Control-Allow-Origin") != "" || h.Get("Vary") != "" {
		t.Fatalf("request without Origin got CORS headers: %v", h)
	}
}
