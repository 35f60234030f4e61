package edge

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
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/metrics"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/store"
)

// DefaultVersion is the x-ms-version echoed when a request sends none.
const DefaultVersion = "2019-02-02"

// Options configure a Pipeline.
type Options struct {
	// Service selects the Shared Key flavour, SAS rules and the default error envelope.
	Service  auth.Service
	Accounts []auth.Account
	Logger   *slog.Logger
	// Now is the clock for error timestamps and SAS expiry (default time.Now). The Date
	// header is fasthttp's (its clock, formatted once a second).
	Now func() time.Time
	// Settings stores the service's per-account documents (service properties).
	Settings Settings
	// MinVersion is the oldest x-ms-version accepted; an older one is TooOldVersion.
	MinVersion    string
	TooOldVersion azerr.Code
	// RequestDateWindow is how far a Shared Key request's date may lie from Now (default
	// DefaultRequestDateWindow, Azure's).
	RequestDateWindow time.Duration
	// SharedSettings: other processes write Settings too (a shared store), so the service
	// properties are read from Settings on every use instead of cached.
	SharedSettings bool
	// KeepHeaderCase keeps request header names as sent (the streaming server for Blob,
	// which echoes metadata names in their case); lookups then fold case.
	KeepHeaderCase bool
	// Metrics, when set, records every request under the service's name.
	Metrics *metrics.Metrics
	// OAuth accepts Microsoft Entra ID bearer tokens (bearer.go).
	OAuth bool
	// Partitions, when set, is the partition layer the service's handlers report to
	// (partition.go).
	Partitions *partition.Layer
}

// DefaultRequestDateWindow is Azure's limit on a Shared Key request's date: older (or
// later) requests are refused, so a captured request cannot be replayed for long.
const DefaultRequestDateWindow = 15 * time.Minute

// Settings is where a service keeps per-account documents such as its service properties.
type Settings interface {
	AccountSetting(ctx context.Context, account, name string) ([]byte, error)
	UpdateAccountSetting(ctx context.Context, account, name string, fn func(old []byte) ([]byte, error)) error
}

// Pipeline is the shared part of a service's request handling. It is safe for concurrent
// use.
type Pipeline struct {
	svc auth.Service
	// accounts maps each account name to the verifier of its Shared Key signatures.
	accounts map[string]*auth.Verifier
	log      *slog.Logger
	now      func() time.Time
	settings Settings
	minVer   string
	tooOld   azerr.Code
	keepCase bool
	// dateWindow bounds a Shared Key request's date around now.
	dateWindow time.Duration
	// Request ids: a random per-process prefix and a counter, formatted like Azure's GUIDs.
	idPrefix string
	idSeq    atomic.Uint64
	// props caches each account's decoded service properties (CORS rules), unless
	// sharedSettings (then every use reads Settings).
	props          propsCache
	sharedSettings bool
	// metrics records requests (nil: off); oauth accepts bearer tokens.
	metrics *metrics.Service
	oauth   bool
	// parts is the partition layer (nil: none); partSvc the service in its terms; pkSeed
	// hashes partition keys to count a query's distinct partitions.
	parts   *partition.Layer
	partSvc partition.Service
	pkSeed  maphash.Seed
}

// New returns a Pipeline.
func New(o Options) *Pipeline {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RequestDateWindow <= 0 {
		o.RequestDateWindow = DefaultRequestDateWindow
	}
	if o.MinVersion == "" {
		o.MinVersion, o.TooOldVersion = "2009-09-19", azerr.InvalidHeaderValue
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	h := hex.EncodeToString(rnd[:])
	p := &Pipeline{
		svc:        o.Service,
		accounts:   map[string]*auth.Verifier{},
		log:        o.Logger,
		now:        o.Now,
		settings:   o.Settings,
		minVer:     o.MinVersion,
		tooOld:     o.TooOldVersion,
		keepCase:   o.KeepHeaderCase,
		dateWindow: o.RequestDateWindow,
		idPrefix:   h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-",

		sharedSettings: o.SharedSettings,
	}
	for i := range o.Accounts {
		p.accounts[o.Accounts[i].Name] = auth.NewVerifier(&o.Accounts[i])
	}
	if o.Metrics != nil {
		p.metrics = o.Metrics.Service(strings.ToLower(p.svc.String()), operationNames())
	}
	p.oauth = o.OAuth
	p.parts, p.pkSeed = o.Partitions, maphash.MakeSeed()
	switch o.Service {
	case auth.ServiceTable:
		p.partSvc = partition.Table
	case auth.ServiceQueue:
		p.partSvc = partition.Queue
	case auth.ServiceBlob:
		p.partSvc = partition.Blob
	}
	return p
}

// Log is the pipeline's logger.
func (p *Pipeline) Log() *slog.Logger { return p.log }

// Now is the pipeline's clock.
func (p *Pipeline) Now() time.Time { return p.now() }

// Verifier returns the Shared Key verifier of an account (nil if unknown).
func (p *Pipeline) Verifier(account string) *auth.Verifier { return p.accounts[account] }

func (p *Pipeline) newRequestID() string {
	n := p.idSeq.Add(1)
	const hexDigits = "0123456789abcdef"
	var buf [40]byte // the prefix (19 bytes) and the counter (17) fit: one allocation, the string
	b := append(buf[:0], p.idPrefix...)
	// The counter as "xxxx-xxxxxxxxxxxx" (16 hex digits), like the tail of a GUID.
	for i := 15; i >= 0; i-- {
		if i == 11 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[(n>>(uint(i)*4))&0xf])
	}
	return string(b)
}

// Begin fills c for the request in fc and sets the headers every response carries
// (x-ms-request-id, x-ms-version, the client request id echo).
func (p *Pipeline) Begin(c *Call, fc *fasthttp.RequestCtx) {
	*c = Call{
		FC: fc, Ctx: context.Background(), RequestID: p.newRequestID(), Start: time.Now(),
		Method: MethodString(fc.Method()), Host: string(fc.Host()),
		Header:    Header{H: &fc.Request.Header, Fold: p.keepCase},
		XMLErrors: p.svc != auth.ServiceTable,
	}
	// The request-target as sent, still percent-encoded: signatures are computed over it,
	// never over the decoded path.
	c.TargetPath, c.TargetQuery = auth.SplitRequestURI(string(fc.RequestURI()))
	p.SetCommonHeaders(c)
}

// Recover handles the handler's recover() value: a panic is logged and becomes 500
// InternalError if nothing was sent yet.
func (p *Pipeline) Recover(c *Call, recovered any, stack func() []byte) {
	if recovered != nil {
		p.log.Error("panic", "request_id", c.RequestID, "panic", recovered, "stack", string(stack()))
		if c.Status == 0 {
			p.WriteError(c, azerr.New(azerr.InternalError))
		}
	}
}

// LogRequest writes the one line per request: at info, or at error for a 5xx. It also
// records the request's metrics.
func (p *Pipeline) LogRequest(c *Call, resource func() string) {
	p.metrics.Observe(int(c.Op), c.Status, time.Since(c.Start), bytesIn(c), bytesOut(c))
	level := slog.LevelInfo
	if c.Status >= 500 && c.Status != http.StatusNotImplemented { // 501: the client asked for an unsupported feature
		level = slog.LevelError
	}
	if !p.log.Enabled(c.Ctx, level) {
		return
	}
	op := "Unknown" // not routed: the request failed before its operation was known
	if c.Op != 0 {
		op = c.Op.String()
	}
	res := ""
	if resource != nil {
		res = resource()
	}
	attrs := [...]slog.Attr{
		slog.String("service", p.svc.String()),
		slog.String("operation", op),
		slog.String("account", c.Account),
		slog.String("resource", res),
		slog.Int("status", c.Status),
		slog.String("error_code", c.ErrCode),
		slog.Float64("duration_ms", float64(time.Since(c.Start).Microseconds())/1000),
		slog.Int("bytes_in", bytesIn(c)),
		slog.Int("bytes_out", bytesOut(c)),
		slog.String("client", c.FC.RemoteAddr().String()),
		slog.String("user_agent", string(c.FC.UserAgent())),
		slog.String("request_id", c.RequestID),
		slog.String("auth_failure", c.AuthDetail),
	}
	n := len(attrs)
	if c.AuthDetail == "" {
		n-- // the last one is only for authentication failures
	}
	p.log.LogAttrs(c.Ctx, level, "request", attrs[:n]...)
}

// bytesIn is the request body's size for the log. A streamed body (Blob) is never read
// here: Body() would buffer the rest of the stream, so its declared length stands in.
func bytesIn(c *Call) int {
	if c.FC.Request.IsBodyStream() {
		return max(c.FC.Request.Header.ContentLength(), 0)
	}
	return len(c.FC.Request.Body())
}

// bytesOut is the response body's size for the log; a streamed download is counted by its
// Content-Length, since Body() would read the whole stream into memory.
func bytesOut(c *Call) int {
	if c.FC.Response.IsBodyStream() {
		return max(c.FC.Response.Header.ContentLength(), 0)
	}
	return len(c.FC.Response.Body())
}

// SetCommonHeaders sets the headers every response carries (again after a reset).
func (p *Pipeline) SetCommonHeaders(c *Call) {
	h := &c.FC.Response.Header
	h.Set("X-Ms-Request-Id", c.RequestID)
	v := c.Header.Peek("X-Ms-Version")
	if len(v) == 0 {
		// A SAS request may carry its version as sv instead (rare: parse the query for it).
		if vals, err := url.ParseQuery(c.TargetQuery); err == nil {
			v = []byte(vals.Get("sv"))
		}
	}
	if len(v) == 0 {
		v = []byte(DefaultVersion)
	}
	h.SetBytesV("X-Ms-Version", v)
	if id := c.Header.Peek("X-Ms-Client-Request-Id"); len(id) > 0 {
		h.SetBytesV("X-Ms-Client-Request-Id", id)
	}
}

// ResolveAccount applies Azurite's rule: an IP, localhost or a dot-less host means path
// style (the account is the first path segment); otherwise the account is the host's first
// label ({account}.table|queue|blob.localhost, {account}.queue.core.windows.net).
func (p *Pipeline) ResolveAccount(c *Call) error {
	host := c.Host
	if host == "" {
		return azerr.New(azerr.HostInformationNotPresent)
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	raw := c.TargetPath
	pathStyle := isIP(host) || host == "localhost" || !strings.Contains(host, ".") ||
		host == "host.docker.internal"
	var account string
	if pathStyle {
		rest := strings.TrimPrefix(raw, "/")
		var found bool
		account, rest, found = strings.Cut(rest, "/")
		// "/" + rest, sliced from the target rather than concatenated.
		c.RawPath = "/"
		if found {
			c.RawPath = raw[len(raw)-len(rest)-1:]
		}
	} else {
		account, _, _ = strings.Cut(host, ".")
		c.RawPath = raw
		if c.RawPath == "" {
			c.RawPath = "/"
		}
	}
	if a, ok := strings.CutSuffix(account, "-secondary"); ok {
		account, c.Secondary = a, true
		if pathStyle {
			// The Python SDK and az CLI address the emulator's secondary as
			// /{account}-secondary/{account}/…: the repeated account is the service root.
			c.RawPath = trimAccountSegment(c.RawPath, account)
		}
	}
	c.Account, c.PathStyle = account, pathStyle
	if _, ok := p.accounts[account]; !ok {
		// An unknown account cannot authenticate; Azure answers 403 as for a bad signature.
		c.AuthDetail = "unknown account " + strconv.Quote(account)
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

// CheckHeaders checks x-ms-version and the length of x-ms-client-request-id.
func (p *Pipeline) CheckHeaders(c *Call) error {
	if err := p.CheckVersion(c.Header.Get("X-Ms-Version")); err != nil {
		return err
	}
	if id := c.Header.Peek("X-Ms-Client-Request-Id"); len(id) > 1024 {
		return azerr.New(azerr.InvalidHeaderValue)
	}
	return nil
}

// CheckVersion accepts any well-formed x-ms-version date from the service's oldest on; a
// strict list would break users' CI at every SDK release.
func (p *Pipeline) CheckVersion(v string) error {
	if v == "" {
		return nil
	}
	if ok, known := quickVersion(v, p.minVer); known {
		if !ok {
			return azerr.New(p.tooOld)
		}
		return nil
	}
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return azerr.Newf(azerr.InvalidHeaderValue, "The value for one of the HTTP headers is not in the correct format.")
	}
	if t.Format("2006-01-02") < p.minVer {
		return azerr.New(p.tooOld)
	}
	return nil
}

// quickVersion decides checkVersion for a plain "YYYY-MM-DD" that is a real date without
// time.Parse: ok reports that it is on or after min. known is false for anything else,
// which time.Parse then judges (with its exact error cases).
func quickVersion(v, min string) (ok, known bool) {
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
	return v >= min, true
}

// AuthTarget is what a request is authorised for.
type AuthTarget struct {
	// Preflight requests are never authenticated.
	Preflight bool
	Op        auth.Operation
	// Resource is the table (compared with a table SAS's tn), or the queue, container or
	// "container/blob" a queue or blob service SAS must have been signed for.
	Resource string
	// Policy looks up the resource's stored access policies (for si).
	Policy func(id string) (*auth.AccessPolicy, bool)
	// Form decodes the query for a SAS (default url.ParseQuery).
	Form func() (url.Values, error)
}

// Authenticate checks Shared Key / Shared Key Lite (in the service's flavour) or a SAS,
// which it returns. A request with neither credential is 403 AuthenticationFailed: no
// service here allows anonymous access.
func (p *Pipeline) Authenticate(c *Call, t AuthTarget) (*auth.SAS, error) {
	if t.Preflight {
		return nil, nil
	}
	v := p.accounts[c.Account]
	authz := c.Header.Get("Authorization")
	if authz == "" {
		form := t.Form
		if form == nil {
			form = func() (url.Values, error) {
				q, err := url.ParseQuery(c.TargetQuery)
				if err != nil {
					return nil, azerr.New(azerr.InvalidQueryParameterValue)
				}
				return q, nil
			}
		}
		params, err := form()
		if err != nil {
			return nil, err
		}
		if !params.Has("sig") {
			return nil, azerr.New(azerr.AuthenticationFailed)
		}
		sas, _, err := auth.ParseSASFor(p.svc, params)
		if err != nil {
			return nil, err
		}
		req := auth.SASRequest{
			Now:      p.now(),
			TLS:      c.FC.IsTLS(),
			ClientIP: c.ClientIP(),
			Policy:   t.Policy,
			Resource: t.Resource,
		}
		if err := sas.Verify(v.Account(), req); err != nil {
			return nil, err
		}
		if err := sas.Authorize(t.Op, t.Resource); err != nil {
			return nil, err
		}
		return sas, nil
	}
	if p.oauth {
		if token, ok := cutBearer(authz); ok {
			return nil, p.authenticateBearer(c, token)
		}
	}
	// ResolveAccount took the request-target apart already.
	req := auth.RequestInfo{
		Method:    c.Method,
		RawPath:   c.TargetPath,
		RawQuery:  c.TargetQuery,
		Header:    c.Header,
		Account:   c.Account,
		PathStyle: c.PathStyle,
		Secondary: c.Secondary,
		Service:   p.svc,
		// Azure refuses requests dated too far from its clock.
		Now:          p.now(),
		MaxClockSkew: p.dateWindow,
	}
	err := v.VerifySharedKey(req)
	if err != nil && p.log.Enabled(c.Ctx, slog.LevelDebug) {
		// What Azure's AuthenticationErrorDetail gives: the string the server signed (never a key).
		scheme := auth.SchemeSharedKey
		if strings.HasPrefix(authz, "SharedKeyLite ") {
			scheme = auth.SchemeSharedKeyLite
		}
		p.log.Debug("authentication failed", "request_id", c.RequestID, "reason", auth.Detail(err),
			"string_to_sign", auth.StringToSign(scheme, req))
	}
	return nil, err
}

// Reply is a complete response produced by a handler.
type Reply struct {
	Status int
	// The headers of the frequent replies, as fields ("" or false: not sent), written without
	// building a map.
	ContentType       string
	NoCache           bool // Cache-Control: no-cache and X-Content-Type-Options: nosniff
	ETag              string
	Location          string
	PreferenceApplied string
	DataServiceID     string
	ErrorCode         string // x-ms-error-code
	// Header holds any other headers (canonical keys).
	Header http.Header
	Body   []byte
	// Pooled, when set, is Body's buffer, returned to Pool once the body has been written.
	Pooled *PageBuffer
	Pool   *BufferPool
}

// Write hands the reply to fasthttp, which sends it (with Content-Length) after the
// handler returns; the body is copied, so rp's buffer is recycled at once.
func (p *Pipeline) Write(c *Call, rp *Reply) {
	h := &c.FC.Response.Header
	for k, vs := range rp.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	set := func(key, v string) {
		if v != "" {
			h.Set(key, v)
		}
	}
	set("Content-Type", rp.ContentType)
	if rp.NoCache {
		set("Cache-Control", "no-cache")
		set("X-Content-Type-Options", "nosniff")
	}
	set("Etag", rp.ETag)
	set("Location", rp.Location)
	set("Preference-Applied", rp.PreferenceApplied)
	set("Dataserviceid", rp.DataServiceID)
	set("X-Ms-Error-Code", rp.ErrorCode)
	c.Status = rp.Status
	c.FC.SetStatusCode(rp.Status)
	c.FC.Response.SetBody(rp.Body)
	if rp.Pooled != nil {
		rp.Pool.Put(rp.Pooled)
	}
}

// ErrorContentType is the Content-Type of JSON error bodies; a JSON service sets
// Call.JSONErrorType per request to follow the negotiated metadata level.
const ErrorContentType = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"

// WriteError sends err as Azure does: the storage-common XML form when c.XMLErrors (Blob,
// Queue, and the Table service's ACL and service endpoints), JSON odata.error otherwise,
// and x-ms-error-code equal to the body's code.
func (p *Pipeline) WriteError(c *Call, err error) {
	if errors.Is(err, context.Canceled) {
		c.Status = 499 // client went away; nothing useful to send
		return
	}
	if errors.Is(err, ErrDropConnection) {
		p.DropConnection(c)
		return
	}
	e := errorFor(err)
	c.ErrCode = string(e.Code)
	if d := auth.Detail(err); d != "" {
		c.AuthDetail = d
	}
	switch {
	case EngineFailure(err):
		// The engine is down or slow: an operational condition, answered as Azure does
		// with a status clients retry.
		p.log.Warn("request failed", "request_id", c.RequestID, "code", string(e.Code), "err", err)
	case e.Code == azerr.InternalError || e.Code.Status() >= 500 && e.Code != azerr.NotImplemented:
		p.log.Error("request failed", "request_id", c.RequestID, "err", err)
	}
	msg := e.Message() + "\nRequestId:" + c.RequestID + "\nTime:" + p.now().UTC().Format("2006-01-02T15:04:05.0000000Z")
	// Azure says why authentication failed (AuthenticationErrorDetail): an element of its
	// XML error; JSON has no such member, so there it is a line of the message, before
	// RequestId and Time (which end every message).
	detail := ""
	if e.Code == azerr.AuthenticationFailed || e.Code == azerr.InvalidAuthenticationInfo && e.Status() == 401 {
		detail = auth.Detail(err) // the 401 is a refused bearer token (bearer.go)
	}
	rp := &Reply{Status: e.Status(), ErrorCode: string(e.Code)}
	if c.XMLErrors {
		details := e.Details
		if detail != "" {
			details = append(details[:len(details):len(details)], azerr.Detail{Name: "AuthenticationErrorDetail", Value: detail})
		}
		rp.ContentType = "application/xml"
		rp.Body = azerr.AppendXML(nil, string(e.Code), msg, details...)
	} else {
		if detail != "" {
			msg = e.Message() + "\nAuthenticationErrorDetail:" + detail + msg[len(e.Message()):]
		}
		rp.ContentType = c.JSONErrorType
		if rp.ContentType == "" {
			rp.ContentType = ErrorContentType
		}
		rp.Body = appendJSONError(nil, string(e.Code), msg)
	}
	p.Write(c, rp)
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
	case errors.Is(err, store.ErrNotSupported):
		return azerr.Newf(azerr.NotImplemented, "Blob data is not supported on this server's storage engine (PostgreSQL); run the Blob service on Pebble.")
	}
	return azerr.From(err)
}

// EngineFailure reports whether err is the engine's outage or timeout, which fails a whole
// request (a batch included) rather than one of its operations.
func EngineFailure(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrTimeout)
}

func appendJSONError(b []byte, code, msg string) []byte {
	b = append(b, `{"odata.error":{"code":`...)
	b = entity.AppendJSONString(b, code)
	b = append(b, `,"message":{"lang":"en-US","value":`...)
	b = entity.AppendJSONString(b, msg)
	return append(b, "}}}"...)
}
