package server

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/valyala/fasthttp"
)

// requestCtxFor returns a RequestCtx holding r as fasthttp reads it off the wire (r is
// written out and parsed back), on a connection from 127.0.0.1 that is TLS when useTLS.
func requestCtxFor(r *http.Request, useTLS bool) *fasthttp.RequestCtx {
	var wire bytes.Buffer
	if err := r.Write(&wire); err != nil {
		panic(err)
	}
	fc := &fasthttp.RequestCtx{}
	var conn net.Conn = plainConn{}
	if useTLS {
		conn = tlsConn{}
	}
	fc.Init2(conn, nil, false)
	if err := fc.Request.ReadLimitBody(bufio.NewReader(&wire), 64<<20); err != nil {
		panic(err)
	}
	return fc
}

// recordResponse copies fc's response, as it would go on the wire, into a recorder.
func recordResponse(fc *fasthttp.RequestCtx) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	var wire bytes.Buffer
	if _, err := fc.Response.WriteTo(&wire); err != nil {
		panic(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(&wire), nil)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		rec.Header()[k] = vs
	}
	rec.WriteHeader(resp.StatusCode)
	_, _ = rec.Body.ReadFrom(resp.Body)
	return rec
}

// plainConn stands in for a client's TCP connection from 127.0.0.1.
type plainConn struct{ net.Conn }

func (plainConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000} }
func (plainConn) LocalAddr() net.Addr  { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 10002} }

// tlsConn is plainConn seen by fasthttp as TLS (IsTLS).
type tlsConn struct{ plainConn }

func (tlsConn) Handshake() error                     { return nil }
func (tlsConn) ConnectionState() tls.ConnectionState { return tls.ConnectionState{} }

// newCall begins a call for fc as Handle does.
func (s *Server) newCall(fc *fasthttp.RequestCtx) *call {
	c := &call{}
	s.p.Begin(&c.Call, fc)
	return c
}

func (s *Server) resolveAccount(c *call) error { return s.p.ResolveAccount(&c.Call) }

// checkVersion is the Table service's x-ms-version check.
func checkVersion(v string) error { return New(Options{}).p.CheckVersion(v) }
