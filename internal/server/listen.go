package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/azerr"
)

// The HTTP layer is fasthttp rather than net/http: measured side by side with the same SDK
// client, a do-nothing handler costs about two thirds of net/http's CPU per request on
// fasthttp (net/http starts a goroutine and re-arms read deadlines per request to watch
// the connection while the handler runs), and point operations spend most of their CPU in
// the HTTP layer (docs/benchmarks.md). This file adds what net/http did for us and fasthttp
// does not: closing never-used connections on shutdown, and a lingering close after refusing
// a request it could not read (an oversized body or header), so that the client reads the
// refusal instead of a connection reset.

// readBufferSize bounds a request's line and headers. A URL naming two 1 KiB keys of
// three-byte characters, percent-encoded, is about 18 KiB.
const readBufferSize = 32 << 10

// lingerTimeout bounds how long a refused connection is drained before it is closed.
const lingerTimeout = time.Second

// HTTPServer serves a Server over HTTP/1.1 with keep-alive.
type HTTPServer struct {
	srv *fasthttp.Server
	// TLS, when set before Serve, serves HTTPS with it.
	TLS   *tls.Config
	conns connSet
}

// NewHTTPServer returns the HTTP server for s: bodies are read whole up to the largest the
// service accepts (a $batch), and a larger one gets Azure's error.
func (s *Server) NewHTTPServer() *HTTPServer {
	return &HTTPServer{srv: &fasthttp.Server{
		Handler:              s.Handle,
		ErrorHandler:         s.handleRequestError,
		Name:                 "Tablo",
		NoDefaultContentType: true, // a reply without a body has no Content-Type
		MaxRequestBodySize:   maxBatchBody,
		ReadBufferSize:       readBufferSize,
		ReadTimeout:          5 * time.Minute,
		WriteTimeout:         5 * time.Minute,
		IdleTimeout:          2 * time.Minute,
		CloseOnShutdown:      true,
		Logger:               fasthttpLogger{s.log},
	}}
}

// Serve accepts connections on ln until Shutdown.
func (h *HTTPServer) Serve(ln net.Listener) error {
	var l net.Listener = &trackingListener{Listener: ln, set: &h.conns}
	if h.TLS != nil {
		l = tls.NewListener(l, h.TLS)
	}
	return h.srv.Serve(l)
}

// Shutdown stops accepting, lets requests in flight finish and closes every connection,
// waiting up to ctx's deadline.
func (h *HTTPServer) Shutdown(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- h.srv.ShutdownWithContext(ctx) }()
	// fasthttp closes connections idle between requests, but counts a connection that never
	// sent a byte (a client's spare keep-alive dial) as busy: close those here.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		h.conns.closeUnused()
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
	}
}

// handleRequestError answers a request fasthttp could not read. A body over the server's
// limit gets Azure's RequestBodyTooLarge; other malformed requests get fasthttp's plain
// answers (400, 408, 431), as net/http would give.
func (s *Server) handleRequestError(fc *fasthttp.RequestCtx, err error) {
	// The client is likely still sending (the body, or the rest of an oversized header):
	// drain it after the answer, or closing with unread data would reset the connection
	// before the client reads the answer. (Plain TCP only: under TLS, fc.Conn is the
	// *tls.Conn, and the connection just closes.)
	if tc, ok := fc.Conn().(*trackedConn); ok {
		tc.linger.Store(true)
	}
	if !errors.Is(err, fasthttp.ErrBodyTooLarge) {
		var small *fasthttp.ErrSmallBuffer
		var ne net.Error
		switch {
		case errors.As(err, &small):
			fc.Error("Request header too large", fasthttp.StatusRequestHeaderFieldsTooLarge)
		case errors.As(err, &ne) && ne.Timeout():
			fc.Error("Request timeout", fasthttp.StatusRequestTimeout)
		default:
			fc.Error("Bad request", fasthttp.StatusBadRequest)
		}
		return
	}
	c := s.newCall(fc)
	s.setCommonHeaders(c)
	s.writeError(c, azerr.New(azerr.RequestBodyTooLarge))
	s.logRequest(c)
}

// trackingListener records its connections in a connSet.
type trackingListener struct {
	net.Listener
	set *connSet
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, set: l.set}
	l.set.add(tc)
	return tc, nil
}

// trackedConn notes whether the client ever sent a byte, and can close lingering.
type trackedConn struct {
	net.Conn
	set    *connSet
	used   atomic.Bool
	linger atomic.Bool
	once   sync.Once
}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.used.Load() {
		c.used.Store(true)
	}
	return n, err
}

// Close closes the connection; after a refused body it first half-closes and drains what
// the client still sends (bounded), in the background, as net/http does.
func (c *trackedConn) Close() error {
	var err error
	c.once.Do(func() {
		c.set.remove(c)
		tcp, ok := c.Conn.(*net.TCPConn)
		if !c.linger.Load() || !ok {
			err = c.Conn.Close()
			return
		}
		go func() {
			_ = tcp.CloseWrite()
			_ = tcp.SetReadDeadline(time.Now().Add(lingerTimeout))
			_, _ = io.Copy(io.Discard, io.LimitReader(tcp, 16<<20))
			_ = tcp.Close()
		}()
	})
	return err
}

// connSet is the set of open connections.
type connSet struct {
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

func (s *connSet) add(c *trackedConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		s.conns = map[*trackedConn]struct{}{}
	}
	s.conns[c] = struct{}{}
}

func (s *connSet) remove(c *trackedConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// closeUnused closes the connections on which the client never sent a byte.
func (s *connSet) closeUnused() {
	s.mu.Lock()
	var unused []*trackedConn
	for c := range s.conns {
		if !c.used.Load() {
			unused = append(unused, c)
		}
	}
	s.mu.Unlock()
	for _, c := range unused {
		_ = c.Conn.Close() // unblocks fasthttp's read; its own Close then removes c
	}
}

// fasthttpLogger sends fasthttp's own messages to the log. They are connection-level
// errors a client causes (resets, oversized bodies, timeouts), hence Info, not Warn.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Info("http", "msg", fmt.Sprintf(format, args...))
}
