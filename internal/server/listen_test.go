package server_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/server"
)

// startHTTP serves h on a loopback port until the test ends.
func startHTTP(t *testing.T, h *server.Server) (*server.HTTPServer, string) {
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
	return hs, ln.Addr().String()
}

// TestShutdownClosesIdleAndUnusedConnections: a connection that never sent a request (a
// client's spare keep-alive dial) and one idle after a request do not hold shutdown up.
func TestShutdownClosesIdleAndUnusedConnections(t *testing.T) {
	hs, addr := startHTTP(t, newBenchServer(t))
	unused, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer unused.Close()
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	r := signed("GET", "/devstoreaccount1/Tables", "", nil)
	r.Host = addr
	if err := r.Write(idle); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(idle), r)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("query tables: %v %v", resp, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an unused and an idle connection: %v", err)
	}
	for _, c := range []net.Conn{unused, idle} {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("connection still open after shutdown")
		}
	}
}

// TestOversizedBodyAnswered: a body over the server's limit, announced or chunked, is
// answered with Azure's RequestBodyTooLarge, which the Go client reads instead of failing on
// a connection reset while it is still sending.
func TestOversizedBodyAnswered(t *testing.T) {
	_, addr := startHTTP(t, newBenchServer(t))
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
	_, addr := startHTTP(t, newBenchServer(t))
	key := strings.Repeat("%E4%B8%AD", 1024)
	get := func(path string) int {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r := signed("GET", path, "", nil)
		r.Host = addr
		if err := r.Write(c); err != nil {
			t.Fatal(err)
		}
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
