package edge

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/serviceprops"
)

// Service properties, stats and CORS. The properties are one account setting of the
// service holding the rendered StorageServiceProperties XML; CORS rules are read from it
// per request, but only for requests that carry an Origin header (and preflights).

// servicePropsDoc is the account setting that holds the service properties.
const servicePropsDoc = "service-properties"

// MaxPropertiesBody bounds a Set Service Properties body.
const MaxPropertiesBody = serviceprops.MaxBodyBytes

// LoadServiceProperties returns the account's service properties. Requests with an Origin
// header read them on every call, so the decoded form is cached per account; Set replaces
// the cache entry once its write has committed. With SharedSettings the cache is bypassed
// (another front end's Set would not reach it): every call reads the store, so a Set
// acknowledged anywhere is seen by every later request.
func (p *Pipeline) LoadServiceProperties(c *Call) (serviceprops.Properties, error) {
	shared := p.sharedSettings
	if pr, ok := p.props.get(c.Account); ok && !shared {
		return pr, nil
	}
	gen := p.props.generation(c.Account)
	doc, err := p.settings.AccountSetting(c.Ctx, c.Account, servicePropsDoc)
	if err != nil {
		return serviceprops.Properties{}, err
	}
	pr, err := serviceprops.Decode(doc)
	if err != nil {
		// Only this file writes the document, always in a form Decode accepts.
		return serviceprops.Properties{}, azerr.Newf(azerr.InternalError, "The stored service properties are unreadable.")
	}
	if !shared {
		p.props.fill(c.Account, gen, pr)
	}
	return pr, nil
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

// XMLHeader is a header set with Content-Type: application/xml.
func XMLHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/xml")
	return h
}

// GetServiceProperties answers Get Service Properties.
func (p *Pipeline) GetServiceProperties(c *Call) (*Reply, error) {
	pr, err := p.LoadServiceProperties(c)
	if err != nil {
		return nil, err
	}
	return &Reply{Status: http.StatusOK, Header: XMLHeader(), Body: pr.AppendXML(nil)}, nil
}

// SetServiceProperties applies a partial update: elements the request omits keep their
// value.
func (p *Pipeline) SetServiceProperties(c *Call, body []byte) (*Reply, error) {
	parse := serviceprops.Parse
	if p.svc == auth.ServiceBlob {
		parse = serviceprops.ParseBlob
	}
	u, err := parse(body)
	if err != nil {
		return nil, err
	}
	var next serviceprops.Properties
	err = p.settings.UpdateAccountSetting(c.Ctx, c.Account, servicePropsDoc, func(old []byte) ([]byte, error) {
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
	p.props.set(c.Account, next)
	return &Reply{Status: http.StatusAccepted, Header: http.Header{}}, nil
}

// GetServiceStats answers only on the secondary endpoint, as Azure does. A single-node
// server is always in sync, so replication is "live" as of now.
func (p *Pipeline) GetServiceStats(c *Call) (*Reply, error) {
	if !c.Secondary {
		return nil, azerr.New(azerr.InvalidQueryParameterValue)
	}
	b := make([]byte, 0, 192)
	b = append(b, `<?xml version="1.0" encoding="utf-8"?><StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>`...)
	b = append(b, p.now().UTC().Format(http.TimeFormat)...)
	b = append(b, `</LastSyncTime></GeoReplication></StorageServiceStats>`...)
	return &Reply{Status: http.StatusOK, Header: XMLHeader(), Body: b}, nil
}

// Preflight answers a CORS preflight (never authenticated): 200 with the Access-Control-*
// headers of the first matching rule, 403 CorsPreflightFailure when none matches.
func (p *Pipeline) Preflight(c *Call) (*Reply, error) {
	origin := c.Header.Get("Origin")
	method := c.Header.Get("Access-Control-Request-Method")
	if origin == "" || method == "" {
		return nil, azerr.Newf(azerr.InvalidHeaderValue, "A required CORS header is not present.")
	}
	reqHeaders := strings.Join(c.Header.Values("Access-Control-Request-Headers"), ",")
	pr, err := p.LoadServiceProperties(c)
	if err != nil {
		return nil, err
	}
	varyOrigin(c, pr)
	g, ok := pr.Preflight(origin, method, reqHeaders)
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
	return &Reply{Status: http.StatusOK, Header: h}, nil
}

// ApplyCORS adds Access-Control-* headers to an actual (non-preflight) request whose
// Origin matches a stored CORS rule; without a match the request proceeds without them. It
// runs only for requests with an Origin header, before authentication, so error answers
// carry the headers too and browsers can read them.
func (p *Pipeline) ApplyCORS(c *Call) {
	if !c.Header.Has("Origin") || c.Method == http.MethodOptions {
		return
	}
	pr, err := p.LoadServiceProperties(c)
	if err != nil {
		p.log.Warn("cors: service properties", "request_id", c.RequestID, "err", err)
		return
	}
	varyOrigin(c, pr)
	g, ok := pr.Actual(c.Header.Get("Origin"), c.Method)
	if !ok {
		return
	}
	h := &c.FC.Response.Header
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
func varyOrigin(c *Call, p serviceprops.Properties) {
	if len(p.Cors) > 0 {
		c.FC.Response.Header.Set("Vary", "Origin")
	}
}
