// Package server is the HTTP edge of the Table service: it routes Azure's URL shapes to
// operations, decodes requests, calls package table and encodes responses. The request
// pipeline it shares with the other services (account resolution, authentication, CORS,
// service properties, the reply writer) is package edge. It holds no storage rules.
//
// Every handler returns a complete reply (or an error); one writer sends it, so a failing
// request never sends a partial response, and every Azure error is mapped in one place.
package server

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/edge"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/metrics"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/table"
)

// DefaultVersion is the x-ms-version echoed when a request sends none.
const DefaultVersion = edge.DefaultVersion

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
	// edge.DefaultRequestDateWindow, Azure's).
	RequestDateWindow time.Duration
	// Metrics, when set, records every request (service "table").
	Metrics *metrics.Metrics
	// OAuth accepts Microsoft Entra ID bearer tokens (package edge).
	OAuth bool
}

// Server is the Table service's request handler (Handle, for a fasthttp.Server).
type Server struct {
	svc *table.Service
	// p is the request pipeline the services share (request ids, account resolution,
	// authentication, CORS, service properties, the reply writer).
	p   *edge.Pipeline
	log *slog.Logger
	now func() time.Time
	// pages recycles query response buffers, which grow to ~1 MB for a page of 1 KiB entities.
	pages edge.BufferPool
	// bodies recycles single-entity response buffers.
	bodies edge.BufferPool
	// parts is the partition layer (nil: none); the pipeline reports to it.
	parts *partition.Layer
}

// New returns a Server.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{
		svc:    o.Service,
		log:    o.Logger,
		now:    o.Now,
		pages:  edge.BufferPool{Size: 64 << 10},
		bodies: edge.BufferPool{Size: 4 << 10},
		parts:  o.Partitions,
	}
	s.p = edge.New(edge.Options{
		Service: auth.ServiceTable, Accounts: o.Accounts, Logger: o.Logger, Now: o.Now,
		Settings: o.Service, MinVersion: "2013-08-15", TooOldVersion: azerr.JSONFormatNotSupported,
		RequestDateWindow: o.RequestDateWindow, SharedSettings: o.Service.Shared(),
		Metrics: o.Metrics, OAuth: o.OAuth, Partitions: o.Partitions,
	})
	return s
}

// DropCaches forgets what the server caches about the store's contents (service
// properties), for a snapshot restore or a reset; the caller keeps requests out meanwhile.
func (s *Server) DropCaches() { s.p.DropCaches() }

// call is one request in flight: the pipeline's Call plus what the Table service decodes.
type call struct {
	edge.Call
	res   resource
	query queryParams
	level entity.MetadataLevel
	sas   *auth.SAS
}

// Handle serves one request; it is the fasthttp.RequestHandler of the Table endpoint.
func (s *Server) Handle(fc *fasthttp.RequestCtx) {
	c := &call{}
	s.p.Begin(&c.Call, fc)
	defer func() {
		s.p.Recover(&c.Call, recover(), debug.Stack)
		s.finishPartition(c)
		s.p.LogRequest(&c.Call, c.resourceName)
	}()
	if err := s.serve(c); err != nil {
		s.writeError(c, err)
	}
}

// serve resolves, authenticates and dispatches one request.
func (s *Server) serve(c *call) error {
	if err := s.p.ResolveAccount(&c.Call); err != nil {
		return err
	}
	s.p.ApplyCORS(&c.Call)
	q, err := parseQuery(c.TargetQuery)
	if err != nil {
		return err
	}
	c.query = q
	c.XMLErrors = q.comp != "" || q.restype != ""
	if err := s.p.CheckHeaders(&c.Call); err != nil {
		return err
	}
	level, err := negotiateLevel(q.format, c.Header.Get("Accept"))
	if err != nil {
		return err
	}
	c.level = level
	c.JSONErrorType = jsonContentType(level)
	path, err := pathUnescape(c.RawPath)
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
	c.Op = authOperation(op, c.FC.Request.Header.Peek("If-Match") != nil)
	if err := s.authenticate(c, op); err != nil {
		return err
	}
	if c.query.unsupported != "" && op != opPreflight {
		return azerr.Newf(azerr.NotImplemented, "The requested operation is not implemented on the specified resource. The query option %s is not supported.", c.query.unsupported)
	}
	if c.Secondary && op.writes() {
		// The secondary endpoint is a read-only replica: Azure refuses writes to it.
		return azerr.New(azerr.InsufficientAccountPermissions)
	}
	return s.dispatch(c, op, method)
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

// effectiveMethod applies X-HTTP-Method tunnelling.
func effectiveMethod(c *call) (string, error) {
	vals := c.Header.Values("X-Http-Method")
	if len(vals) == 0 {
		return c.Method, nil
	}
	if c.Method != http.MethodPost {
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
func (c *call) baseURL() string { return c.BaseURL() }

// entityURL is baseURL() + "/" + entity.EntityPath(tableName, pk, rk), built in one buffer
// (on the stack unless the keys are long).
func (c *call) entityURL(tableName, pk, rk string) string {
	var buf [256]byte
	b := append(buf[:0], "http"...)
	if c.FC.IsTLS() {
		b = append(b, 's')
	}
	b = append(b, "://"...)
	b = append(b, c.Host...)
	if c.PathStyle {
		b = append(b, '/')
		b = append(b, c.Account...)
	}
	b = append(b, '/')
	b = entity.AppendEntityPath(b, tableName, pk, rk)
	return string(b)
}

// reply is a complete response produced by a handler (the pipeline's one Reply).
type reply = edge.Reply

func (s *Server) write(c *call, rp *reply) { s.p.Write(&c.Call, rp) }

// writeError sends err as Azure does: JSON odata.error for the JSON operations, the
// storage-common XML form for the XML endpoints, and x-ms-error-code equal to the body's code.
func (s *Server) writeError(c *call, err error) {
	s.p.WriteError(&c.Call, err)
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
