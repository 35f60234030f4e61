package e2e

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/tablo/tablo/internal/auth"
)

// Wire details the SDKs hide: HEAD carries Content-Length and no body, errors on HEAD and
// 304s have no body, a range past the end is 416 with Content-Range: bytes */size, names
// with %2F and / are one blob. Anonymous requests on a public container keep them unsigned.
func TestBlobWireDetails(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	if _, err := c.CreateContainer(ctx, "raw", &azblob.CreateContainerOptions{Access: to.Ptr(container.PublicAccessTypeContainer)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "raw", "d/x.txt", []byte("0123456789"), nil); err != nil {
		t.Fatal(err)
	}
	do := func(method, path string, hdr ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.blobEndpoint()+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	r, body := do("HEAD", "/raw/d%2Fx.txt")
	if r.StatusCode != 200 || r.ContentLength != 10 || body != "" || r.Header.Get("x-ms-blob-type") != "BlockBlob" {
		t.Errorf("HEAD: %d len %d body %q", r.StatusCode, r.ContentLength, body)
	}
	r, body = do("HEAD", "/raw/missing")
	if r.StatusCode != 404 || r.Header.Get("x-ms-error-code") != "BlobNotFound" || body != "" {
		t.Errorf("HEAD missing: %d %q %q", r.StatusCode, r.Header.Get("x-ms-error-code"), body)
	}
	r, body = do("GET", "/raw/d/x.txt", "x-ms-range", "bytes=20-30")
	if r.StatusCode != 416 || r.Header.Get("Content-Range") != "bytes */10" || r.Header.Get("x-ms-error-code") != "InvalidRange" {
		t.Errorf("range past the end: %d %q %q", r.StatusCode, r.Header.Get("Content-Range"), body)
	}
	r, body = do("GET", "/raw/d/x.txt", "x-ms-range", "bytes=2-4", "x-ms-range-get-content-md5", "true")
	if r.StatusCode != 206 || body != "234" || r.Header.Get("Content-Md5") == "" || r.Header.Get("Content-Range") != "bytes 2-4/10" {
		t.Errorf("ranged md5: %d %q %v", r.StatusCode, body, r.Header)
	}
	etag := r.Header.Get("Etag")
	r, body = do("GET", "/raw/d/x.txt", "If-None-Match", etag)
	if r.StatusCode != 304 || body != "" {
		t.Errorf("If-None-Match: %d %q", r.StatusCode, body)
	}
	r, _ = do("GET", "/raw/d/x.txt", "If-Match", `"0x1"`)
	if r.StatusCode != 412 {
		t.Errorf("If-Match on read: %d", r.StatusCode)
	}
	r, body = do("GET", "/raw?restype=container&comp=list&include=")
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/xml" {
		t.Errorf("anonymous list of a public container: %d %s", r.StatusCode, body)
	}
	r, _ = do("PUT", "/raw/new", "x-ms-blob-type", "BlockBlob")
	if r.StatusCode != 404 || r.Header.Get("x-ms-error-code") != "ResourceNotFound" {
		t.Errorf("anonymous write: %d %s", r.StatusCode, r.Header.Get("x-ms-error-code"))
	}
}

func TestBlobServiceProperties(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	svc := blobClient(t, ts).ServiceClient()
	_, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{
		DefaultServiceVersion: to.Ptr("2021-12-02"),
		DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))},
		StaticWebsite:         &service.StaticWebsite{Enabled: to.Ptr(true), IndexDocument: to.Ptr("index.html"), ErrorDocument404Path: to.Ptr("404.html")},
		CORS:                  []*service.CORSRule{{AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("GET"), MaxAgeInSeconds: to.Ptr(int32(60))}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *p.DefaultServiceVersion != "2021-12-02" || !*p.DeleteRetentionPolicy.Enabled || *p.DeleteRetentionPolicy.Days != 7 || !*p.StaticWebsite.Enabled || *p.StaticWebsite.IndexDocument != "index.html" || len(p.CORS) != 1 {
		t.Errorf("service properties did not round-trip: %+v", p)
	}
	// A partial update leaves the other sections.
	if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(false)}}); err != nil {
		t.Fatal(err)
	}
	p, _ = svc.GetProperties(ctx, nil)
	if *p.DeleteRetentionPolicy.Enabled || !*p.StaticWebsite.Enabled {
		t.Errorf("partial update: %+v %+v", p.DeleteRetentionPolicy, p.StaticWebsite)
	}
	info, err := svc.GetAccountInfo(ctx, nil)
	if err != nil || *info.AccountKind != "StorageV2" {
		t.Errorf("account info: %v", err)
	}
}

// A Blob request dated further than 15 minutes from the server's clock is refused, as Azure
// refuses it; one dated now passes.
func TestBlobRequestDateWindow(t *testing.T) {
	ts := startServer(t)
	try := func(date time.Time) int {
		req, _ := http.NewRequest("GET", ts.blobEndpoint()+"/?comp=list", nil)
		req.Header.Set("x-ms-version", "2021-12-02")
		req.Header.Set("x-ms-date", date.UTC().Format(http.TimeFormat))
		info := auth.RequestInfo{Method: "GET", RawPath: req.URL.EscapedPath(), RawQuery: req.URL.RawQuery, Header: auth.HTTPHeader(req.Header), Account: devAccount, PathStyle: true, Service: auth.ServiceBlob}
		req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKey, info, auth.DevAccount().Keys[0]))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := try(time.Now()); got != 200 {
		t.Errorf("request dated now: %d", got)
	}
	if got := try(time.Now().Add(-20 * time.Minute)); got != 403 {
		t.Errorf("request dated 20 minutes ago: %d, want 403", got)
	}
}

// signedBlobDo sends a Shared Key request of the dev account to the Blob service.
func signedBlobDo(t *testing.T, ts *testServer, method, path string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.blobEndpoint()+path, nil)
	req.Header.Set("x-ms-version", "2021-12-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	info := auth.RequestInfo{Method: method, RawPath: req.URL.EscapedPath(), RawQuery: req.URL.RawQuery, Header: auth.HTTPHeader(req.Header), Account: devAccount, PathStyle: true, Service: auth.ServiceBlob}
	req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKey, info, auth.DevAccount().Keys[0]))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// What the JavaScript SDK revealed: it parses Get Container ACL strictly (a second XML
// declaration fails it), and it sends "x-ms-range: bytes=0-" on every Get Page Ranges, which
// Azure answers with the ranges to the blob's end.
func TestBlobWireAsJavaScriptSends(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	if _, err := c.CreateContainer(ctx, "jswire", nil); err != nil {
		t.Fatal(err)
	}
	r, body := signedBlobDo(t, ts, "GET", "/jswire?restype=container&comp=acl")
	if r.StatusCode != 200 || strings.Count(body, "<?xml") != 1 || !strings.HasPrefix(body, "<?xml") {
		t.Errorf("Get Container ACL: %d %q, want one XML declaration", r.StatusCode, body)
	}
	pb := c.ServiceClient().NewContainerClient("jswire").NewPageBlobClient("disk.vhd")
	if _, err := pb.Create(ctx, 4096, nil); err != nil {
		t.Fatal(err)
	}
	page := bytes.Repeat([]byte{7}, 512)
	if _, err := pb.UploadPages(ctx, streaming.NopCloser(bytes.NewReader(page)), blob.HTTPRange{Offset: 512, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	want := "<PageRange><Start>512</Start><End>1023</End></PageRange>"
	for _, rng := range []string{"bytes=0-", "bytes=512-", "bytes=0-4095"} {
		r, body = signedBlobDo(t, ts, "GET", "/jswire/disk.vhd?comp=pagelist", "x-ms-range", rng)
		if r.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("Get Page Ranges with %s: %d %s", rng, r.StatusCode, body)
		}
	}
	r, body = signedBlobDo(t, ts, "GET", "/jswire/disk.vhd?comp=pagelist", "x-ms-range", "bytes=1024-")
	if r.StatusCode != 200 || strings.Contains(body, "<PageRange>") {
		t.Errorf("Get Page Ranges past the written page: %d %s", r.StatusCode, body)
	}
}

// A chunked request body that the operation does not read (an empty one on Create Container,
// as Go's http client sends for a non-nil empty body) must not be parsed as the next request
// on the connection: the answer to the first request is the only one, not followed by a 400.
func TestBlobChunkedBodyKeepsConnectionInStep(t *testing.T) {
	ts := startServer(t)
	conn, err := net.Dial("tcp", ts.app.ServiceAddr("blob").String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "PUT /"+devAccount+"/chunked?restype=container HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"+
		"GET /"+devAccount+"/chunked?restype=container HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	out, _ := io.ReadAll(conn)
	if strings.Contains(string(out), "400 Bad Request") || !strings.HasPrefix(string(out), "HTTP/1.1 404") {
		t.Fatalf("answers:\n%s", out)
	}
}
