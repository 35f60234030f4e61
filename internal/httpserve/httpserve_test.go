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

// rawStatus sends raw bytes on a new connection and returns the status line of the answer
// and whether the server closed the connection after it.
func rawStatus(t *testing.T, addr, raw string) (string, bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	resp.Body.Close()
	return resp.Status, resp.Close
}

// TestHeaderFraming: RFC 9112 requires 400 for whitespace between a header name and its
// colon (or inside the name) and for obsolete line folding; a proxy in front may read such
// a request differently (request smuggling). Well-formed requests, with whitespace inside
// values, pass.
func TestHeaderFraming(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// fasthttp's own refusals (whitespace before a colon) go to its default error handler.
	s := &Server{HTTP: &fasthttp.Server{Handler: func(fc *fasthttp.RequestCtx) { fc.SetBodyString("ok") }, Logger: quietLogger{}}}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		_ = s.Shutdown(context.Background())
		<-served
	})
	addr := ln.Addr().String()
	head := "GET / HTTP/1.1\r\nHost: x\r\n"
	bad := map[string]string{
		"space before colon":        head + "X-Foo : bar\r\n\r\n",
		"tab before colon":          head + "X-Foo\t: bar\r\n\r\n",
		"space before colon, CL":    "POST / HTTP/1.1\r\nHost: x\r\nContent-Length : 5\r\n\r\nhello",
		"space inside name":         head + "X Foo: bar\r\n\r\n",
		"obs-fold with space":       head + "X-Foo: bar\r\n baz\r\n\r\n",
		"obs-fold with tab":         head + "X-Foo: bar\r\n\tbaz\r\n\r\n",
		"folded Transfer-Encoding":  "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\n chunked\r\n\r\n0\r\n\r\n",
		"folded line with a colon":  head + "X-Foo: bar\r\n X-Bar: baz\r\n\r\n",
		"first header line is fold": "GET / HTTP/1.1\r\n X-Foo: bar\r\nHost: x\r\n\r\n",
	}
	for name, raw := range bad {
		status, closed := rawStatus(t, addr, raw)
		if !strings.HasPrefix(status, "400") || !closed {
			t.Errorf("%s: %s (closed %v), want 400 and the connection closed", name, status, closed)
		}
	}
	for name, raw := range map[string]string{
		"plain":                head + "X-Foo: bar\r\n\r\n",
		"spaces in values":     head + "X-Foo:  a b\t c \r\nUser-Agent: Go x (y; z)\r\n\r\n",
		"colon in the value":   head + "X-Foo: a:b: c\r\n\r\n",
		"no space after colon": head + "X-Foo:bar\r\n\r\n",
	} {
		if status, _ := rawStatus(t, addr, raw); !strings.HasPrefix(status, "200") {
			t.Errorf("%s: %s, want 200", name, status)
		}
	}
}

func TestBadFraming(t *testing.T) {
	for raw, want := range map[string]bool{
		"":                              false,
		"Host: x\r\n\r\n":               false,
		"Host: x\r\nA: b c: d\r\n\r\n":  false,
		"Host: x\r\nA b: c\r\n\r\n":     true,
		"Host: x\r\nA: b\r\n c\r\n\r\n": true,
		"Host: x\r\nA\t: b\r\n\r\n":     true,
		"Host: x\nA: b\n\tc\n\n":        true,
		"Host: x\n\nA: b\n":             false, // an empty line
		"\n\tA":                         true,  // a fold after an empty first line
		"\n A: b":                       true,
	} {
		if got := badFraming([]byte(raw)); got != want {
			t.Errorf("badFraming(%q) = %v, want %v", raw, got, want)
		}
	}
}

// quietLogger drops fasthttp's connection-level messages.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// FuzzBadFraming: badFraming agrees with a plain line-by-line reading of the rule.
func FuzzBadFraming(f *testing.F) {
	for _, s := range []string{"Host: x\r\n\r\n", "A b: c\r\n", "A: b\r\n c\r\n", "\tA: b\n", ":\n ", "A: b:c d\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		want := false
		for _, line := range strings.Split(raw, "\n") {
			if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
				want = true
			}
			if name, _, ok := strings.Cut(line, ":"); ok && name != "" && strings.ContainsAny(name, " \t") {
				want = true
			}
		}
		if got := badFraming([]byte(raw)); got != want {
			t.Fatalf("badFraming(%q) = %v, want %v", raw, got, want)
		}
	})
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
