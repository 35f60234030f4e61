package edge

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
)

func requestCtx(t *testing.T, r *http.Request) *fasthttp.RequestCtx {
	t.Helper()
	var wire bytes.Buffer
	if err := r.Write(&wire); err != nil {
		t.Fatal(err)
	}
	fc := &fasthttp.RequestCtx{}
	if err := fc.Request.Read(bufio.NewReader(&wire)); err != nil {
		t.Fatal(err)
	}
	return fc
}

// Account resolution is the same for every service: path style on IPs, localhost and
// dot-less hosts; host style ({account}.queue.localhost, ...core.windows.net) otherwise;
// -secondary dropped and noted.
func TestResolveAccount(t *testing.T) {
	p := New(Options{Service: auth.ServiceQueue, Accounts: []auth.Account{auth.DevAccount()}})
	for _, tc := range []struct{ host, target, rawPath string }{
		{"127.0.0.1:10001", "/devstoreaccount1/q/messages", "/q/messages"},
		{"127.0.0.1:10001", "/devstoreaccount1?comp=list", "/"},
		{"127.0.0.1:10001", "/devstoreaccount1/?comp=list", "/"},
		{"127.0.0.1:10001", "/devstoreaccount1-secondary?comp=stats&restype=service", "/"},
		{"devstoreaccount1.queue.localhost:10001", "/q", "/q"},
		{"devstoreaccount1-secondary.blob.localhost", "/c/b", "/c/b"},
		{"devstoreaccount1.table.localhost", "/Tables", "/Tables"},
	} {
		var c Call
		p.Begin(&c, requestCtx(t, httptest.NewRequest("GET", "http://"+tc.host+tc.target, nil)))
		if err := p.ResolveAccount(&c); err != nil {
			t.Fatalf("%s%s: %v", tc.host, tc.target, err)
		}
		if c.Account != "devstoreaccount1" || c.RawPath != tc.rawPath ||
			c.Secondary != strings.Contains(tc.host+tc.target, "-secondary") {
			t.Errorf("%s%s: %+v", tc.host, tc.target, c)
		}
	}
}

// Blob and Queue answer errors in XML with x-ms-error-code and the details elements; the
// Table service in JSON unless the operation asks for XML.
func TestErrorEnvelopePerService(t *testing.T) {
	for _, tc := range []struct {
		svc  auth.Service
		want string
	}{{auth.ServiceQueue, "<Error><Code>RequestBodyTooLarge</Code>"}, {auth.ServiceTable, `{"odata.error":{"code":"RequestBodyTooLarge"`}} {
		p := New(Options{Service: tc.svc})
		var c Call
		fc := requestCtx(t, httptest.NewRequest("POST", "http://127.0.0.1/devstoreaccount1/q/messages", nil))
		p.Begin(&c, fc)
		p.WriteError(&c, azerr.New(azerr.RequestBodyTooLarge).With("MaxLimit", "65536"))
		body := string(fc.Response.Body())
		if !strings.Contains(body, tc.want) || string(fc.Response.Header.Peek("X-Ms-Error-Code")) != "RequestBodyTooLarge" || fc.Response.StatusCode() != 413 {
			t.Fatalf("%s: %d %s", tc.svc, fc.Response.StatusCode(), body)
		}
		if tc.svc == auth.ServiceQueue && !strings.Contains(body, "<MaxLimit>65536</MaxLimit></Error>") {
			t.Fatalf("details missing: %s", body)
		}
	}
}

// TestHeaderFoldLookup: with header names kept as sent, lookups match names ASCII
// case-insensitively, and only letters fold ('^' and '~' differ by the same bit as 'a' and
// 'A' but are different token characters).
func TestHeaderFoldLookup(t *testing.T) {
	var h fasthttp.RequestHeader
	h.DisableNormalizing()
	h.Set("x-ms-range", "bytes=0-1")
	h.Set("x-ms-a^", "caret")
	r := Header{H: &h, Fold: true}
	for key, want := range map[string]string{
		"X-Ms-Range": "bytes=0-1", "x-ms-range": "bytes=0-1", "X-MS-RANGE": "bytes=0-1",
		"X-Ms-Rang": "", "X-Ms-Ranges": "", "X-Ms-A^": "caret", "X-Ms-A~": "", "x-ms-a~": "",
	} {
		if got := r.Get(key); got != want {
			t.Errorf("Get(%q) = %q, want %q", key, got, want)
		}
	}
	if got := r.Values("X-MS-RANGE"); len(got) != 1 || got[0] != "bytes=0-1" {
		t.Errorf("Values = %q", got)
	}
}
