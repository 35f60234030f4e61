package console

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/partition"
)

func newTest(requireLogin bool) *Console {
	return New(Options{Accounts: []auth.Account{auth.DevAccount()}, TableURL: "http://127.0.0.1:1",
		Partitions: partition.New(partition.Options{}).Handler(), Version: "v", Engine: "e", RequireLogin: requireLogin, Token: "tok"})
}

func do(c *Console, method, path, remote, body string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.RemoteAddr = remote
	r.Host = "127.0.0.1:6060"
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	c.ServeHTTP(w, r)
	return w
}

func TestNonLoopbackNeedsSignIn(t *testing.T) {
	c := newTest(false)
	if w := do(c, "GET", "/api/session", "10.1.2.3:5000", "", nil); w.Code != http.StatusUnauthorized {
		t.Fatalf("non-loopback without sign-in: %d", w.Code)
	}
	if w := do(c, "GET", "/api/table/devstoreaccount1/Tables", "[2001:db8::1]:5000", "", nil); w.Code != http.StatusUnauthorized {
		t.Fatalf("non-loopback table API without sign-in: %d", w.Code)
	}
	if w := do(c, "GET", "/api/session", "127.0.0.1:5000", "", nil); w.Code != http.StatusOK {
		t.Fatalf("loopback: %d", w.Code)
	}
	// DNS rebinding: a loopback connection under another site's name is not trusted.
	if w := do(c, "GET", "/api/session", "127.0.0.1:5000", "", map[string]string{"Host": "evil.example:6060"}); w.Code != http.StatusUnauthorized {
		t.Fatalf("loopback under a foreign Host: %d", w.Code)
	}
	for _, h := range []string{"localhost:6060", "127.0.0.1:6060", "[::1]:6060", "127.0.0.1"} {
		if w := do(c, "GET", "/api/session", "[::1]:5000", "", map[string]string{"Host": h}); w.Code != http.StatusOK {
			t.Fatalf("loopback, Host %s: %d", h, w.Code)
		}
	}
	if w := do(newTest(true), "GET", "/api/session", "127.0.0.1:5000", "", nil); w.Code != http.StatusUnauthorized {
		t.Fatalf("RequireLogin, loopback: %d", w.Code)
	}
	// Wrong key, then the right one; the session cookie then opens the API.
	if w := do(c, "POST", "/api/login", "10.1.2.3:5000", `{"account":"devstoreaccount1","key":"AAAA"}`, nil); w.Code != http.StatusForbidden {
		t.Fatalf("wrong key: %d", w.Code)
	}
	w := do(c, "POST", "/api/login", "10.1.2.3:5000", `{"account":"devstoreaccount1","key":"`+auth.DevAccountKey+`"}`, nil)
	if w.Code != http.StatusOK {
		t.Fatalf("login: %d %s", w.Code, w.Body)
	}
	ck := w.Result().Cookies()[0]
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v", ck)
	}
	w = do(c, "GET", "/api/session", "10.1.2.3:5000", "", map[string]string{"Cookie": ck.Name + "=" + ck.Value})
	if w.Code != http.StatusOK {
		t.Fatalf("with session: %d", w.Code)
	}
	if strings.Contains(w.Body.String(), auth.DevAccountKey) {
		t.Fatal("key sent to the browser")
	}
	if w := do(c, "POST", "/api/login", "10.1.2.3:5000", `{"token":"tok"}`, nil); w.Code != http.StatusOK {
		t.Fatalf("token login: %d", w.Code)
	}
}

func TestMutationsNeedCSRFToken(t *testing.T) {
	c := newTest(false)
	w := do(c, "GET", "/api/session", "127.0.0.1:1", "", nil)
	var s struct{ CSRF string }
	_ = json.Unmarshal(w.Body.Bytes(), &s)
	if s.CSRF == "" {
		t.Fatal("no CSRF token")
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "MERGE"} {
		if w := do(c, m, "/api/table/devstoreaccount1/Tables", "127.0.0.1:1", "{}", nil); w.Code != http.StatusForbidden {
			t.Fatalf("%s without token: %d", m, w.Code)
		}
		if w := do(c, m, "/api/table/devstoreaccount1/Tables", "127.0.0.1:1", "{}", map[string]string{"X-CSRF-Token": "x" + s.CSRF}); w.Code != http.StatusForbidden {
			t.Fatalf("%s with a wrong token: %d", m, w.Code)
		}
	}
	// The right token from another origin is refused too; the right token passes (the
	// service is unreachable here: 502).
	hdr := map[string]string{"X-CSRF-Token": s.CSRF, "Origin": "http://evil.example"}
	if w := do(c, "POST", "/api/table/devstoreaccount1/Tables", "127.0.0.1:1", "{}", hdr); w.Code != http.StatusForbidden {
		t.Fatalf("cross-origin: %d", w.Code)
	}
	delete(hdr, "Origin")
	if w := do(c, "POST", "/api/table/devstoreaccount1/Tables", "127.0.0.1:1", "{}", hdr); w.Code != http.StatusBadGateway {
		t.Fatalf("with token: %d %s", w.Code, w.Body)
	}
}

func TestServerInfo(t *testing.T) {
	c := newTest(false)
	w := do(c, "GET", "/api/server", "127.0.0.1:1", "", nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "AccountName=devstoreaccount1") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	w = do(c, "GET", "/", "127.0.0.1:1", "", nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "app.js") || !strings.Contains(w.Header().Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("index: %d %v", w.Code, w.Header())
	}
}

// recorder is a transport that records the URL of each forwarded request.
type recorder struct{ urls []string }

func (rc *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	rc.urls = append(rc.urls, r.URL.String())
	return &http.Response{StatusCode: 204, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// FuzzTablePath: whatever the path, the console forwards only to the signed account's own
// path on the Table endpoint, and never panics.
func FuzzTablePath(f *testing.F) {
	for _, s := range []string{"devstoreaccount1/Tables", "devstoreaccount1/t(PartitionKey='a%27',RowKey='b')",
		"devstoreaccount1/../other/Tables", "devstoreaccount1%2F..%2Fother/Tables", "other/Tables", "devstoreaccount1/%2e%2e/x", "devstoreaccount1", "devstoreaccoun%741/Tables"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rc := &recorder{}
		c := New(Options{Accounts: []auth.Account{auth.DevAccount()}, TableURL: "http://127.0.0.1:1", Client: &http.Client{Transport: rc}})
		r, err := http.NewRequest("GET", "http://127.0.0.1/api/table/"+p, nil)
		if err != nil {
			return
		}
		r.RemoteAddr = "127.0.0.1:1"
		r.RequestURI = r.URL.RequestURI()
		c.ServeHTTP(httptest.NewRecorder(), r)
		for _, u := range rc.urls {
			if !strings.HasPrefix(u, "http://127.0.0.1:1/devstoreaccount1/") {
				t.Fatalf("forwarded %q for %q", u, p)
			}
		}
	})
}
