package httpserve

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// start serves a server answering every request "ok" (and requests it cannot read with 413,
// lingering when linger is set) until the test ends.
func start(t *testing.T, linger bool) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{HTTP: &fasthttp.Server{
		Handler:            func(fc *fasthttp.RequestCtx) { fc.SetBodyString("ok") },
		MaxRequestBodySize: 1 << 10,
		ErrorHandler: func(fc *fasthttp.RequestCtx, err error) {
			if linger {
				Linger(fc)
			}
			fc.Error(err.Error(), fasthttp.StatusRequestEntityTooLarge)
		},
		CloseOnShutdown: true,
	}}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		_ = s.Shutdown(context.Background())
		<-served
	})
	return s, ln.Addr().String()
}

// TestShutdownClosesIdleAndUnusedConnections: a connection that never sent a request (a
// client's spare keep-alive dial) and one idle after a request do not hold shutdown up, and
// both are closed.
func TestShutdownClosesIdleAndUnusedConnections(t *testing.T) {
	s, addr := start(t, false)
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
	fmt.Fprintf(idle, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("request: %v %v", resp, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an unused and an idle connection: %v", err)
	}
	for _, c := range []net.Conn{unused, idle} {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("connection still open after shutdown")
		}
	}
}

// TestLinger: the Go client, still sending a body the server refused, reads the refusal when
// the error handler asked for a lingering close. (Without Linger it usually reads a reset;
// that direction is not asserted, since it depends on timing.)
func TestLinger(t *testing.T) {
	_, addr := start(t, true)
	body := strings.Repeat("x", 6<<20)
	resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("status %d, want the error handler's 413", resp.StatusCode)
	}
}

// TestShutdownWaitsForRequestInFlight: a connection whose request is still being served is
// used, so closing the unused ones (as Shutdown does every 50 ms) leaves it alone, and
// Shutdown returns only after the answer went out.
func TestShutdownWaitsForRequestInFlight(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	s := &Server{HTTP: &fasthttp.Server{
		Handler: func(fc *fasthttp.RequestCtx) {
			close(entered)
			<-release
			fc.SetBodyString("done")
		},
		CloseOnShutdown: true,
	}}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	defer func() { <-served }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	<-entered
	s.conns.closeUnused()
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	close(release)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("request in flight during shutdown: %v %v", resp, err)
	}
	if err := <-shut; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}
