package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/server"
)

// startHTTP serves h on a loopback port until the test ends.
func startHTTP(t *testing.T, h *server.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := h.NewHTTPServer()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	t.Cleanup(func() {
		_ = hs.Shutdown(context.Background())
		<-served
	})
	return ln.Addr().String()
}

// TestOversizedBodyAnswered: a body over the server's limit, announced or chunked, is
// answered with Azure's RequestBodyTooLarge, which the Go client reads instead of failing on
// a connection reset while it is still sending.
func TestOversizedBodyAnswered(t *testing.T) {
	addr := startHTTP(t, newBenchServer(t))
	body := strings.Repeat("x", 6<<20)
	for _, chunked := range []bool{false, true} {
		var rd io.Reader = strings.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // hides the length: the client sends it chunked
		}
		resp, err := http.Post("http://"+addr+"/devstoreaccount1/$batch", "multipart/mixed; boundary=b", rd)
		if err != nil {
			t.Fatalf("chunked=%v: no answer: %v", chunked, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 413 || resp.Header.Get("x-ms-error-code") != "RequestBodyTooLarge" {
			t.Errorf("chunked=%v: %d %q", chunked, resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
	}
}

// TestLongURL: a request line of ~18 KiB (two 1 KiB keys of three-byte characters,
// percent-encoded) is read; one beyond the read buffer is 431, not a hang.
func TestLongURL(t *testing.T) {
	addr := startHTTP(t, newBenchServer(t))
	key := strings.Repeat("%E4%B8%AD", 1024)
	get := func(path string) int {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r := signed("GET", path, "", nil)
		r.Host = addr
		// A write error is expected once the server has refused an oversized header; the
		// answer must still arrive.
		_ = r.Write(c)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), r)
		if err != nil {
			t.Fatalf("no answer to a URL of %d bytes: %v", len(path), err)
		}
		return resp.StatusCode
	}
	if code := get("/devstoreaccount1/bench(PartitionKey='" + key + "',RowKey='" + key + "')"); code != 404 {
		t.Errorf("entity URL of two 1 KiB keys: %d, want 404 (ResourceNotFound)", code)
	}
	long := strings.Repeat(key, 2)
	if code := get("/devstoreaccount1/bench(PartitionKey='" + long + "',RowKey='" + long + "')"); code != 431 {
		t.Errorf("request line over the read buffer: %d, want 431", code)
	}
}

// roundTrip writes raw requests on one connection and reads one response per request.
func roundTrip(t *testing.T, addr string, reqs ...*http.Request) []*http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, r := range reqs { // all written before any is read: pipelined
		r.Host = addr
		if err := r.Write(c); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	var out []*http.Response
	for _, r := range reqs {
		resp, err := http.ReadResponse(br, r)
		if err != nil {
			t.Fatalf("%s %s: %v", r.Method, r.URL.Path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		out = append(out, resp)
	}
	return out
}

// TestHTTPWire: what the HTTP layer itself must get right for Azure clients. HEAD answers
// GET's headers without the body, pipelined requests are answered in order on one
// connection, Expect: 100-continue gets its interim answer before the body is sent, and every
// answer names the server and carries a Date.
func TestHTTPWire(t *testing.T) {
	addr := startHTTP(t, newBenchServer(t))
	acl := "/devstoreaccount1/bench?comp=acl"
	resps := roundTrip(t, addr,
		signed("GET", acl, "", nil),
		signed("HEAD", acl, "", nil),
		signed("GET", "/devstoreaccount1/Tables", "", nil))
	get, head, tables := resps[0], resps[1], resps[2]
	getBody, _ := io.ReadAll(get.Body)
	headBody, _ := io.ReadAll(head.Body)
	if get.StatusCode != 200 || head.StatusCode != 200 || len(getBody) == 0 || len(headBody) != 0 {
		t.Fatalf("GET %d (%d bytes), HEAD %d (%d bytes)", get.StatusCode, len(getBody), head.StatusCode, len(headBody))
	}
	if head.ContentLength != int64(len(getBody)) || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
		t.Errorf("HEAD Content-Length %d, Content-Type %q; GET %d bytes, %q", head.ContentLength, head.Header.Get("Content-Type"), len(getBody), get.Header.Get("Content-Type"))
	}
	if b, _ := io.ReadAll(tables.Body); tables.StatusCode != 200 || !strings.Contains(string(b), `"TableName":"bench"`) {
		t.Errorf("pipelined query tables: %d %s", tables.StatusCode, b)
	}
	for _, r := range resps {
		if r.Header.Get("Server") != "Tablo" || r.Header.Get("Date") == "" || r.Header.Get("X-Ms-Request-Id") == "" {
			t.Errorf("headers %v", r.Header)
		}
	}

	// Expect: 100-continue: the headers go first, the body only after the interim answer.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"PartitionKey":"p","RowKey":"continue"` + benchEntity
	r := signed("POST", "/devstoreaccount1/bench", body, map[string]string{"Prefer": "return-no-content"})
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nExpect: 100-continue\r\nContent-Length: %d\r\n", r.URL.RequestURI(), addr, len(body))
	for k, vs := range r.Header {
		fmt.Fprintf(c, "%s: %s\r\n", k, vs[0])
	}
	io.WriteString(c, "\r\n")
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("before the body: %q %v", line, err)
	}
	if _, err := br.ReadString('\n'); err != nil { // the blank line ending the interim answer
		t.Fatal(err)
	}
	io.WriteString(c, body)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("insert after 100-continue: %v %v", resp, err)
	}
}
