// Package queuewire is the HTTP edge of the Queue service: it routes the Queue service's
// URL shapes to operations, decodes requests, calls package queue and encodes its XML
// responses. The shared pipeline (account resolution, Shared Key in the Blob/Queue flavour,
// SAS, CORS, service properties, the reply writer with XML errors) is package edge.
package queuewire

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/edge"
	"github.com/tablo/tablo/internal/httpserve"
	"github.com/tablo/tablo/internal/metrics"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/queue"
)

// maxBody bounds a request body: a 64 KiB message escaped as XML can be several times its
// size (every '<' is four bytes); ACL and properties documents are smaller.
const maxBody = 1 << 20

// Options configure a Server.
type Options struct {
	Service  *queue.Service
	Accounts []auth.Account
	Logger   *slog.Logger
	Now      func() time.Time
	// RequestDateWindow is how far a Shared Key request's date may lie from Now (0: Azure's
	// 15 minutes).
	RequestDateWindow time.Duration
	// Metrics, when set, records every request (service "queue"); OAuth accepts Microsoft
	// Entra ID bearer tokens (package edge).
	Metrics *metrics.Metrics
	OAuth   bool
	// Partitions, when set, is the partition layer every request reports to.
	Partitions *partition.Layer
}

// Server is the Queue service's request handler.
type Server struct {
	svc *queue.Service
	p   *edge.Pipeline
	// bufs recycles the buffers of message replies; calls the per-request state (a call is
	// several hundred bytes, on every request).
	bufs  edge.BufferPool
	calls sync.Pool
}

// New returns a Server.
func New(o Options) *Server {
	return &Server{svc: o.Service, bufs: edge.BufferPool{Size: 1024}, calls: sync.Pool{New: func() any { return new(call) }}, p: edge.New(edge.Options{
		Service: auth.ServiceQueue, Accounts: o.Accounts, Logger: o.Logger, Now: o.Now,
		Settings: o.Service, MinVersion: "2009-09-19", TooOldVersion: azerr.InvalidHeaderValue,
		RequestDateWindow: o.RequestDateWindow, Metrics: o.Metrics, OAuth: o.OAuth, Partitions: o.Partitions,
		SharedSettings: o.Service.Shared(),
	})}
}

// DropCaches forgets what the server caches about the store's contents (service
// properties), for a snapshot restore or a reset; the caller keeps requests out meanwhile.
func (s *Server) DropCaches() { s.p.DropCaches() }

// NewHTTPServer returns the HTTP server of the Queue endpoint.
func (s *Server) NewHTTPServer() *httpserve.Server { return s.p.NewHTTPServer(s.Handle, maxBody) }

// call is one request: the pipeline's Call plus what the Queue service decodes.
type call struct {
	edge.Call
	kind    resourceKind
	queue   string
	message string
	// query holds the parameters in the order sent, names lower-cased (Azure matches names
	// case-insensitively); the first value of a name counts. A slice, not a map: requests
	// carry a handful of parameters, and this is on every request's path.
	query    []queryParam
	queryBuf [6]queryParam
}

type queryParam struct{ name, value string }

// resourceName is the queue, queue/messages or queue/messages/id, for the log.
func (c *call) resourceName() string {
	switch c.kind {
	case resService:
		return "service"
	case resMessages:
		return c.queue + "/messages"
	case resMessage:
		return c.queue + "/messages/" + c.message
	}
	return c.queue
}

func (c *call) param(name string) (string, bool) {
	for _, q := range c.query {
		if q.name == name {
			return q.value, true
		}
	}
	return "", false
}

// parseQuery splits a raw query string into parameters with names lower-cased and names
// and values percent-decoded ('+' is a space), as url.ParseQuery does; a malformed escape
// fails as it does there.
func parseQuery(raw string, into []queryParam) ([]queryParam, error) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if strings.Contains(pair, ";") {
			return nil, errors.New("invalid semicolon separator in query")
		}
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err := unescapeQuery(k)
		if err != nil {
			return nil, err
		}
		v, err = unescapeQuery(v)
		if err != nil {
			return nil, err
		}
		into = append(into, queryParam{strings.ToLower(k), v})
	}
	return into, nil
}

// unescapeQuery is url.QueryUnescape without its copy when nothing is escaped.
func unescapeQuery(s string) (string, error) {
	if !strings.ContainsAny(s, "%+") {
		return s, nil
	}
	return url.QueryUnescape(s)
}

type resourceKind uint8

const (
	resService  resourceKind = iota + 1 // "/" (with or without the slash after the account)
	resQueue                            // /{queue}
	resMessages                         // /{queue}/messages
	resMessage                          // /{queue}/messages/{id}
)

// Handle serves one request; it is the fasthttp.RequestHandler of the Queue endpoint.
func (s *Server) Handle(fc *fasthttp.RequestCtx) {
	c := s.calls.Get().(*call)
	s.p.Begin(&c.Call, fc)
	// Metadata names keep their case on the wire (x-ms-meta-Purpose).
	fc.Response.Header.DisableNormalizing()
	defer func() {
		s.p.Recover(&c.Call, recover(), debug.Stack)
		s.p.FinishPartition(&c.Call, func(err error) { s.p.WriteError(&c.Call, err) })
		s.p.LogRequest(&c.Call, c.resourceName)
		// Nothing keeps c once the reply is written (fasthttp copies the body; the log
		// line and metrics copy what they keep).
		*c = call{}
		s.calls.Put(c)
	}()
	if err := s.serve(c); err != nil {
		s.p.WriteError(&c.Call, err)
	}
}

func (s *Server) serve(c *call) error {
	if err := s.p.ResolveAccount(&c.Call); err != nil {
		return err
	}
	s.p.ApplyCORS(&c.Call)
	q, err := parseQuery(c.TargetQuery, c.queryBuf[:0])
	if err != nil {
		return azerr.New(azerr.InvalidQueryParameterValue)
	}
	c.query = q
	if err := s.p.CheckHeaders(&c.Call); err != nil {
		return err
	}
	if err := parsePath(c); err != nil {
		return err
	}
	op, err := route(c)
	if err != nil {
		return err
	}
	c.Op = op.auth()
	if c.Secondary && op.writes() {
		// The secondary endpoint is a read-only replica: Azure refuses writes to it.
		return azerr.New(azerr.InsufficientAccountPermissions)
	}
	sas, err := s.p.Authenticate(&c.Call, edge.AuthTarget{
		Preflight: op == opPreflight,
		Op:        op.auth(),
		Resource:  c.queue,
		Policy:    s.policyLookup(c),
	})
	if err != nil {
		return err
	}
	_ = sas
	if op != opPreflight && op != opPutMessage && op != opUpdateMessage {
		if err := s.p.Admit(&c.Call, c.partitionOp(op)); err != nil {
			return err
		}
	}
	rp, err := s.dispatch(c, op)
	if err != nil {
		return err
	}
	s.p.Write(&c.Call, rp)
	return nil
}

// parsePath splits the path after the account: "" or "/" is the service; then the queue,
// "messages", and a message id. Names are percent-decoded.
func parsePath(c *call) error {
	p, err := url.PathUnescape(c.RawPath)
	if err != nil {
		return azerr.New(azerr.InvalidURI)
	}
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		c.kind = resService
		return nil
	}
	// Up to three segments (queue, "messages", id) after dropping one trailing slash, cut
	// without allocating a slice of them.
	p = strings.TrimSuffix(p, "/")
	var parts [3]string
	n := 0
	for rest, more := p, true; more; n++ {
		if n == len(parts) {
			return azerr.New(azerr.InvalidURI)
		}
		parts[n], rest, more = strings.Cut(rest, "/")
	}
	c.queue = parts[0]
	switch {
	case n == 1:
		c.kind = resQueue
	case n == 2 && parts[1] == "messages":
		c.kind = resMessages
	case n == 3 && parts[1] == "messages" && parts[2] != "":
		c.kind, c.message = resMessage, parts[2]
	default:
		return azerr.New(azerr.InvalidURI)
	}
	return queue.ValidateName(c.queue)
}

type operation uint8

const (
	opPreflight operation = iota + 1
	opListQueues
	opGetServiceProperties
	opSetServiceProperties
	opGetServiceStats
	opGetAccountInfo
	opCreateQueue
	opDeleteQueue
	opGetMetadata
	opSetMetadata
	opGetACL
	opSetACL
	opPutMessage
	opGetMessages
	opPeekMessages
	opClearMessages
	opUpdateMessage
	opDeleteMessage
)

// writes reports whether op changes anything (refused on the read-only secondary).
func (op operation) writes() bool {
	switch op {
	case opListQueues, opGetServiceProperties, opGetServiceStats, opGetAccountInfo, opGetMetadata, opGetACL, opPeekMessages, opPreflight:
		return false
	}
	return true
}

func (op operation) auth() auth.Operation {
	switch op {
	case opListQueues:
		return auth.ListQueues
	case opGetServiceProperties, opGetAccountInfo:
		return auth.GetServiceProperties
	case opSetServiceProperties:
		return auth.SetServiceProperties
	case opGetServiceStats:
		return auth.GetServiceStats
	case opCreateQueue:
		return auth.CreateQueue
	case opDeleteQueue:
		return auth.DeleteQueue
	case opGetMetadata:
		return auth.GetQueueMetadata
	case opSetMetadata:
		return auth.SetQueueMetadata
	case opGetACL:
		return auth.GetQueueACL
	case opSetACL:
		return auth.SetQueueACL
	case opPutMessage:
		return auth.PutMessage
	case opGetMessages:
		return auth.GetMessages
	case opPeekMessages:
		return auth.PeekMessages
	case opClearMessages:
		return auth.ClearMessages
	case opUpdateMessage:
		return auth.UpdateMessage
	case opDeleteMessage:
		return auth.DeleteMessage
	}
	return auth.Preflight
}

// methodOp is the operation a method selects on a resource.
type methodOp struct {
	method string
	op     operation
}

// route maps verb, resource and comp/restype to an operation (queue.md §2).
func route(c *call) (operation, error) {
	m := c.Method
	if m == http.MethodOptions {
		return opPreflight, nil
	}
	comp, _ := c.param("comp")
	restype, _ := c.param("restype")
	// verb picks the operation of method m.
	verb := func(ops ...methodOp) (operation, error) {
		for _, o := range ops {
			if o.method == m {
				return o.op, nil
			}
		}
		return 0, azerr.New(azerr.UnsupportedHTTPVerb)
	}
	switch c.kind {
	case resService:
		switch {
		case comp == "list":
			return verb(methodOp{http.MethodGet, opListQueues})
		case restype == "service" && comp == "properties":
			return verb(methodOp{http.MethodGet, opGetServiceProperties}, methodOp{http.MethodPut, opSetServiceProperties})
		case restype == "service" && comp == "stats":
			return verb(methodOp{http.MethodGet, opGetServiceStats})
		case restype == "account" && comp == "properties":
			return verb(methodOp{http.MethodGet, opGetAccountInfo}, methodOp{http.MethodHead, opGetAccountInfo})
		}
		return 0, azerr.New(azerr.InvalidQueryParameterValue)
	case resQueue:
		switch comp {
		case "":
			return verb(methodOp{http.MethodPut, opCreateQueue}, methodOp{http.MethodDelete, opDeleteQueue})
		case "metadata":
			return verb(methodOp{http.MethodGet, opGetMetadata}, methodOp{http.MethodHead, opGetMetadata}, methodOp{http.MethodPut, opSetMetadata})
		case "acl":
			return verb(methodOp{http.MethodGet, opGetACL}, methodOp{http.MethodHead, opGetACL}, methodOp{http.MethodPut, opSetACL})
		}
		return 0, azerr.New(azerr.InvalidQueryParameterValue)
	case resMessages:
		if m == http.MethodGet {
			if v, _ := c.param("peekonly"); strings.EqualFold(v, "true") {
				return opPeekMessages, nil
			}
			return opGetMessages, nil
		}
		return verb(methodOp{http.MethodPost, opPutMessage}, methodOp{http.MethodDelete, opClearMessages})
	case resMessage:
		return verb(methodOp{http.MethodPut, opUpdateMessage}, methodOp{http.MethodDelete, opDeleteMessage})
	}
	return 0, azerr.New(azerr.InvalidURI)
}

// policyLookup resolves a service SAS's si against the queue's stored access policies,
// read when the SAS is verified so that a changed policy takes effect at once.
func (s *Server) policyLookup(c *call) func(id string) (*auth.AccessPolicy, bool) {
	return func(id string) (*auth.AccessPolicy, bool) {
		if c.queue == "" {
			return nil, false
		}
		doc, err := s.svc.ACL(c.Ctx, c.Account, c.queue)
		if err != nil || doc == nil {
			return nil, false
		}
		ids, err := auth.ParseSignedIdentifiersFor(auth.ServiceQueue, doc)
		if err != nil {
			return nil, false
		}
		for i := range ids {
			if ids[i].ID == id {
				return &ids[i].Policy, true
			}
		}
		return nil, false
	}
}
