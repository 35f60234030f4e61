package blobwire

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/blob"
	"github.com/tablo/tablo/internal/partition"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/testlog"
)

// These tests drive the Blob service's handlers as cmd/tablo wires them (a durable Pebble
// engine, the partition layer, the development account) over real HTTP on loopback, with
// requests signed with Shared Key, and check what a client sees: status, Azure error code,
// headers and body. The end-to-end tests (e2e/) cover the same surface through the SDKs;
// these let the package's own tests judge it (mutation testing, docs/testing.md).

const devAccount = "devstoreaccount1"

// testServer is a Blob server over a fresh store, listening on loopback.
type testServer struct {
	t     *testing.T
	base  string // http://127.0.0.1:port/devstoreaccount1
	svc   *blob.Service
	parts *partition.Layer
	log   *testlog.Buffer
	// pathAccount is the account segment of request paths ("": the account's own name).
	pathAccount string
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	return newTestServerWith(t, nil)
}

// newTestServerWith is newTestServer with the server's options edited by edit.
func newTestServerWith(t *testing.T, edit func(*Options)) *testServer {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	svc := blob.New(db, blob.Options{SweepInterval: -1})
	parts := partition.New(partition.Options{})
	logs := &testlog.Buffer{}
	o := Options{Service: svc, Accounts: []auth.Account{auth.DevAccount()}, Partitions: parts,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	if edit != nil {
		edit(&o)
	}
	srv := New(o)
	hs := srv.NewHTTPServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-served
		svc.Close()
		db.Close()
		logs.FailOnErrors(t) // no test here expects a recovered panic or a 5xx
	})
	return &testServer{t: t, base: "http://" + ln.Addr().String() + "/" + devAccount, svc: svc, parts: parts, log: logs}
}

// reply is what a client read back.
type reply struct {
	code int
	h    http.Header
	body string
	// close: the server closes the connection after this answer (Connection: close, which
	// Go's client takes out of the headers).
	close bool
}

// hdr reads a response header.
func (r reply) hdr(k string) string { return r.h.Get(k) }

// errCode is the x-ms-error-code header.
func (r reply) errCode() string { return r.h.Get("x-ms-error-code") }

func (r reply) String() string {
	return fmt.Sprintf("%d %s %q", r.code, r.errCode(), r.body)
}

// client is the tests' HTTP client. An answer that never ends (a server that promises a
// body it does not send, or waits for one the client never sends) would hang a test: the
// timeout turns that into a failure (a hang detector, not a timing check).
var client = &http.Client{Timeout: time.Minute}

// h is a list of header name/value pairs, in order.
type h []string

// send sends a request; sign selects Shared Key signing (false: anonymous).
func (ts *testServer) send(sign bool, method, target, body string, hv h) reply {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.base, strings.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	// The target goes on the request line as written (an undecodable one included).
	p, q, _ := strings.Cut(target, "?")
	acct := devAccount
	if ts.pathAccount != "" {
		acct = ts.pathAccount
	}
	req.URL.Opaque, req.URL.RawQuery = "/"+acct+p, q
	if body == "" {
		req.Body, req.ContentLength = nil, 0
	} else {
		req.Header.Set("Content-Length", fmt.Sprint(len(body))) // for the signature only
	}
	req.Header.Set("x-ms-version", "2021-12-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("Accept-Encoding", "identity") // bodies as sent, whatever Content-Encoding says
	for i := 0; i+1 < len(hv); i += 2 {
		switch {
		case hv[i] == "x-ms-version" && hv[i+1] == "":
			req.Header.Del("x-ms-version")
		case hv[i] == "Transfer-Encoding":
			// A body of unknown length: Go sends it chunked.
			req.Body, req.ContentLength = io.NopCloser(io.MultiReader(strings.NewReader(body))), -1
			req.Header.Del("Content-Length")
		default:
			req.Header.Set(hv[i], hv[i+1])
		}
	}
	if sign {
		rawPath, rawQuery := auth.SplitRequestURI(req.URL.RequestURI())
		req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKey, auth.RequestInfo{
			Method: method, RawPath: rawPath, RawQuery: rawQuery, Header: auth.HTTPHeader(req.Header),
			Account: devAccount, PathStyle: true, Service: auth.ServiceBlob,
		}, auth.DevAccount().Keys[0]))
	}
	resp, err := client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return reply{code: resp.StatusCode, h: resp.Header, body: string(b), close: resp.Close}
}

// do sends a request signed with the account key.
func (ts *testServer) do(method, target, body string, hv ...string) reply {
	ts.t.Helper()
	return ts.send(true, method, target, body, hv)
}

// anon sends an unsigned request.
func (ts *testServer) anon(method, target string, hv ...string) reply {
	ts.t.Helper()
	return ts.send(false, method, target, "", hv)
}

// ok fails the test unless r has status want.
func (ts *testServer) ok(r reply, want int, what string) reply {
	ts.t.Helper()
	if r.code != want {
		ts.t.Fatalf("%s: %s, want %d", what, r, want)
	}
	return r
}

// fails reports an error unless r is Azure's error answer status/code, in the header and
// (except for HEAD, whose answer has no body) in the body.
func (ts *testServer) fails(r reply, status int, code, what string) {
	ts.t.Helper()
	if r.code != status || r.errCode() != code || (r.body != "" && !strings.Contains(r.body, "<Code>"+code+"</Code>")) {
		ts.t.Errorf("%s: %s, want %d %s", what, r, status, code)
	}
}

func (ts *testServer) container(name string, hv ...string) {
	ts.t.Helper()
	ts.ok(ts.do("PUT", "/"+name+"?restype=container", "", hv...), 201, "create container "+name)
}

func (ts *testServer) putBlob(path, data string, hv ...string) reply {
	ts.t.Helper()
	return ts.ok(ts.do("PUT", path, data, append([]string{"x-ms-blob-type", "BlockBlob"}, hv...)...), 201, "put "+path)
}

// Every URL shape reaches its operation: each answers its own success status, and a shape
// no operation takes gets Azure's error for it.
func TestRoutes(t *testing.T) {
	ts := newTestServer(t)
	ts.container("routes")
	ts.putBlob("/routes/b", "0123456789")
	ts.ok(ts.do("PUT", "/routes/ap", "", "x-ms-blob-type", "AppendBlob"), 201, "create append blob")
	ts.ok(ts.do("PUT", "/routes/pg", "", "x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "1024"), 201, "create page blob")
	props := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><DefaultServiceVersion>2021-12-02</DefaultServiceVersion></StorageServiceProperties>`
	for _, c := range []struct {
		method, target, body string
		hv                   h
		want                 int
	}{
		{"GET", "/?restype=account&comp=properties", "", nil, 200},
		{"HEAD", "/routes?restype=account&comp=properties", "", nil, 200},
		{"GET", "/?comp=list", "", nil, 200},
		{"PUT", "/?restype=service&comp=properties", props, nil, 202},
		{"GET", "/?restype=service&comp=properties", "", nil, 200},
		{"GET", "/?comp=blobs&where=" + urlEscape(`"k"='v'`), "", nil, 200},
		{"GET", "/routes?restype=container&comp=blobs&where=" + urlEscape(`"k"='v'`), "", nil, 200},
		{"GET", "/routes?restype=container", "", nil, 200},
		{"HEAD", "/routes?restype=container", "", nil, 200},
		{"GET", "/routes?restype=container&comp=metadata", "", nil, 200},
		{"HEAD", "/routes?restype=container&comp=metadata", "", nil, 200},
		{"PUT", "/routes?restype=container&comp=metadata", "", h{"x-ms-meta-a", "1"}, 200},
		{"GET", "/routes?restype=container&comp=acl", "", nil, 200},
		{"HEAD", "/routes?restype=container&comp=acl", "", nil, 200},
		{"PUT", "/routes?restype=container&comp=acl", "", nil, 200},
		{"GET", "/routes?restype=container&comp=list", "", nil, 200},
		{"PUT", "/routes?restype=container&comp=lease", "", h{"x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1", "x-ms-proposed-lease-id", leaseA}, 201},
		{"PUT", "/routes?restype=container&comp=lease", "", h{"x-ms-lease-action", "release", "x-ms-lease-id", leaseA}, 200},
		{"PUT", "/routes/b?comp=block&blockid=QUFB", "abc", nil, 201},
		{"PUT", "/routes/b?comp=blocklist", `<BlockList><Latest>QUFB</Latest></BlockList>`, nil, 201},
		{"GET", "/routes/b?comp=blocklist", "", nil, 200},
		{"HEAD", "/routes/b?comp=blocklist", "", nil, 200},
		{"PUT", "/routes/ap?comp=appendblock", "xyz", nil, 201},
		{"PUT", "/routes/b?comp=properties", "", h{"x-ms-blob-content-type", "text/plain"}, 200},
		{"PUT", "/routes/b?comp=metadata", "", h{"x-ms-meta-a", "1"}, 200},
		{"GET", "/routes/b?comp=metadata", "", nil, 200},
		{"HEAD", "/routes/b?comp=metadata", "", nil, 200},
		{"PUT", "/routes/b?comp=snapshot", "", nil, 201},
		{"PUT", "/routes/b?comp=lease", "", h{"x-ms-lease-action", "acquire", "x-ms-lease-duration", "15", "x-ms-proposed-lease-id", leaseA}, 201},
		{"PUT", "/routes/b?comp=lease", "", h{"x-ms-lease-action", "release", "x-ms-lease-id", leaseA}, 200},
		{"PUT", "/routes/b?comp=copy&copyid=x", "", h{"x-ms-copy-action", "abort"}, 409},
		{"PUT", "/routes/b?comp=tier", "", h{"x-ms-access-tier", "Cool"}, 200},
		{"PUT", "/routes/pg?comp=page", strings.Repeat("p", 512), h{"x-ms-range", "bytes=0-511", "x-ms-page-write", "update"}, 201},
		{"GET", "/routes/pg?comp=pagelist", "", nil, 200},
		{"HEAD", "/routes/pg?comp=pagelist", "", nil, 200},
		{"PUT", "/routes/b?comp=tags", `<Tags><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tags>`, nil, 204},
		{"GET", "/routes/b?comp=tags", "", nil, 200},
		{"PUT", "/routes/copy", "", h{"x-ms-copy-source", ts.base + "/routes/b"}, 202},
		{"GET", "/routes/b", "", nil, 200},
		{"HEAD", "/routes/b", "", nil, 200},
		{"DELETE", "/routes/copy", "", nil, 202},
		{"PUT", "/other?restype=container", "", nil, 201},
		{"DELETE", "/other?restype=container", "", nil, 202},
	} {
		r := ts.do(c.method, c.target, c.body, c.hv...)
		if r.code != c.want {
			t.Errorf("%s %s: %s, want %d", c.method, c.target, r, c.want)
		}
	}
	for _, c := range []struct {
		method, target string
		status         int
		code           string
	}{
		{"DELETE", "/?comp=list", 405, "UnsupportedHttpVerb"},
		{"PUT", "/?comp=list", 405, "UnsupportedHttpVerb"},
		{"PUT", "/?restype=service&comp=stats", 405, "UnsupportedHttpVerb"},
		{"DELETE", "/?restype=service&comp=properties", 405, "UnsupportedHttpVerb"},
		{"PUT", "/?comp=blobs", 405, "UnsupportedHttpVerb"},
		{"GET", "/", 405, "UnsupportedHttpVerb"},
		{"PUT", "/?restype=account&comp=properties", 405, "UnsupportedHttpVerb"},
		{"GET", "/routes", 400, "InvalidQueryParameterValue"},
		{"GET", "/routes?restype=blob", 400, "InvalidQueryParameterValue"},
		{"GET", "/routes?restype=container&comp=bogus", 400, "InvalidQueryParameterValue"},
		{"POST", "/routes?restype=container", 405, "UnsupportedHttpVerb"},
		{"DELETE", "/routes?restype=container&comp=metadata", 405, "UnsupportedHttpVerb"},
		{"DELETE", "/routes?restype=container&comp=acl", 405, "UnsupportedHttpVerb"},
		{"GET", "/routes?restype=container&comp=lease", 405, "UnsupportedHttpVerb"},
		{"PUT", "/routes?restype=container&comp=list", 405, "UnsupportedHttpVerb"},
		{"PUT", "/routes?restype=container&comp=blobs", 405, "UnsupportedHttpVerb"},
		{"PUT", "/routes/b?comp=bogus", 400, "InvalidQueryParameterValue"},
		{"GET", "/routes/b?comp=lease", 400, "InvalidQueryParameterValue"},
		{"HEAD", "/routes/b?comp=tags", 400, "InvalidQueryParameterValue"},
		{"DELETE", "/routes/b?comp=metadata", 400, "InvalidQueryParameterValue"},
		{"POST", "/routes/b", 405, "UnsupportedHttpVerb"},
		{"GET", "/Routes/b", 400, "InvalidResourceName"},
		{"GET", "/routes/" + strings.Repeat("n", 1025), 400, "OutOfRangeInput"},
	} {
		r := ts.do(c.method, c.target, "")
		if r.code != c.status || r.errCode() != c.code {
			t.Errorf("%s %s: %s, want %d %s", c.method, c.target, r, c.status, c.code)
		}
	}
	// Names at their limits pass routing: a name of 1,024 characters, and 253 slashes.
	ts.fails(ts.do("GET", "/routes/"+strings.Repeat("n", 1024), ""), 404, "BlobNotFound", "name of 1,024 characters")
	ts.fails(ts.do("GET", "/routes/"+strings.Repeat("a/", 253)+"z", ""), 404, "BlobNotFound", "name of 254 segments")
	ts.fails(ts.do("GET", "/routes/"+strings.Repeat("a/", 254)+"z", ""), 400, "OutOfRangeInput", "name of 255 segments")
}

const (
	leaseA = "aaaaaaaa-0000-4000-8000-000000000001"
	leaseB = "bbbbbbbb-0000-4000-8000-000000000002"
)

func urlEscape(s string) string { return url.QueryEscape(s) }

// Query parameter names are matched ignoring case; a query or a path that does not decode is
// Azure's 400.
func TestRequestTargetDecoding(t *testing.T) {
	ts := newTestServer(t)
	ts.container("dec")
	ts.ok(ts.do("GET", "/dec?ResType=container&COMP=list", ""), 200, "mixed-case parameter names")
	ts.ok(ts.do("GET", "/dec?restype=container&RESTYPE=container", ""), 200, "a name sent in two cases")
	ts.fails(ts.do("GET", "/dec?restype=%zz", ""), 400, "InvalidQueryParameterValue", "undecodable query")
	ts.fails(ts.do("GET", "/dec/a%zz", ""), 400, "InvalidUri", "undecodable path")
	ts.putBlob("/dec/a%2Fb", "x")
	ts.ok(ts.do("GET", "/dec/a/b", ""), 200, "%2F and / name the same blob")
}

// Container operations answer with Azure's statuses and headers, and refuse the conditions
// each does not support.
func TestContainerAnswers(t *testing.T) {
	ts := newTestServer(t)
	r := ts.ok(ts.do("PUT", "/cprops?restype=container", "", "x-ms-meta-Owner", "me", "x-ms-blob-public-access", "blob"), 201, "create")
	etag := r.hdr("Etag")
	if etag == "" || r.hdr("Last-Modified") == "" {
		t.Errorf("create: no ETag or Last-Modified: %v", r.h)
	}
	ts.fails(ts.do("PUT", "/cprops?restype=container", ""), 409, "ContainerAlreadyExists", "create again")
	ts.fails(ts.do("PUT", "/cbad?restype=container", "", "x-ms-blob-public-access", "public"), 400, "InvalidHeaderValue", "bad public access")
	ts.fails(ts.do("PUT", "/ab?restype=container", ""), 400, "OutOfRangeInput", "name too short")

	r = ts.ok(ts.do("GET", "/cprops?restype=container", ""), 200, "properties")
	for k, v := range map[string]string{
		"Etag": etag, "x-ms-meta-Owner": "me", "x-ms-lease-status": "unlocked", "x-ms-lease-state": "available",
		"x-ms-blob-public-access": "blob", "x-ms-has-immutability-policy": "false", "x-ms-has-legal-hold": "false",
		"x-ms-default-encryption-scope": "$account-encryption-key", "x-ms-deny-encryption-scope-override": "false",
	} {
		if got := r.h.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("properties: %s = %q, want %q", k, got, v)
		}
	}
	if _, ok := r.h["X-Ms-Lease-Duration"]; ok {
		t.Errorf("x-ms-lease-duration on a container without a lease")
	}
	ts.fails(ts.do("GET", "/nosuch?restype=container", ""), 404, "ContainerNotFound", "missing")
	ts.fails(ts.do("HEAD", "/nosuch?restype=container", ""), 404, "ContainerNotFound", "HEAD missing")
	ts.fails(ts.do("GET", "/cprops?restype=container", "", "x-ms-lease-id", leaseA), 412, "LeaseIdMismatchWithContainerOperation", "lease id on an unleased container")

	// A private container shows no x-ms-blob-public-access.
	ts.container("cpriv")
	if r := ts.ok(ts.do("GET", "/cpriv?restype=container", ""), 200, "private"); r.h.Get("x-ms-blob-public-access") != "" {
		t.Errorf("private container: x-ms-blob-public-access %q", r.hdr("x-ms-blob-public-access"))
	}

	// Set Container Metadata: only If-Modified-Since.
	for _, c := range []h{{"If-Match", etag}, {"If-None-Match", "*"}, {"If-Unmodified-Since", time.Now().UTC().Format(http.TimeFormat)}} {
		ts.fails(ts.do("PUT", "/cprops?restype=container&comp=metadata", "", c...), 400, "UnsupportedHeader", "set metadata with "+c[0])
	}
	ts.fails(ts.do("PUT", "/cprops?restype=container&comp=metadata", "", "If-Modified-Since", "yesterday"), 400, "InvalidHeaderValue", "unparsable date")
	ts.fails(ts.do("PUT", "/cprops?restype=container&comp=metadata", "", "If-Modified-Since", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)), 412, "ConditionNotMet", "not modified since")
	r = ts.ok(ts.do("PUT", "/cprops?restype=container&comp=metadata", "", "x-ms-meta-b", "2", "If-Modified-Since", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)), 200, "set metadata")
	if r.hdr("Etag") == "" || r.hdr("Etag") == etag {
		t.Errorf("set metadata: ETag %q (before %q)", r.hdr("Etag"), etag)
	}
	r = ts.ok(ts.do("GET", "/cprops?restype=container&comp=metadata", ""), 200, "get metadata")
	if r.hdr("x-ms-meta-b") != "2" || r.hdr("x-ms-meta-Owner") != "" {
		t.Errorf("metadata not replaced: %v", r.h)
	}
	ts.fails(ts.do("PUT", "/cprops?restype=container&comp=metadata", "", "x-ms-meta-1a", "x"), 400, "InvalidMetadata", "bad metadata name")

	// Delete Container: If-Match and If-None-Match are not supported; the dates are.
	ts.fails(ts.do("DELETE", "/cprops?restype=container", "", "If-Match", "*"), 400, "UnsupportedHeader", "delete with If-Match")
	ts.fails(ts.do("DELETE", "/cprops?restype=container", "", "If-None-Match", `"x"`), 400, "UnsupportedHeader", "delete with If-None-Match")
	ts.fails(ts.do("DELETE", "/cprops?restype=container", "", "If-Unmodified-Since", "nonsense"), 400, "InvalidHeaderValue", "delete with a bad date")
	ts.fails(ts.do("DELETE", "/cprops?restype=container", "", "If-Unmodified-Since", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)), 412, "ConditionNotMet", "delete, modified since")
	r = ts.ok(ts.do("DELETE", "/cprops?restype=container", ""), 202, "delete")
	if r.body != "" {
		t.Errorf("delete: body %q", r.body)
	}
	ts.fails(ts.do("DELETE", "/cprops?restype=container", ""), 404, "ContainerNotFound", "delete again")
}

// Container leases: each action's status and headers, and the header checks of a lease call.
func TestContainerLease(t *testing.T) {
	ts := newTestServer(t)
	ts.container("clease")
	lease := func(hv ...string) reply {
		return ts.do("PUT", "/clease?restype=container&comp=lease", "", hv...)
	}
	ts.fails(lease(), 400, "MissingRequiredHeader", "no action")
	ts.fails(lease("x-ms-lease-action", "acquire"), 400, "InvalidHeaderValue", "acquire without a duration")
	ts.fails(lease("x-ms-lease-action", "acquire", "x-ms-lease-duration", "x"), 400, "InvalidHeaderValue", "acquire, duration not a number")
	ts.fails(lease("x-ms-lease-action", "acquire", "x-ms-lease-duration", "14"), 400, "InvalidHeaderValue", "acquire for 14 s")
	ts.fails(lease("x-ms-lease-action", "acquire", "x-ms-lease-duration", "61"), 400, "InvalidHeaderValue", "acquire for 61 s")
	ts.fails(lease("x-ms-lease-action", "bogus"), 400, "InvalidHeaderValue", "unknown action")
	ts.fails(lease("x-ms-lease-action", "break", "x-ms-lease-break-period", "61"), 400, "InvalidHeaderValue", "break period 61")
	ts.fails(lease("x-ms-lease-action", "break", "x-ms-lease-break-period", "-1"), 400, "InvalidHeaderValue", "break period -1")
	ts.fails(lease("x-ms-lease-action", "break", "x-ms-lease-break-period", "soon"), 400, "InvalidHeaderValue", "break period not a number")
	for _, a := range []string{"renew", "release", "change"} {
		ts.fails(lease("x-ms-lease-action", a), 400, "MissingRequiredHeader", a+" without an id")
	}
	ts.fails(lease("x-ms-lease-action", "change", "x-ms-lease-id", leaseA), 400, "MissingRequiredHeader", "change without a proposed id")
	ts.fails(lease("x-ms-lease-action", "break", "x-ms-lease-break-period", "0"), 409, "LeaseNotPresentWithLeaseOperation", "break without a lease")

	r := ts.ok(lease("x-ms-lease-action", "acquire", "x-ms-lease-duration", "60", "x-ms-proposed-lease-id", leaseA), 201, "acquire")
	if r.hdr("x-ms-lease-id") != leaseA || r.hdr("Etag") == "" || r.hdr("Last-Modified") == "" {
		t.Errorf("acquire: %v", r.h)
	}
	r = ts.ok(ts.do("GET", "/clease?restype=container", ""), 200, "properties while leased")
	if r.hdr("x-ms-lease-state") != "leased" || r.hdr("x-ms-lease-status") != "locked" || r.hdr("x-ms-lease-duration") != "fixed" {
		t.Errorf("leased container: %v", r.h)
	}
	ts.ok(ts.do("GET", "/clease?restype=container", "", "x-ms-lease-id", leaseA), 200, "properties with the lease id")
	ts.fails(ts.do("GET", "/clease?restype=container", "", "x-ms-lease-id", leaseB), 412, "LeaseIdMismatchWithContainerOperation", "properties with another lease id")
	// A lease call ignores x-ms-lease-id as a condition: it is the lease's own id.
	r = ts.ok(lease("x-ms-lease-action", "renew", "x-ms-lease-id", leaseA), 200, "renew")
	if r.hdr("x-ms-lease-id") != leaseA {
		t.Errorf("renew: lease id %q", r.hdr("x-ms-lease-id"))
	}
	r = ts.ok(lease("x-ms-lease-action", "change", "x-ms-lease-id", leaseA, "x-ms-proposed-lease-id", leaseB), 200, "change")
	if r.hdr("x-ms-lease-id") != leaseB {
		t.Errorf("change: lease id %q", r.hdr("x-ms-lease-id"))
	}
	ts.fails(ts.do("DELETE", "/clease?restype=container", ""), 412, "LeaseIdMissing", "delete a leased container without the id")
	ts.fails(ts.do("DELETE", "/clease?restype=container", "", "x-ms-lease-id", leaseA), 412, "LeaseIdMismatchWithContainerOperation", "delete with another id")
	r = ts.ok(lease("x-ms-lease-action", "break", "x-ms-lease-break-period", "60"), 202, "break")
	if r.hdr("x-ms-lease-time") == "" || r.hdr("x-ms-lease-id") != "" {
		t.Errorf("break: %v", r.h)
	}
	r = ts.ok(lease("x-ms-lease-action", "break", "x-ms-lease-break-period", "0"), 202, "break now")
	if r.hdr("x-ms-lease-time") != "0" {
		t.Errorf("break now: x-ms-lease-time %q", r.hdr("x-ms-lease-time"))
	}
	r = ts.ok(ts.do("HEAD", "/clease?restype=container", ""), 200, "properties when broken")
	if r.hdr("x-ms-lease-state") != "broken" || r.hdr("x-ms-lease-status") != "unlocked" || r.h.Get("x-ms-lease-duration") != "" {
		t.Errorf("broken container: %v", r.h)
	}
	r = ts.ok(lease("x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1"), 201, "acquire with a generated id")
	id := r.hdr("x-ms-lease-id")
	if len(id) != 36 {
		t.Errorf("generated lease id %q", id)
	}
	if r := ts.ok(ts.do("GET", "/clease?restype=container", ""), 200, "infinite"); r.hdr("x-ms-lease-duration") != "infinite" {
		t.Errorf("infinite lease: duration %q", r.hdr("x-ms-lease-duration"))
	}
	// Lease calls take the date conditions.
	ts.fails(lease("x-ms-lease-action", "release", "x-ms-lease-id", id, "If-Modified-Since", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)), 412, "ConditionNotMet", "release, not modified since")
	r = ts.ok(lease("x-ms-lease-action", "release", "x-ms-lease-id", id), 200, "release")
	if r.hdr("x-ms-lease-id") != "" {
		t.Errorf("release: lease id %q", r.hdr("x-ms-lease-id"))
	}
	// Without a break period an infinite lease breaks at once.
	ts.ok(lease("x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1"), 201, "acquire again")
	r = ts.ok(lease("x-ms-lease-action", "break"), 202, "break an infinite lease")
	if r.hdr("x-ms-lease-time") != "0" {
		t.Errorf("break an infinite lease: x-ms-lease-time %q", r.hdr("x-ms-lease-time"))
	}
	if r := ts.ok(ts.do("GET", "/clease?restype=container", ""), 200, "after the break"); r.hdr("x-ms-lease-state") != "broken" {
		t.Errorf("after the break: lease state %q", r.hdr("x-ms-lease-state"))
	}
	ts.ok(ts.do("DELETE", "/clease?restype=container", ""), 202, "delete after the break")
}

// Get and Set Container ACL: the public access level and the policies round-trip; the body
// is bounded at 64 KiB, with or without a Content-Length.
func TestContainerACL(t *testing.T) {
	ts := newTestServer(t)
	ts.container("cacl")
	acl := `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>p1</Id><AccessPolicy><Start>2024-01-01T00:00:00Z</Start><Expiry>2030-01-01T00:00:00Z</Expiry><Permission>rl</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	r := ts.ok(ts.do("PUT", "/cacl?restype=container&comp=acl", acl, "x-ms-blob-public-access", "container"), 200, "set ACL")
	etag := r.hdr("Etag")
	r = ts.ok(ts.do("GET", "/cacl?restype=container&comp=acl", ""), 200, "get ACL")
	if r.hdr("x-ms-blob-public-access") != "container" || r.hdr("Etag") != etag || r.hdr("Content-Type") != "application/xml" ||
		!strings.Contains(r.body, "<Id>p1</Id>") || !strings.Contains(r.body, "<Permission>rl</Permission>") {
		t.Errorf("get ACL: %s %v", r, r.h)
	}
	r = ts.ok(ts.do("HEAD", "/cacl?restype=container&comp=acl", ""), 200, "HEAD ACL")
	if r.body != "" || r.hdr("x-ms-blob-public-access") != "container" {
		t.Errorf("HEAD ACL: %s", r)
	}
	// Without the header the container becomes private; an empty body clears the policies.
	ts.ok(ts.do("PUT", "/cacl?restype=container&comp=acl", ""), 200, "clear ACL")
	r = ts.ok(ts.do("GET", "/cacl?restype=container&comp=acl", ""), 200, "get cleared ACL")
	if _, ok := r.h["X-Ms-Blob-Public-Access"]; ok || strings.Contains(r.body, "<Id>") {
		t.Errorf("cleared ACL: %s %v", r, r.h)
	}
	ts.fails(ts.do("PUT", "/cacl?restype=container&comp=acl", "<SignedIdentifiers><x/>"), 400, "InvalidXmlDocument", "bad ACL")
	ts.fails(ts.do("PUT", "/cacl?restype=container&comp=acl", "", "x-ms-blob-public-access", "everyone"), 400, "InvalidHeaderValue", "bad public access")
	ts.fails(ts.do("PUT", "/cacl?restype=container&comp=acl", "", "If-Unmodified-Since", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)), 412, "ConditionNotMet", "set ACL, modified since")
	ts.fails(ts.do("PUT", "/cacl?restype=container&comp=acl", "", "If-Unmodified-Since", "no date"), 400, "InvalidHeaderValue", "set ACL, bad date")
	ts.fails(ts.do("GET", "/nosuch?restype=container&comp=acl", ""), 404, "ContainerNotFound", "ACL of a missing container")

	// 64 KiB exactly is read (and parsed); one byte more is 413, sent with or without a length.
	atLimit := acl[:len(acl)-len("</SignedIdentifiers>")] + strings.Repeat(" ", 64<<10-len(acl)) + "</SignedIdentifiers>"
	if len(atLimit) != 64<<10 {
		t.Fatalf("body of %d bytes", len(atLimit))
	}
	for _, chunked := range []bool{false, true} {
		var hv []string
		if chunked {
			hv = []string{"Transfer-Encoding", "chunked"}
		}
		ts.ok(ts.do("PUT", "/cacl?restype=container&comp=acl", atLimit, hv...), 200, fmt.Sprintf("ACL of 64 KiB (chunked %v)", chunked))
		ts.fails(ts.do("PUT", "/cacl?restype=container&comp=acl", atLimit+" ", hv...), 413, "RequestBodyTooLarge", fmt.Sprintf("ACL of 64 KiB + 1 (chunked %v)", chunked))
	}
}

// head sends a signed request's line and headers, declaring a body of length bytes of which
// it sends only the first 8 KiB (what fasthttp reads before it calls the handler), and reads
// the answer: for the checks a server makes before it reads a body.
func (ts *testServer) head(method, target string, length int64, hv ...string) reply {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.base+target, nil)
	if err != nil {
		ts.t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2021-12-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for i := 0; i+1 < len(hv); i += 2 {
		if hv[i+1] == "" {
			req.Header.Del(hv[i])
			continue
		}
		req.Header.Set(hv[i], hv[i+1])
	}
	req.Header.Set("Content-Length", fmt.Sprint(length))
	rawPath, rawQuery := auth.SplitRequestURI(req.URL.RequestURI())
	req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKey, auth.RequestInfo{
		Method: method, RawPath: rawPath, RawQuery: rawQuery, Header: auth.HTTPHeader(req.Header),
		Account: devAccount, PathStyle: true, Service: auth.ServiceBlob,
	}, auth.DevAccount().Keys[0]))
	conn, err := net.Dial("tcp", req.URL.Host)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer conn.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, req.URL.RequestURI(), req.URL.Host)
	for k, vs := range req.Header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, vs[0])
	}
	b.WriteString("\r\n")
	b.WriteString(strings.Repeat("b", int(min(length, 8<<10))))
	if _, err := io.WriteString(conn, b.String()); err != nil {
		ts.t.Fatal(err)
	}
	// A server that waits for the rest of the body instead of answering would hang the
	// test: the deadline turns that into a failure (a hang detector, not a timing check).
	conn.SetDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		ts.t.Fatalf("%s %s with a body of %d bytes: no answer before the body was sent: %v", method, target, length, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return reply{code: resp.StatusCode, h: resp.Header, body: string(body), close: resp.Close}
}

// Put Blob's and Put Block's size limits by x-ms-version, exactly at each limit and one byte
// past it: a body at the limit goes on to the next check (here: the container is missing,
// or the blob's MD5 header is bad), one byte more is 413 before any of it is read.
func TestBodyLimitsByVersion(t *testing.T) {
	ts := newTestServer(t)
	ts.container("lim")
	const mib = 1 << 20
	for _, c := range []struct {
		version string
		blob    int64
		block   int64
	}{
		{"", 5000 * mib, 4000 * mib}, // no x-ms-version: the newest limits
		{"2021-12-02", 5000 * mib, 4000 * mib},
		{"2019-12-12", 5000 * mib, 4000 * mib},
		{"2019-07-07", 256 * mib, 100 * mib},
		{"2016-05-31", 256 * mib, 100 * mib},
		{"2015-12-11", 64 * mib, 4 * mib},
	} {
		v := []string{"x-ms-version", c.version, "x-ms-blob-type", "BlockBlob"}
		ts.fails(ts.head("PUT", "/nosuch/b", c.blob, v...), 404, "ContainerNotFound", "Put Blob at the limit, "+c.version)
		ts.fails(ts.head("PUT", "/lim/b", c.blob, append(v, "x-ms-blob-content-md5", "bad")...), 400, "InvalidHeaderValue", "Put Blob at the limit, bad MD5, "+c.version)
		ts.fails(ts.head("PUT", "/lim/b", c.blob+1, v...), 413, "RequestBodyTooLarge", "Put Blob past the limit, "+c.version)
		ts.fails(ts.head("PUT", "/nosuch/b?comp=block&blockid=QUFB", c.block, v...), 404, "ContainerNotFound", "Put Block at the limit, "+c.version)
		ts.fails(ts.head("PUT", "/lim/b?comp=block&blockid=QUFB", c.block+1, v...), 413, "RequestBodyTooLarge", "Put Block past the limit, "+c.version)
	}
}
