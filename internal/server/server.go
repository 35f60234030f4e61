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
	"hash/maphash"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/table"
)

// DefaultVersion is the x-ms-version echoed when a request sends none.
const DefaultVersion = "2019-02-02"

// Options configure a Server.
type Options struct {
	Service  *table.Service
	Accounts []auth.Account
	Logger   *slog.Logger
	// Partitions, when set, is told of every request and may refuse it (package partition).
	Partitions *partition.Layer
	// Now is the clock for error timestamps, request dates and SAS expiry (default
	// time.Now). The Date header is fasthttp's (its clock, formatted once a second).
	Now func() time.Time
	// RequestDateWindow is how far a Shared Key request's date may lie from Now (default
	// DefaultRequestDateWindow, Azure's).
	RequestDateWindow time.Duration
}

// DefaultRequestDateWindow is Azure's limit on a Shared Key request's date: older (or
// later) requests are refused, so a captured request cannot be replayed for long.
const DefaultRequestDateWindow = 15 * time.Minute

// Server is the Table service's request handler (Handle, for a fasthttp.Server).
type Server struct {
	svc *table.Service
	// accounts maps each account name to the verifier of its Shared Key signatures.
	accounts map[string]*auth.Verifier
	log      *slog.Logger
	now      func() time.Time
	// Request ids: a random per-process prefix and a counter, formatted like Azure's GUIDs.
	idPrefix string
	idSeq    atomic.Uint64
	// pages recycles query response buffers, which grow to ~1 MB for a page of 1 KiB entities.
	pages bufferPool
	// bodies recycles single-entity response buffers.
	bodies bufferPool
	// props caches each account's decoded service properties (CORS rules).
	props propsCache
	// dateWindow bounds a Shared Key request's date around now.
	dateWindow time.Duration
	// parts is the partition layer (nil: none); pkSeed hashes partition keys for it.
	parts  *partition.Layer
	pkSeed maphash.Seed
}

// New returns a Server.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RequestDateWindow <= 0 {
		o.RequestDateWindow = DefaultRequestDateWindow
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	h := hex.EncodeToString(rnd[:])
	s := &Server{
		svc:        o.Service,
		accounts:   map[string]*auth.Verifier{},
		log:        o.Logger,
		now:        o.Now,
		dateWindow: o.RequestDateWindow,
		idPrefix:   h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-",
		pages:      bufferPool{size: 64 << 10},
		bodies:     bufferPool{size: 4 << 10},
		parts:      o.Partitions,
		pkSeed:     maphash.MakeSeed(),
	}
	for i := range o.Accounts {
		s.accounts[o.Accounts[i].Name] = auth.NewVerifier(&o.Accounts[i])
	}
	return s
}

func (s *Server) newRequestID() string {
	n := s.idSeq.Add(1)
	const hexDigits = "0123456789abcdef"
	var buf [40]byte // the prefix (19 bytes) and the counter (17) fit: one allocation, the string
	b := append(buf[:0], s.idPrefix...)
	// The counter as "xxxx-xxxxxxxxxxxx" (16 hex digits), like the tail of a GUID.
	for i := 15; i >= 0; i-- {
		if i == 11 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[(n>>(uint(i)*4))&0xf])
	}
	return string(b)
}

// call is one request in flight. Nothing may keep fc, or bytes taken from it, after Handle
// returns: fasthttp reuses them for the connection's next request.
type call struct {
	fc *fasthttp.RequestCtx
	// ctx is the context of the service calls. fasthttp has no per-request cancellation (it
	// does not watch the connection while a handler runs); every operation is bounded anyway.
	ctx context.Context
	// method, host and header are the request's, as strings (see request.go).
	method    string
	host      string
	header    requestHeader
	requestID string
	start     time.Time
	account   string
	// pathStyle is true when the account is the first path segment.
	pathStyle bool
	// secondary is true for the account-secondary endpoint.
	secondary bool
	// rawPath is the still-encoded path after the account segment (starting with "/").
	rawPath string
	// targetPath and targetQuery are the request-target as sent, still percent-encoded.
	targetPath, targetQuery string
	res                     resource
	query                   queryParams
	level                   entity.MetadataLevel
	// xmlErrors selects the storage-common XML error body (ACL and service endpoints).
	xmlErrors bool
	sas       *auth.SAS
	status    int
	part      partitionCall
	// op is the operation for the request log (0 until routed); errCode is the Azure error
	// code sent, authDetail why authentication failed.
	op         auth.Operation
	errCode    string
	authDetail string
}

// Handle serves one request; it is the fasthttp.RequestHandler of the Table endpoint.
func (s *Server) Handle(fc *fasthttp.RequestCtx) {
	c := s.newCall(fc)
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic", "request_id", c.requestID, "panic", p, "stack", string(debug.Stack()))
			if c.status == 0 {
				s.writeError(c, azerr.New(azerr.InternalError))
			}
		}
		s.finishPartition(c)
		s.logRequest(c)
	}()
	s.setCommonHeaders(c)
	if err := s.serve(c); err != nil {
		s.writeError(c, err)
	}
}

func (s *Server) newCall(fc *fasthttp.RequestCtx) *call {
	c := &call{
		fc: fc, ctx: context.Background(), requestID: s.newRequestID(), start: time.Now(),
		method: methodString(fc.Method()), host: string(fc.Host()),
		header: requestHeader{&fc.Request.Header},
	}
	// The request-target as sent, still percent-encoded: signatures are computed over it,
	// never over the decoded path.
	c.targetPath, c.targetQuery = auth.SplitRequestURI(string(fc.RequestURI()))
	return c
}

// logRequest writes the one line per request: at info, or at error for a 5xx.
func (s *Server) logRequest(c *call) {
	level := slog.LevelInfo
	if c.status >= 500 && c.status != http.StatusNotImplemented { // 501: the client asked for an unsupported feature
		level = slog.LevelError
	}
	if !s.log.Enabled(c.ctx, level) {
		return
	}
	op := "Unknown" // not routed: the request failed before its operation was known
	if c.op != 0 {
		op = c.op.String()
	}
	attrs := [...]slog.Attr{
		slog.String("service", "table"),
		slog.String("operation", op),
		slog.String("account", c.account),
		slog.String("resource", c.resourceName()),
		slog.Int("status", c.status),
		slog.String("error_code", c.errCode),
		slog.Float64("duration_ms", float64(time.Since(c.start).Microseconds())/1000),
		slog.Int("bytes_in", len(c.fc.Request.Body())),
		slog.Int("bytes_out", len(c.fc.Response.Body())),
		slog.String("client", c.fc.RemoteAddr().String()),
		slog.String("user_agent", string(c.fc.UserAgent())),
		slog.String("request_id", c.requestID),
		slog.String("auth_failure", c.authDetail),
	}
	n := len(attrs)
	if c.authDetail == "" {
		n-- // the last one is only for authentication failures
	}
	s.log.LogAttrs(c.ctx, level, "request", attrs[:n]...)
}

// resourceName is the table, or table(PartitionKey,RowKey) for one entity, for the log.
func (c *call) resourceName() string {
	switch c.res.kind {
	case resEntity:
		return c.res.table + "(" + c.res.pk + "," + c.res.rk + ")"
	case resTables:
		return "Tables"
	case resService:
		return "service"
	case resBatch:
		return "$batch"
	}
	return c.res.table
}

func (s *Server) setCommonHeaders(c *call) {
	h := &c.fc.Response.Header
	h.Set("X-Ms-Request-Id", c.requestID)
	v := c.fc.Request.Header.Peek("X-Ms-Version")
	if len(v) == 0 {
		// A SAS request may carry its version as sv instead (rare: parse the query for it).
		if vals, err := url.ParseQuery(c.targetQuery); err == nil {
			v = []byte(vals.Get("sv"))
		}
	}
	if len(v) == 0 {
		v = []byte(DefaultVersion)
	}
	h.SetBytesV("X-Ms-Version", v)
	if id := c.fc.Request.Header.Peek("X-Ms-Client-Request-Id"); len(id) > 0 {
		h.SetBytesV("X-Ms-Client-Request-Id", id)
	}
}

// serve resolves, authenticates and dispatches one request.
func (s *Server) serve(c *call) error {
	if err := s.resolveAccount(c); err != nil {
		return err
	}
	if c.header.has("Origin") && c.method != http.MethodOptions {
		s.applyCORS(c)
	}
	q, err := parseQuery(c.targetQuery)
	if err != nil {
		return err
	}
	c.query = q
	c.xmlErrors = q.comp != "" || q.restype != ""
	if err := checkVersion(c.header.Get("X-Ms-Version")); err != nil {
		return err
	}
	if id := c.fc.Request.Header.Peek("X-Ms-Client-Request-Id"); len(id) > 1024 {
		return azerr.New(azerr.InvalidHeaderValue)
	}
	level, err := negotiateLevel(q.format, c.header.Get("Accept"))
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
	method, err := effectiveMethod(c)
	if err != nil {
		return err
	}
	op, err := route(method, c)
	if err != nil {
		return err
	}
	c.op = authOperation(op, c.fc.Request.Header.Peek("If-Match") != nil)
	if err := s.authenticate(c, op); err != nil {
		return err
	}
	if c.query.unsupported != "" && op != opPreflight {
		return azerr.Newf(azerr.NotImplemented, "The requested operation is not implemented on the specified resource. The query option %s is not supported.", c.query.unsupported)
	}
	if c.secondary && op.writes() {
		// The secondary endpoint is a read-only replica: Azure refuses writes to it.
		return azerr.New(azerr.InsufficientAccountPermissions)
	}
	return s.dispatch(c, op, method)
}

// resolveAccount applies Azurite's rule: an IP, localhost or a dot-less host means path
// style (the account is the first path segment); otherwise the account is the host's first
// label.
func (s *Server) resolveAccount(c *call) error {
	host := c.host
	if host == "" {
		return azerr.New(azerr.HostInformationNotPresent)
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	raw := c.targetPath
	pathStyle := isIP(host) || host == "localhost" || !strings.Contains(host, ".") ||
		host == "host.docker.internal"
	var account string
	if pathStyle {
		rest := strings.TrimPrefix(raw, "/")
		var found bool
		account, rest, found = strings.Cut(rest, "/")
		// "/" + rest, sliced from the target rather than concatenated.
		c.rawPath = "/"
		if found {
			c.rawPath = raw[len(raw)-len(rest)-1:]
		}
	} else {
		account, _, _ = strings.Cut(host, ".")
		c.rawPath = raw
		if c.rawPath == "" {
			c.rawPath = "/"
		}
	}
	if a, ok := strings.CutSuffix(account, "-secondary"); ok {
		account, c.secondary = a, true
		if pathStyle {
			// The Python SDK and az CLI address the emulator's secondary as
			// /{account}-secondary/{account}/…: the repeated account is the service root.
			c.rawPath = trimAccountSegment(c.rawPath, account)
		}
	}
	c.account, c.pathStyle = account, pathStyle
	if _, ok := s.accounts[account]; !ok {
		// An unknown account cannot authenticate; Azure answers 403 as for a bad signature.
		c.authDetail = "unknown account " + strconv.Quote(account)
		return azerr.New(azerr.AuthenticationFailed)
	}
	return nil
}

// trimAccountSegment drops a leading "/"+account segment from the path after the account
// (ending there or followed by '/'); the rest of the path is kept as sent.
func trimAccountSegment(rawPath, account string) string {
	rest, ok := strings.CutPrefix(rawPath, "/"+account)
	if !ok || rest != "" && rest[0] != '/' {
		return rawPath
	}
	if rest == "" {
		return "/"
	}
	return rest
}

// isIP reports whether host is an IP address as net.ParseIP reads one (no zone), without
// allocating.
func isIP(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == ""
}

// checkVersion accepts any well-formed x-ms-version date from 2013-08-15 on (JSON needs
// it); a strict list would break users' CI at every SDK release.
func checkVersion(v string) error {
	if v == "" {
		return nil
	}
	if ok, known := quickVersion(v); known {
		if !ok {
			return azerr.New(azerr.JSONFormatNotSupported)
		}
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

// quickVersion decides checkVersion for a plain "YYYY-MM-DD" that is a real date without
// time.Parse: ok reports that it is on or after 2013-08-15. known is false for anything else,
// which time.Parse then judges (with its exact error cases).
func quickVersion(v string) (ok, known bool) {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false, false
	}
	num := func(s string) int {
		n := 0
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return -1
			}
			n = n*10 + int(s[i]-'0')
		}
		return n
	}
	y, m, d := num(v[:4]), num(v[5:7]), num(v[8:])
	if y < 0 || m < 1 || m > 12 || d < 1 || d > 28 {
		return false, false // days 29-31 are left to time.Parse's calendar
	}
	return v >= "2013-08-15", true
}

// effectiveMethod applies X-HTTP-Method tunnelling.
func effectiveMethod(c *call) (string, error) {
	vals := c.header.Values("X-Http-Method")
	if len(vals) == 0 {
		return c.method, nil
	}
	if c.method != http.MethodPost {
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
	if c.fc.IsTLS() {
		scheme = "https"
	}
	if c.pathStyle {
		return scheme + "://" + c.host + "/" + c.account
	}
	return scheme + "://" + c.host
}

// entityURL is baseURL() + "/" + entity.EntityPath(tableName, pk, rk), built in one buffer
// (on the stack unless the keys are long).
func (c *call) entityURL(tableName, pk, rk string) string {
	var buf [256]byte
	b := append(buf[:0], "http"...)
	if c.fc.IsTLS() {
		b = append(b, 's')
	}
	b = append(b, "://"...)
	b = append(b, c.host...)
	if c.pathStyle {
		b = append(b, '/')
		b = append(b, c.account...)
	}
	b = append(b, '/')
	b = entity.AppendEntityPath(b, tableName, pk, rk)
	return string(b)
}

// reply is a complete response produced by a handler.
type reply struct {
	status int
	// The headers of the frequent replies, as fields ("" or false: not sent), written without
	// building a map.
	contentType       string
	noCache           bool // Cache-Control: no-cache and X-Content-Type-Options: nosniff
	etag              string
	location          string
	preferenceApplied string
	dataServiceID     string
	errorCode         string // x-ms-error-code
	// header holds any other headers (canonical keys).
	header http.Header
	body   []byte
	// pooled, when set, is body's buffer, returned to pool once the body has been written.
	pooled *pageBuffer
	pool   *bufferPool
}

// write hands the reply to fasthttp, which sends it (with Content-Length) after Handle
// returns; the body is copied, so rp's buffer may be reused at once.
func (s *Server) write(c *call, rp *reply) {
	h := &c.fc.Response.Header
	for k, vs := range rp.header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	set := func(key, v string) {
		if v != "" {
			h.Set(key, v)
		}
	}
	set("Content-Type", rp.contentType)
	if rp.noCache {
		set("Cache-Control", "no-cache")
		set("X-Content-Type-Options", "nosniff")
	}
	set("Etag", rp.etag)
	set("Location", rp.location)
	set("Preference-Applied", rp.preferenceApplied)
	set("Dataserviceid", rp.dataServiceID)
	set("X-Ms-Error-Code", rp.errorCode)
	c.status = rp.status
	c.fc.SetStatusCode(rp.status)
	c.fc.Response.SetBody(rp.body)
}

// writeError sends err as Azure does: JSON odata.error for the JSON operations, the
// storage-common XML form for the XML endpoints, and x-ms-error-code equal to the body's code.
func (s *Server) writeError(c *call, err error) {
	if errors.Is(err, context.Canceled) {
		c.status = 499 // client went away; nothing useful to send
		return
	}
	if errors.Is(err, errDropConnection) {
		s.dropConnection(c)
		return
	}
	e := errorFor(err)
	c.errCode = string(e.Code)
	if d := auth.Detail(err); d != "" {
		c.authDetail = d
	}
	switch {
	case engineFailure(err):
		// The engine is down or slow: an operational condition, answered as Azure does
		// with a status clients retry.
		s.log.Warn("request failed", "request_id", c.requestID, "code", string(e.Code), "err", err)
	case e.Code == azerr.InternalError || e.Code.Status() >= 500 && e.Code != azerr.NotImplemented:
		s.log.Error("request failed", "request_id", c.requestID, "err", err)
	}
	msg := e.Message() + "\nRequestId:" + c.requestID + "\nTime:" + s.now().UTC().Format("2006-01-02T15:04:05.0000000Z")
	// Azure says why authentication failed (AuthenticationErrorDetail): an element of its
	// XML error; JSON has no such member, so there it is a line of the message, before
	// RequestId and Time (which end every message).
	detail := ""
	if e.Code == azerr.AuthenticationFailed {
		detail = auth.Detail(err)
	}
	rp := &reply{status: e.Status(), errorCode: string(e.Code)}
	if c.xmlErrors {
		rp.contentType = "application/xml"
		rp.body = appendXMLError(nil, string(e.Code), msg, detail)
	} else {
		if detail != "" {
			msg = e.Message() + "\nAuthenticationErrorDetail:" + detail + msg[len(e.Message()):]
		}
		rp.contentType = jsonContentType(c.level)
		rp.body = appendJSONError(nil, string(e.Code), msg)
	}
	s.write(c, rp)
}

// errorFor maps err to the Azure error to answer. The engine's outage and timeout become
// Azure's retryable answers (503 ServerBusy, 500 OperationTimedOut), wherever they are
// wrapped; anything else that is not an Azure error is InternalError.
func errorFor(err error) *azerr.Error {
	switch {
	case errors.Is(err, store.ErrUnavailable):
		return azerr.New(azerr.ServerBusy)
	case errors.Is(err, store.ErrTimeout):
		return azerr.New(azerr.OperationTimedOut)
	}
	return azerr.From(err)
}

// engineFailure reports whether err is the engine's outage or timeout, which fails a whole
// request (a batch included) rather than one of its operations.
func engineFailure(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrTimeout)
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
