// Package server is the HTTP edge of the Table service: it resolves the account, checks
// authentication, routes Azure's URL shapes to operations, decodes requests, calls package
// table and encodes responses. It holds no storage rules of its own.
//
// Every handler returns a complete reply (or an error); one writer sends it, so a failing
// request never sends a partial response, and every Azure error is mapped in one place.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/table"
)

// DefaultVersion is the x-ms-version echoed when a request sends none.
const DefaultVersion = "2019-02-02"

// Options configure a Server.
type Options struct {
	Service  *table.Service
	Accounts []auth.Account
	Logger   *slog.Logger
	// Now is the clock for Date headers and error timestamps (default time.Now).
	Now func() time.Time
}

// Server is the Table service's http.Handler.
type Server struct {
	svc      *table.Service
	accounts map[string]*auth.Account
	log      *slog.Logger
	now      func() time.Time
	// Request ids: a random per-process prefix and a counter, formatted like Azure's GUIDs.
	idPrefix string
	idSeq    atomic.Uint64
	date     atomic.Pointer[cachedDate]
	// pages recycles query response buffers, which grow to ~1 MB for a page of 1 KiB entities.
	pages bufferPool
	// props caches each account's decoded service properties (CORS rules).
	props propsCache
}

// New returns a Server.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	h := hex.EncodeToString(rnd[:])
	s := &Server{
		svc:      o.Service,
		accounts: map[string]*auth.Account{},
		log:      o.Logger,
		now:      o.Now,
		idPrefix: h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-",
	}
	for i := range o.Accounts {
		s.accounts[o.Accounts[i].Name] = &o.Accounts[i]
	}
	return s
}

func (s *Server) newRequestID() string {
	n := s.idSeq.Add(1)
	const hexDigits = "0123456789abcdef"
	b := make([]byte, 0, len(s.idPrefix)+17)
	b = append(b, s.idPrefix...)
	// The counter as "xxxx-xxxxxxxxxxxx" (16 hex digits), like the tail of a GUID.
	for i := 15; i >= 0; i-- {
		if i == 11 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[(n>>(uint(i)*4))&0xf])
	}
	return string(b)
}

// call is one request in flight.
type call struct {
	r         *http.Request
	w         http.ResponseWriter
	requestID string
	start     time.Time
	account   string
	// pathStyle is true when the account is the first path segment.
	pathStyle bool
	// secondary is true for the account-secondary endpoint.
	secondary bool
	// rawPath is the still-encoded path after the account segment (starting with "/").
	rawPath string
	res     resource
	query   queryParams
	level   entity.MetadataLevel
	// xmlErrors selects the storage-common XML error body (ACL and service endpoints).
	xmlErrors bool
	sas       *auth.SAS
	status    int
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{r: r, w: w, requestID: s.newRequestID(), start: time.Now()}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("panic", "request_id", c.requestID, "panic", p, "stack", string(debug.Stack()))
			if c.status == 0 {
				s.writeError(c, azerr.New(azerr.InternalError))
			}
		}
		s.logRequest(c)
	}()
	s.setCommonHeaders(c)
	if err := s.serve(c); err != nil {
		s.writeError(c, err)
	}
}

func (s *Server) logRequest(c *call) {
	level := slog.LevelInfo
	if c.status >= 500 {
		level = slog.LevelError
	}
	if !s.log.Enabled(c.r.Context(), level) {
		return
	}
	s.log.LogAttrs(c.r.Context(), level, "request",
		slog.String("method", c.r.Method),
		slog.String("path", c.r.URL.Path),
		slog.Int("status", c.status),
		slog.Duration("duration", time.Since(c.start)),
		slog.String("request_id", c.requestID),
	)
}

func (s *Server) setCommonHeaders(c *call) {
	// Canonical keys assigned directly: this runs on every request.
	h := c.w.Header()
	h["X-Ms-Request-Id"] = []string{c.requestID}
	v := c.r.Header.Get("x-ms-version")
	if v == "" {
		v = c.r.URL.Query().Get("sv")
	}
	if v == "" {
		v = DefaultVersion
	}
	h["X-Ms-Version"] = []string{v}
	h["Date"] = []string{s.dateHeader()}
	h["Server"] = []string{"Tablo"}
	if id := c.r.Header.Get("x-ms-client-request-id"); id != "" {
		h["X-Ms-Client-Request-Id"] = []string{id}
	}
}

// dateHeader returns the RFC 1123 Date value, formatted once per second.
func (s *Server) dateHeader() string {
	now := s.now()
	sec := now.Unix()
	if d := s.date.Load(); d != nil && d.sec == sec {
		return d.text
	}
	d := &cachedDate{sec: sec, text: now.UTC().Format(http.TimeFormat)}
	s.date.Store(d)
	return d.text
}

type cachedDate struct {
	sec  int64
	text string
}

// serve resolves, authenticates and dispatches one request.
func (s *Server) serve(c *call) error {
	if err := s.resolveAccount(c); err != nil {
		return err
	}
	if c.r.Header.Get("Origin") != "" && c.r.Method != http.MethodOptions {
		s.applyCORS(c)
	}
	q, err := parseQuery(c.r.URL.RawQuery)
	if err != nil {
		return err
	}
	c.query = q
	c.xmlErrors = q.comp != "" || q.restype != ""
	if err := checkVersion(c.r.Header.Get("x-ms-version")); err != nil {
		return err
	}
	if id := c.r.Header.Get("x-ms-client-request-id"); len(id) > 1024 {
		return azerr.New(azerr.InvalidHeaderValue)
	}
	level, err := negotiateLevel(q.format, c.r.Header.Get("Accept"))
	if err != nil {
		return err
	}
	c.level = level
	path, err := pathUnescape(c.rawPath)
	if err != nil {
		return err
	}
	res, err := parseResource(strings.TrimPrefix(path, "/"))
	if err != nil {
		return err
	}
	c.res = res
	method, err := effectiveMethod(c.r)
	if err != nil {
		return err
	}
	op, err := route(method, c)
	if err != nil {
		return err
	}
	if err := s.authenticate(c, op); err != nil {
		return err
	}
	return s.dispatch(c, op, method)
}

// resolveAccount applies Azurite's rule: an IP, localhost or a dot-less host means path
// style (the account is the first path segment); otherwise the account is the host's first
// label.
func (s *Server) resolveAccount(c *call) error {
	host := c.r.Host
	if host == "" {
		return azerr.New(azerr.HostInformationNotPresent)
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	raw, _ := rawTarget(c.r)
	pathStyle := net.ParseIP(host) != nil || host == "localhost" || !strings.Contains(host, ".") ||
		host == "host.docker.internal"
	var account string
	if pathStyle {
		rest := strings.TrimPrefix(raw, "/")
		account, rest, _ = strings.Cut(rest, "/")
		c.rawPath = "/" + rest
	} else {
		account, _, _ = strings.Cut(host, ".")
		c.rawPath = raw
		if c.rawPath == "" {
			c.rawPath = "/"
		}
	}
	if a, ok := strings.CutSuffix(account, "-secondary"); ok {
		account, c.secondary = a, true
	}
	c.account, c.pathStyle = account, pathStyle
	if _, ok := s.accounts[account]; !ok {
		// An unknown account cannot authenticate; Azure answers 403 as for a bad signature.
		return azerr.New(azerr.AuthenticationFailed)
	}
	return nil
}

// rawTarget returns the path and query exactly as on the request line, still percent-encoded
// (signatures are computed over them, never over the decoded path).
func rawTarget(r *http.Request) (rawPath, rawQuery string) {
	if r.RequestURI == "" || r.RequestURI == "*" {
		return r.URL.EscapedPath(), r.URL.RawQuery
	}
	return auth.SplitRequestURI(r.RequestURI)
}

// checkVersion accepts any well-formed x-ms-version date from 2013-08-15 on (JSON needs
// it); a strict list would break users' CI at every SDK release.
func checkVersion(v string) error {
	if v == "" {
		return nil
	}
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return azerr.Newf(azerr.InvalidHeaderValue, "The value for one of the HTTP headers is not in the correct format.")
	}
	if t.Before(time.Date(2013, 8, 15, 0, 0, 0, 0, time.UTC)) {
		return azerr.New(azerr.JSONFormatNotSupported)
	}
	return nil
}

// effectiveMethod applies X-HTTP-Method tunnelling.
func effectiveMethod(r *http.Request) (string, error) {
	vals := r.Header.Values("X-HTTP-Method")
	if len(vals) == 0 {
		return r.Method, nil
	}
	if r.Method != http.MethodPost {
		return "", azerr.New(azerr.XMethodNotUsingPost)
	}
	if len(vals) > 1 || strings.Contains(vals[0], ",") {
		return "", azerr.New(azerr.XMethodIncorrectCount)
	}
	switch m := strings.ToUpper(strings.TrimSpace(vals[0])); m {
	case "MERGE", "PUT", "DELETE":
		return m, nil
	}
	return "", azerr.New(azerr.XMethodIncorrectValue)
}

// baseURL is the service root as clients address it, for odata.metadata and Location.
func (c *call) baseURL() string {
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	if c.pathStyle {
		return scheme + "://" + c.r.Host + "/" + c.account
	}
	return scheme + "://" + c.r.Host
}

// reply is a complete response produced by a handler.
type reply struct {
	status int
	header http.Header
	body   []byte
	// release, when set, is called once the body has been written (pooled buffers).
	release func()
}

func (s *Server) write(c *call, rp *reply) {
	h := c.w.Header()
	for k, vs := range rp.header {
		h[k] = vs
	}
	if len(rp.body) > 0 || rp.status == http.StatusOK {
		h.Set("Content-Length", strconv.Itoa(len(rp.body)))
	}
	c.status = rp.status
	c.w.WriteHeader(rp.status)
	if len(rp.body) > 0 {
		_, _ = c.w.Write(rp.body)
	}
}

// writeError sends err as Azure does: JSON odata.error for the JSON operations, the
// storage-common XML form for the XML endpoints, and x-ms-error-code equal to the body's code.
func (s *Server) writeError(c *call, err error) {
	if errors.Is(err, context.Canceled) {
		c.status = 499 // client went away; nothing useful to send
		return
	}
	e := azerr.From(err)
	if e.Code == azerr.InternalError || e.Code.Status() >= 500 {
		s.log.Error("request failed", "request_id", c.requestID, "err", err)
	}
	msg := e.Message() + "\nRequestId:" + c.requestID + "\nTime:" + s.now().UTC().Format("2006-01-02T15:04:05.0000000Z")
	h := http.Header{}
	h.Set("x-ms-error-code", string(e.Code))
	var body []byte
	if c.xmlErrors {
		h.Set("Content-Type", "application/xml")
		body = appendXMLError(nil, string(e.Code), msg)
	} else {
		h.Set("Content-Type", jsonContentType(c.level))
		body = appendJSONError(nil, string(e.Code), msg)
	}
	s.write(c, &reply{status: e.Status(), header: h, body: body})
}

func jsonContentType(l entity.MetadataLevel) string {
	switch l {
	case entity.NoMetadata:
		return "application/json;odata=nometadata;streaming=true;charset=utf-8"
	case entity.FullMetadata:
		return "application/json;odata=fullmetadata;streaming=true;charset=utf-8"
	}
	return "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
}
