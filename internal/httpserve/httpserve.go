// Package httpserve runs a fasthttp.Server with what net/http did for us that fasthttp
// does not:
//
//   - Shutdown closes connections on which the client never sent a byte (an SDK's spare
//     keep-alive dial). fasthttp counts them as busy, so its own shutdown waits for them
//     until their read timeout.
//   - A request fasthttp refuses before the handler (a body over MaxRequestBodySize, a
//     header over the read buffer) is answered, and then the connection is drained before it
//     closes (Linger). Closing with unread data resets the connection, often before the
//     client has read the answer, so it would see "connection reset" instead of the error.
//   - Header framing RFC 9112 forbids and fasthttp accepts (obsolete line folding, a space
//     or tab in a header name) is refused with 400 and the connection closed, on every
//     server that runs here: a proxy in front may frame such a request differently
//     (request smuggling). fasthttp itself refuses whitespace between a name and its colon.
//
// The Table server and the benchmark's null server both run on it.
package httpserve

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// lingerTimeout bounds how long a refused connection is drained before it is closed, and
// lingerBytes how much of it.
const (
	lingerTimeout = time.Second
	lingerBytes   = 16 << 20
)

// Server serves HTTP/1.1 with HTTP (configured by the caller) on the listeners given to
// Serve.
type Server struct {
	HTTP *fasthttp.Server
	// TLS, when set before Serve, serves HTTPS with it.
	TLS   *tls.Config
	conns connSet
	// active counts handlers running, so that a forced shutdown can wait for them.
	active atomic.Int64
	// guard installs the framing check and the handler count in front of HTTP.Handler once,
	// whatever the number of listeners.
	guard sync.Once
}

// ErrForcedClose is returned (wrapped) by Shutdown when its deadline passed and connections
// still open were closed.
var ErrForcedClose = errors.New("shutdown deadline passed")

// Serve accepts connections on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.guard.Do(func() {
		h := refuseBadFraming(s.HTTP.Handler)
		s.HTTP.Handler = func(fc *fasthttp.RequestCtx) {
			s.active.Add(1)
			defer s.active.Add(-1)
			h(fc)
		}
	})
	var l net.Listener = &trackingListener{Listener: ln, set: &s.conns}
	if s.TLS != nil {
		l = tls.NewListener(l, s.TLS)
	}
	return s.HTTP.Serve(l)
}

// Shutdown stops accepting and lets requests in flight finish. When ctx ends first, it closes
// the connections still open (a stalled client, a slow upload), waits for handlers already
// running to return (every operation is bounded), and returns an error wrapping
// ErrForcedClose.
func (s *Server) Shutdown(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.HTTP.ShutdownWithContext(ctx) }()
	// fasthttp closes connections idle between requests itself; close the never-used ones
	// until it is done.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for {
		s.conns.closeUnused()
		select {
		case err = <-done:
			break wait
		case <-tick.C:
		}
	}
	if err == nil {
		return nil
	}
	n := s.conns.closeAll()
	for s.active.Load() > 0 {
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("%w: closed %d connections still open: %w", ErrForcedClose, n, err)
}

// Linger asks that fc's connection, when it closes, first be half-closed and drained (in the
// background, bounded), so that the client reads the answer rather than a reset. For an
// ErrorHandler: fasthttp closes the connection after a request it could not read. Plain TCP
// only: under TLS fc.Conn is the *tls.Conn, and the connection just closes.
func Linger(fc *fasthttp.RequestCtx) {
	if tc, ok := fc.Conn().(*trackedConn); ok {
		tc.linger.Store(true)
	}
}

// refuseBadFraming answers 400, and closes the connection, for a request whose header
// block uses obsolete line folding or has whitespace inside a header name; fasthttp joins
// folded lines and keeps such names, where RFC 9112 requires a 400.
func refuseBadFraming(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(fc *fasthttp.RequestCtx) {
		if badFraming(fc.Request.Header.RawHeaders()) {
			fc.Error("Bad Request: invalid header framing", fasthttp.StatusBadRequest)
			fc.SetConnectionClose() // after Error, which resets the response
			return
		}
		next(fc)
	}
}

// badFraming reports whether raw, the header lines of a request as received (after the
// request line), has a line starting with a space or tab (obs-fold) or a space or tab
// before a line's first colon (in the field name).
func badFraming(raw []byte) bool {
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			return true
		}
		if name, _, ok := bytes.Cut(line, []byte{':'}); ok && bytes.ContainsAny(name, " \t") {
			return true
		}
	}
	return false
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

// ReadFrom lets a buffered writer hand a whole reader to the connection: for an
// *os.File section (an *io.LimitedReader of one) the TCP connection sends it with sendfile,
// without copying the bytes through user space. The wrapper would otherwise hide it.
func (c *trackedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// Close closes the connection, lingering first if Linger asked for it.
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
			_, _ = io.Copy(io.Discard, io.LimitReader(tcp, lingerBytes))
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

// closeAll closes every connection and returns how many there were.
func (s *connSet) closeAll() int {
	s.mu.Lock()
	all := make([]*trackedConn, 0, len(s.conns))
	for c := range s.conns {
		all = append(all, c)
	}
	s.mu.Unlock()
	for _, c := range all {
		_ = c.Conn.Close()
	}
	return len(all)
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

// OpenConns is the number of client connections open now.
func (s *Server) OpenConns() int {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	return len(s.conns.conns)
}
