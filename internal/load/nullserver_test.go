package load

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestNullServerShutdown checks that NullServer returns once ctx ends although one connection
// is kept alive after a request and another never sent a byte (fasthttp counts that one as
// busy), and that both are closed.
func TestNullServerShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- NullServer(ctx, ln, NullConfig{EntitySize: 8}) }()

	used, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer used.Close()
	fmt.Fprint(used, "GET /acct/t(PartitionKey='a',RowKey='b') HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(used)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("status %d, close %v; want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	unused, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer unused.Close()

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("NullServer: %v", err)
	}
	for name, r := range map[string]io.Reader{"used": br, "unused": unused} {
		c := map[string]net.Conn{"used": used, "unused": unused}[name]
		_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a guard against hanging, not a timing check
		if n, err := r.Read(make([]byte, 1)); err == nil {
			t.Errorf("%s connection: read %d bytes after shutdown, want it closed", name, n)
		}
	}
}

// TestNullServerCancelledBeforeServe checks that a context that has already ended stops the
// server even if Serve has not registered the listener yet.
func TestNullServerCancelledBeforeServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := NullServer(ctx, ln, NullConfig{}); err != nil {
		t.Fatalf("NullServer: %v", err)
	}
}
