package e2e

import (
	"bufio"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestClientErrorCodes covers the client-provokable errors of the Table service that no
// other test asserts, with the status and code Azure answers (spec errors.md §3-§4). Each
// needs a request no SDK sends, hence raw requests (signed as the Go SDK signs).
func TestClientErrorCodes(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	entity := "/" + name + "(PartitionKey='p',RowKey='r')"
	atom := `<?xml version="1.0" encoding="utf-8"?><entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"/></entry>`
	tests := []struct {
		what, method, path string
		header             map[string]string
		body               string
		status             int
		code               string
	}{
		{"Atom insert", "POST", "/" + name, map[string]string{"Content-Type": "application/atom+xml"}, atom, 415, "AtomFormatNotSupported"},
		{"Atom create table", "POST", "/Tables", map[string]string{"Content-Type": "application/atom+xml;type=entry"}, atom, 415, "AtomFormatNotSupported"},
		{"Atom update", "PUT", entity, map[string]string{"Content-Type": "application/atom+xml", "If-Match": "*"}, atom, 415, "AtomFormatNotSupported"},
		{"JSON on a version before 2013-08-15", "GET", "/Tables", map[string]string{"x-ms-version": "2012-02-12"}, "", 415, "JsonFormatNotSupported"},
		{"malformed x-ms-version", "GET", "/Tables", map[string]string{"x-ms-version": "yesterday"}, "", 400, "InvalidHeaderValue"},
		{"unparsable Authorization", "GET", "/Tables", map[string]string{"Authorization": "garbage"}, "", 400, "InvalidAuthenticationInfo"},
		{"unknown Authorization scheme", "GET", "/Tables", map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, "", 400, "InvalidAuthenticationInfo"},
		{"two X-HTTP-Method values", "POST", entity, map[string]string{"X-HTTP-Method": "DELETE, MERGE", "If-Match": "*"}, "", 400, "XMethodIncorrectCount"},
		{"bad X-HTTP-Method", "POST", entity, map[string]string{"X-HTTP-Method": "GET"}, "", 400, "XMethodIncorrectValue"},
		{"X-HTTP-Method on PUT", "PUT", entity, map[string]string{"X-HTTP-Method": "DELETE"}, "", 400, "XMethodNotUsingPost"},
		{"unroutable path", "GET", "/" + name + "/more/segments", nil, "", 400, "InvalidUri"},
		{"PUT on /Tables", "PUT", "/Tables", nil, "", 405, "MethodNotAllowed"},
		{"DELETE on service properties", "DELETE", "/?restype=service&comp=properties", nil, "", 405, "UnsupportedHttpVerb"},
		{"POST on an ACL", "POST", "/" + name + "?comp=acl", nil, "", 405, "UnsupportedHttpVerb"},
		{"bad restype", "GET", "/?restype=container&comp=list", nil, "", 400, "InvalidQueryParameterValue"},
		{"bad comp on a table", "GET", "/" + name + "?comp=list", nil, "", 400, "InvalidQueryParameterValue"},
		{"malformed query escape", "GET", "/Tables?%24top=%zz", nil, "", 400, "InvalidQueryParameterValue"},
		{"bad $format", "GET", "/Tables?$format=text/html", nil, "", 400, "InvalidInput"},
	}
	for _, tt := range tests {
		status, h, body := ts.do(t, tt.method, tt.path, tt.header, tt.body)
		if status != tt.status || h.Get("x-ms-error-code") != tt.code || !strings.Contains(body, tt.code) {
			t.Errorf("%s: got %d %q, want %d %s: %s", tt.what, status, h.Get("x-ms-error-code"), tt.status, tt.code, body)
		}
	}
	if n := countFilter(t, tc, ""); n != 0 {
		t.Errorf("refused requests wrote %d entities", n)
	}

	// Requests Go's client cannot send.
	u, _ := url.Parse(ts.endpoint)
	for _, r := range []struct{ what, raw, code string }{
		// HTTP/1.0 allows a request without Host.
		{"no Host", "GET " + u.Path + "/Tables HTTP/1.0\r\nx-ms-version: 2019-02-02\r\n\r\n", "HostInformationNotPresent"},
		{"bad percent-encoding in the path", "GET " + u.Path + "/" + name + "(PartitionKey='%zz',RowKey='r') HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n", "InvalidUri"},
	} {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte(r.raw)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		c.Close()
		if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != r.code {
			t.Errorf("%s: %d %q, want 400 %s", r.what, resp.StatusCode, resp.Header.Get("x-ms-error-code"), r.code)
		}
	}
}
