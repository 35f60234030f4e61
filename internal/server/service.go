package server

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/serviceprops"
)

// Service properties, stats and CORS. The properties are one account setting holding the
// rendered StorageServiceProperties XML; CORS rules are read from it per request, but only
// for requests that carry an Origin header (and preflights).

// servicePropsDoc is the account setting that holds the service properties.
const servicePropsDoc = "service-properties"

// loadServiceProperties returns the account's service properties. Requests with an Origin
// header read them on every call, so the decoded form is cached per account; Set replaces
// the cache entry once its write has committed. On a store shared with other front ends the
// cache is bypassed (another front end's Set would not reach it): every call reads the
// store, so a Set acknowledged anywhere is seen by every later request.
func (s *Server) loadServiceProperties(c *call) (serviceprops.Properties, error) {
	shared := s.svc.Shared()
	if p, ok := s.props.get(c.account); ok && !shared {
		return p, nil
	}
	gen := s.props.generation(c.account)
	doc, err := s.svc.AccountSetting(c.ctx, c.account, servicePropsDoc)
	if err != nil {
		return serviceprops.Properties{}, err
	}
	p, err := serviceprops.Decode(doc)
	if err != nil {
		// Only this file writes the document, always in a form Decode accepts.
		return serviceprops.Properties{}, azerr.Newf(azerr.InternalError, "The stored service properties are unreadable.")
	}
	if !shared {
		s.props.fill(c.account, gen, p)
	}
	return p, nil
}

// propsCache caches decoded service properties per account. A fill only lands if no Set
// happened since the read began (gen), so a slow reader never caches a superseded value.
type propsCache struct {
	mu  sync.Mutex
	m   map[string]serviceprops.Properties
	gen map[string]uint64
}

func (pc *propsCache) get(account string) (serviceprops.Properties, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	p, ok := pc.m[account]
	return p, ok
}

func (pc *propsCache) generation(account string) uint64 {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.gen[account]
}

func (pc *propsCache) fill(account string, gen uint64, p serviceprops.Properties) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.gen[account] != gen {
		return
	}
	pc.init()
	pc.m[account] = p
}

// init makes the maps; the caller holds mu.
func (pc *propsCache) init() {
	if pc.m == nil {
		pc.m = map[string]serviceprops.Properties{}
		pc.gen = map[string]uint64{}
	}
}

// set records a committed Set: newer than anything a concurrent reader could fill.
func (pc *propsCache) set(account string, p serviceprops.Properties) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.init()
	pc.gen[account]++
	pc.m[account] = p
}

func (s *Server) getServiceProperties(c *call) (*reply, error) {
	p, err := s.loadServiceProperties(c)
	if err != nil {
		return nil, err
	}
	return &reply{status: http.StatusOK, header: xmlHeader(), body: p.AppendXML(nil)}, nil
}

// setServiceProperties applies a partial update: elements the request omits keep their value.
func (s *Server) setServiceProperties(c *call) (*reply, error) {
	body, err := readBody(c, serviceprops.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	u, err := serviceprops.Parse(body)
	if err != nil {
		return nil, err
	}
	var next serviceprops.Properties
	err = s.svc.UpdateAccountSetting(c.ctx, c.account, servicePropsDoc, func(old []byte) ([]byte, error) {
		cur, err := serviceprops.Decode(old)
		if err != nil {
			cur = serviceprops.Default() // unreadable: start over rather than fail forever
		}
		next = cur.Apply(u)
		return next.AppendXML(nil), nil
	})
	if err != nil {
		return nil, err
	}
	s.props.set(c.account, next)
	return &reply{status: http.StatusAccepted, header: http.Header{}}, nil
}

// getServiceStats answers only on the secondary endpoint, as Azure does. A single-node
// server is always in sync, so replication is "live" as of now.
func (s *Server) getServiceStats(c *call) (*reply, error) {
	if !c.secondary {
		return nil, azerr.New(azerr.InvalidQueryParameterValue)
	}
	b := make([]byte, 0, 192)
	b = append(b, `<?xml version="1.0" encoding="utf-8"?><StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>`...)
	b = append(b, s.now().UTC().Format(http.TimeFormat)...)
	b = append(b, `</LastSyncTime></GeoReplication></StorageServiceStats>`...)
	return &reply{status: http.StatusOK, header: xmlHeader(), body: b}, nil
}

// preflight answers a CORS preflight (never authenticated): 200 with the Access-Control-*
// headers of the first matching rule, 403 CorsPreflightFailure when none matches.
func (s *Server) preflight(c *call) (*reply, error) {
	origin := c.header.Get("Origin")
	method := c.header.Get("Access-Control-Request-Method")
	if origin == "" || method == "" {
		return nil, azerr.Newf(azerr.InvalidHeaderValue, "A required CORS header is not present.")
	}
	reqHeaders := strings.Join(c.header.Values("Access-Control-Request-Headers"), ",")
	p, err := s.loadServiceProperties(c)
	if err != nil {
		return nil, err
	}
	varyOrigin(c, p)
	g, ok := p.Preflight(origin, method, reqHeaders)
	if !ok {
		return nil, azerr.New(azerr.CorsPreflightFailure)
	}
	h := http.Header{}
	h.Set("Access-Control-Allow-Origin", g.AllowOrigin)
	h.Set("Access-Control-Allow-Methods", method)
	if reqHeaders != "" {
		h.Set("Access-Control-Allow-Headers", reqHeaders)
	}
	h.Set("Access-Control-Max-Age", strconv.Itoa(g.Rule.MaxAgeInSeconds))
	if g.Credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	return &reply{status: http.StatusOK, header: h}, nil
}

// applyCORS adds Access-Control-* headers to an actual (non-preflight) request whose Origin
// matches a stored CORS rule; without a match the request proceeds without them. It runs
// only for requests with an Origin header, before authentication, so error answers carry
// the headers too and browsers can read them.
func (s *Server) applyCORS(c *call) {
	p, err := s.loadServiceProperties(c)
	if err != nil {
		s.log.Warn("cors: service properties", "request_id", c.requestID, "err", err)
		return
	}
	varyOrigin(c, p)
	g, ok := p.Actual(c.header.Get("Origin"), c.method)
	if !ok {
		return
	}
	h := &c.fc.Response.Header
	h.Set("Access-Control-Allow-Origin", g.AllowOrigin)
	if len(g.Rule.ExposedHeaders) > 0 {
		h.Set("Access-Control-Expose-Headers", strings.Join(g.Rule.ExposedHeaders, ","))
	}
	if g.Credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
}

// varyOrigin marks the response as depending on Origin whenever the account has CORS rules,
// matched or not, as Azure does: a cache between browser and server must not hand one
// origin's answer (with or without Access-Control-* headers) to another.
func varyOrigin(c *call, p serviceprops.Properties) {
	if len(p.Cors) > 0 {
		c.fc.Response.Header.Set("Vary", "Origin")
	}
}
