package httpserve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestForcedShutdownAfterServedRequests: when the deadline passes with a stalled client
// (half a request sent), Shutdown closes it and returns ErrForcedClose once no handler is
// running; requests served before do not count as running.
func TestForcedShutdownAfterServedRequests(t *testing.T) {
	s, addr := start(t, false)
	for range 2 {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	stalled, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if _, err := stalled.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the server start reading it
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrForcedClose) {
			t.Fatalf("Shutdown: %v, want ErrForcedClose", err)
		}
	case <-time.After(30 * time.Second): // a hang detector, not a timing assertion
		t.Fatal("Shutdown still waiting for handlers after every request was answered")
	}
	if _, err := stalled.Read(make([]byte, 1)); err == nil {
		t.Fatal("the stalled connection is still open")
	}
}
