// Package blobwire is the Blob service's HTTP edge: routing of its URL shapes, request
// decoding, responses and the streaming of blob bytes between the socket and the service.
// The shared pipeline (accounts, authentication, CORS, errors) is package edge; the rules
// are package blob.
package blobwire

import (
	"crypto/md5"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/blob"
	"github.com/tablo/tablo/internal/edge"
	"github.com/tablo/tablo/internal/httpserve"
	"github.com/tablo/tablo/internal/metrics"
	"github.com/tablo/tablo/internal/partition"
)

// Options configure a Server.
type Options struct {
	Service  *blob.Service
	Accounts []auth.Account
	Logger   *slog.Logger
	Now      func() time.Time
	// RequestDateWindow is how far a Shared Key request's date may lie from Now (0: 15 min).
	RequestDateWindow time.Duration
	// Metrics, when set, records every request (service "blob"); OAuth accepts Microsoft
	// Entra ID bearer tokens (package edge).
	Metrics *metrics.Metrics
	OAuth   bool
	// Partitions, when set, is the partition layer every request reports to.
	Partitions *partition.Layer
}

// Server serves the Blob REST API.
type Server struct {
	svc *blob.Service
	p   *edge.Pipeline
	log *slog.Logger
}

// New returns a Server.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{svc: o.Service, log: o.Logger}
	s.p = edge.New(edge.Options{
		Service: auth.ServiceBlob, Accounts: o.Accounts, Logger: o.Logger, Now: o.Now,
		Settings: o.Service, KeepHeaderCase: true, RequestDateWindow: o.RequestDateWindow,
		Metrics: o.Metrics, OAuth: o.OAuth, Partitions: o.Partitions,
	})
	return s
}

// DropCaches forgets what the server caches about the store's contents (service
// properties), for a snapshot restore or a reset; the caller keeps requests out meanwhile.
func (s *Server) DropCaches() { s.p.DropCaches() }

// NewHTTPServer returns the streaming HTTP server of the Blob endpoint.
func (s *Server) NewHTTPServer() *httpserve.Server { return s.p.NewStreamingHTTPServer(s.Handle) }

// call is one request: the pipeline's Call plus the addressed resource.
type call struct {
	edge.Call
	container, blob string
	q               url.Values
	sas             *auth.SAS
	anonymous       bool
}

// resourceName is the container or container/blob, for the log.
func (c *call) resourceName() string {
	if c.container == "" {
		return "service"
	}
	if c.blob == "" {
		return c.container
	}
	return c.container + "/" + c.blob
}

// Handle serves one request.
func (s *Server) Handle(fc *fasthttp.RequestCtx) {
	c := &call{}
	s.p.Begin(&c.Call, fc)
	defer func() {
		s.p.Recover(&c.Call, recover(), debug.Stack)
		s.p.FinishPartition(&c.Call, func(err error) { s.writeError(c, err) })
		s.p.LogRequest(&c.Call, c.resourceName)
	}()
	if err := s.serve(c); err != nil {
		s.writeError(c, err)
	}
}

func (s *Server) writeError(c *call, err error) {
	if stream := c.FC.RequestBodyStream(); stream != nil && c.FC.Request.Header.ContentLength() > 8<<10 {
		// The client may still be sending a body we will not read: drain before closing so
		// that it reads the answer rather than a reset.
		httpserve.Linger(c.FC)
		c.FC.SetConnectionClose()
	}
	if err == blob.NotModified {
		c.Status = http.StatusNotModified
		c.FC.SetStatusCode(http.StatusNotModified)
		c.FC.Response.Header.Set("X-Ms-Error-Code", string(azerr.ConditionNotMet))
		return
	}
	s.p.WriteError(&c.Call, err)
	if c.Method == http.MethodHead {
		c.FC.Response.ResetBody()
		c.FC.Response.Header.Del("Content-Type")
	}
}

func (s *Server) serve(c *call) error {
	if err := s.p.ResolveAccount(&c.Call); err != nil {
		return err
	}
	s.p.ApplyCORS(&c.Call)
	if err := s.p.CheckHeaders(&c.Call); err != nil {
		return err
	}
	q, err := url.ParseQuery(c.TargetQuery)
	if err != nil {
		return azerr.New(azerr.InvalidQueryParameterValue)
	}
	for k, v := range q { // parameter names are case-insensitive
		if l := strings.ToLower(k); l != k {
			q[l] = append(q[l], v...)
			delete(q, k)
		}
	}
	c.q = q
	path, err := url.PathUnescape(c.RawPath)
	if err != nil {
		return azerr.New(azerr.InvalidURI)
	}
	path = strings.TrimPrefix(path, "/")
	c.container, c.blob, _ = strings.Cut(path, "/")
	if c.Method == http.MethodOptions {
		if _, err := s.p.Authenticate(&c.Call, edge.AuthTarget{Preflight: true}); err != nil {
			return err
		}
		rp, err := s.p.Preflight(&c.Call)
		return s.reply(c, rp, err)
	}
	h, op, err := s.route(c)
	if err != nil {
		return err
	}
	c.Op = op
	if err := s.authenticate(c, op); err != nil {
		return err
	}
	pop := c.partitionOp(op)
	if err := s.p.Admit(&c.Call, pop); err != nil {
		return err
	}
	if err := h(c); err != nil {
		return err
	}
	if pop.Kind == partition.KindPointRead {
		c.Part.Entities = 1 // a blob read serves one "entity" of the blob's target
	}
	return nil
}

// reply writes a complete reply.
func (s *Server) reply(c *call, rp *edge.Reply, err error) error {
	if err != nil {
		return err
	}
	s.p.Write(&c.Call, rp)
	return nil
}

// handler serves one routed operation.
type handler func(c *call) error

func (s *Server) route(c *call) (handler, auth.Operation, error) {
	restype, comp := c.q.Get("restype"), c.q.Get("comp")
	m := c.Method
	if restype == "account" && comp == "properties" && (m == http.MethodGet || m == http.MethodHead) {
		return s.accountInfo, auth.GetAccountInfo, nil
	}
	if c.container == "" {
		switch {
		case comp == "list" && m == http.MethodGet:
			return s.listContainers, auth.ListContainers, nil
		case restype == "service" && comp == "properties" && m == http.MethodGet:
			return s.getServiceProperties, auth.GetServiceProperties, nil
		case restype == "service" && comp == "properties" && m == http.MethodPut:
			return s.setServiceProperties, auth.SetServiceProperties, nil
		case restype == "service" && comp == "stats" && m == http.MethodGet:
			return s.serviceStats, auth.GetServiceStats, nil
		case comp == "blobs" && m == http.MethodGet:
			return s.findBlobs, auth.FindBlobs, nil
		}
		return nil, 0, unsupported(c)
	}
	if c.blob == "" {
		if restype != "container" {
			return nil, 0, azerr.New(azerr.InvalidQueryParameterValue)
		}
		switch comp {
		case "":
			switch m {
			case http.MethodPut:
				return s.createContainer, auth.CreateContainer, nil
			case http.MethodGet, http.MethodHead:
				return s.containerProperties, auth.GetContainerProperties, nil
			case http.MethodDelete:
				return s.deleteContainer, auth.DeleteContainer, nil
			}
		case "metadata":
			switch m {
			case http.MethodPut:
				return s.setContainerMetadata, auth.SetContainerMetadata, nil
			case http.MethodGet, http.MethodHead:
				return s.containerProperties, auth.GetContainerProperties, nil
			}
		case "acl":
			switch m {
			case http.MethodPut:
				return s.setContainerACL, auth.SetContainerACL, nil
			case http.MethodGet, http.MethodHead:
				return s.getContainerACL, auth.GetContainerACL, nil
			}
		case "lease":
			if m == http.MethodPut {
				return s.leaseContainer, auth.LeaseContainer, nil
			}
		case "list":
			if m == http.MethodGet {
				return s.listBlobs, auth.ListBlobs, nil
			}
		case "blobs":
			if m == http.MethodGet {
				return s.findBlobs, auth.FindBlobsInContainer, nil
			}
		default:
			return nil, 0, azerr.New(azerr.InvalidQueryParameterValue)
		}
		return nil, 0, unsupported(c)
	}
	if err := blob.ValidContainerName(c.container); err != nil {
		return nil, 0, err
	}
	if err := blob.ValidBlobName(c.blob); err != nil {
		return nil, 0, err
	}
	switch m {
	case http.MethodPut:
		switch comp {
		case "":
			if c.Header.Has("X-Ms-Copy-Source") {
				return s.copyBlob, auth.WriteBlob, nil
			}
			return s.putBlob, auth.WriteBlob, nil
		case "block":
			return s.putBlock, auth.WriteBlob, nil
		case "blocklist":
			return s.putBlockList, auth.WriteBlob, nil
		case "appendblock":
			return s.appendBlock, auth.AppendBlob, nil
		case "properties":
			return s.setBlobProperties, auth.WriteBlob, nil
		case "metadata":
			return s.setBlobMetadata, auth.WriteBlob, nil
		case "snapshot":
			return s.snapshotBlob, auth.WriteBlob, nil
		case "lease":
			return s.leaseBlob, auth.LeaseBlob, nil
		case "copy":
			return s.abortCopy, auth.WriteBlob, nil
		case "tier":
			return s.setTier, auth.WriteBlob, nil
		case "page":
			return s.putPage, auth.WriteBlob, nil
		case "tags":
			return s.setBlobTags, auth.SetBlobTags, nil
		}
	case http.MethodGet, http.MethodHead:
		switch comp {
		case "":
			return s.getBlob, auth.ReadBlob, nil
		case "blocklist":
			return s.getBlockList, auth.ReadBlob, nil
		case "metadata":
			return s.getBlobMetadata, auth.ReadBlob, nil
		case "pagelist":
			return s.getPageRanges, auth.ReadBlob, nil
		case "tags":
			if m == http.MethodGet {
				return s.getBlobTags, auth.GetBlobTags, nil
			}
		}
	case http.MethodDelete:
		if comp == "" {
			return s.deleteBlob, auth.DeleteBlob, nil
		}
	}
	if comp != "" {
		return nil, 0, azerr.New(azerr.InvalidQueryParameterValue)
	}
	return nil, 0, unsupported(c)
}

func unsupported(c *call) error {
	return azerr.Newf(azerr.UnsupportedHTTPVerb, "The resource doesn't support specified Http Verb.")
}

// authenticate checks Shared Key or SAS, and allows anonymous reads of public data.
func (s *Server) authenticate(c *call, op auth.Operation) error {
	if c.Header.Get("Authorization") == "" && !c.q.Has("sig") {
		return s.anonymous(c, op)
	}
	t := edge.AuthTarget{Op: op, Resource: c.container}
	if c.blob != "" && c.q.Get("sr") != "c" {
		t.Resource = c.container + "/" + c.blob
	}
	if c.q.Has("si") && c.container != "" {
		t.Policy = func(id string) (*auth.AccessPolicy, bool) {
			ct, err := s.svc.GetContainer(c.Ctx, c.Account, c.container)
			if err != nil {
				return nil, false
			}
			for _, si := range ct.ACL {
				if si.ID == id {
					p := si.Policy
					return &p, true
				}
			}
			return nil, false
		}
	}
	sas, err := s.p.Authenticate(&c.Call, t)
	c.sas = sas
	return err
}

// anonymous allows reads of blobs in public containers, and listing and container
// properties of containers public at the container level; anything else is 404
// ResourceNotFound, which hides whether private data exists.
func (s *Server) anonymous(c *call, op auth.Operation) error {
	if c.container != "" {
		ct, err := s.svc.GetContainer(c.Ctx, c.Account, c.container)
		if err == nil {
			switch {
			case op == auth.ReadBlob && (ct.Public == "blob" || ct.Public == "container"):
				c.anonymous = true
				return nil
			case (op == auth.ListBlobs || op == auth.GetContainerProperties) && ct.Public == "container":
				c.anonymous = true
				return nil
			}
		}
	}
	return azerr.New(azerr.ResourceNotFound)
}

// body is the request body as a blob.Body (Content-Length and checksums).
func (c *call) body() (blob.Body, error) {
	b := blob.Body{Size: int64(c.FC.Request.Header.ContentLength())}
	if b.Size < 0 {
		b.Size = -1
	}
	if r := c.FC.RequestBodyStream(); r != nil {
		b.R = r
	} else {
		b.R = strings.NewReader(string(c.FC.PostBody()))
	}
	var err error
	if v := c.Header.Get("Content-Md5"); v != "" {
		if b.MD5, err = decodeB64(v, 16); err != nil {
			return b, err
		}
	}
	if v := c.Header.Get("X-Ms-Content-Crc64"); v != "" {
		if b.CRC64, err = decodeB64(v, 8); err != nil {
			return b, err
		}
	}
	return b, nil
}

// readCheckedBody is readSmallBody for a small XML request body, checked against the
// Content-MD5 the client sent with it (400 Md5Mismatch if they differ).
func (c *call) readCheckedBody(limit int64) ([]byte, error) {
	raw, err := c.readSmallBody(limit)
	if err != nil {
		return nil, err
	}
	if v := c.Header.Get("Content-Md5"); v != "" {
		want, err := decodeB64(v, 16)
		if err != nil {
			return nil, err
		}
		if sum := md5.Sum(raw); string(sum[:]) != string(want) {
			return nil, azerr.New(azerr.MD5Mismatch)
		}
	}
	return raw, nil
}

// sendXML answers 200 with an XML body.
func (s *Server) sendXML(c *call, body []byte) error {
	c.FC.Response.Header.Set("Content-Type", "application/xml")
	s.status(c, http.StatusOK)
	c.FC.Response.SetBody(body)
	return nil
}

// readSmallBody reads an XML body up to limit.
func (c *call) readSmallBody(limit int64) ([]byte, error) {
	r := c.FC.RequestBodyStream()
	if r == nil {
		return c.FC.PostBody(), nil
	}
	if c.FC.Request.Header.ContentLength() > int(limit) {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	return b, nil
}
