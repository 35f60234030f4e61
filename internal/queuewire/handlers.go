package queuewire

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/edge"
	"github.com/tablo/tablo/internal/queue"
)

func (s *Server) dispatch(c *call, op operation) (*edge.Reply, error) {
	switch op {
	case opPreflight:
		return s.p.Preflight(&c.Call)
	case opListQueues:
		return s.listQueues(c)
	case opGetServiceProperties:
		return s.p.GetServiceProperties(&c.Call)
	case opSetServiceProperties:
		body, err := readBody(c, edge.MaxPropertiesBody)
		if err != nil {
			return nil, err
		}
		return s.p.SetServiceProperties(&c.Call, body)
	case opGetServiceStats:
		return s.p.GetServiceStats(&c.Call)
	case opGetAccountInfo:
		h := http.Header{}
		h.Set("x-ms-sku-name", "Standard_RAGRS")
		h.Set("x-ms-account-kind", "StorageV2")
		return &edge.Reply{Status: http.StatusOK, Header: h}, nil
	case opCreateQueue:
		return s.createQueue(c)
	case opDeleteQueue:
		if err := s.svc.DeleteQueue(c.Ctx, c.Account, c.queue); err != nil {
			return nil, err
		}
		return noContent(), nil
	case opGetMetadata:
		return s.getMetadata(c)
	case opSetMetadata:
		md, err := metadata(c)
		if err != nil {
			return nil, err
		}
		if err := s.svc.SetMetadata(c.Ctx, c.Account, c.queue, md); err != nil {
			return nil, err
		}
		return noContent(), nil
	case opGetACL:
		return s.getACL(c)
	case opSetACL:
		return s.setACL(c)
	case opPutMessage:
		return s.putMessage(c)
	case opGetMessages:
		return s.getMessages(c)
	case opPeekMessages:
		return s.peekMessages(c)
	case opClearMessages:
		if err := s.svc.ClearMessages(c.Ctx, c.Account, c.queue); err != nil {
			return nil, err
		}
		return noContent(), nil
	case opUpdateMessage:
		return s.updateMessage(c)
	case opDeleteMessage:
		receipt, ok := c.param("popreceipt")
		if !ok {
			return nil, missingParam("popreceipt")
		}
		if err := s.svc.DeleteMessage(c.Ctx, c.Account, c.queue, c.message, receipt); err != nil {
			return nil, err
		}
		return noContent(), nil
	}
	return nil, azerr.New(azerr.NotImplemented)
}

func noContent() *edge.Reply { return &edge.Reply{Status: http.StatusNoContent} }

func xmlReply(status int, body []byte) *edge.Reply {
	return &edge.Reply{Status: status, ContentType: "application/xml", Body: body}
}

// messagesReply renders a QueueMessagesList into a pooled buffer (message replies are the
// frequent ones).
func (s *Server) messagesReply(status int, msgs []queue.Message, put, peek bool) *edge.Reply {
	buf := s.bufs.Get()
	buf.B = appendMessages(buf.B[:0], msgs, put, peek)
	return &edge.Reply{Status: status, ContentType: "application/xml", Body: buf.B, Pooled: buf, Pool: &s.bufs}
}

func missingParam(name string) error {
	return azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", name)
}

// readBody returns the request body; more than limit bytes is 413 RequestBodyTooLarge.
func readBody(c *call, limit int) ([]byte, error) {
	b := c.FC.Request.Body()
	if len(b) > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge).With("MaxLimit", strconv.Itoa(limit))
	}
	return b, nil
}

// intParam reads an integer query parameter: absent gives def; not an integer is 400
// InvalidQueryParameterValue.
func intParam(c *call, name string, def int64) (int64, error) {
	v, ok := c.param(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, azerr.New(azerr.InvalidQueryParameterValue).With("QueryParameterName", name).With("QueryParameterValue", v)
	}
	return n, nil
}

// metadata collects the x-ms-meta-* headers with their names as sent (fasthttp's parsed
// headers have normalized case; the raw block keeps it). An empty value drops the name.
func metadata(c *call) ([]queue.Meta, error) {
	var md []queue.Meta
	raw := c.FC.Request.Header.RawHeaders()
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		line = bytes.TrimRight(line, "\r")
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || len(name) < 10 || !strings.EqualFold(string(name[:10]), "x-ms-meta-") {
			continue
		}
		v := strings.TrimSpace(string(value))
		if v == "" {
			continue
		}
		md = append(md, queue.Meta{Name: string(name[10:]), Value: v})
	}
	return md, queue.ValidateMetadata(md)
}

func (s *Server) createQueue(c *call) (*edge.Reply, error) {
	md, err := metadata(c)
	if err != nil {
		return nil, err
	}
	created, err := s.svc.CreateQueue(c.Ctx, c.Account, c.queue, md)
	if err != nil {
		return nil, err
	}
	if created {
		return &edge.Reply{Status: http.StatusCreated}, nil
	}
	return noContent(), nil
}

func (s *Server) getMetadata(c *call) (*edge.Reply, error) {
	p, err := s.svc.GetProperties(c.Ctx, c.Account, c.queue)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h["x-ms-approximate-messages-count"] = []string{strconv.Itoa(p.ApproximateCount)}
	for _, m := range p.Metadata {
		h["x-ms-meta-"+m.Name] = []string{m.Value}
	}
	return &edge.Reply{Status: http.StatusOK, Header: h}, nil
}

func (s *Server) getACL(c *call) (*edge.Reply, error) {
	doc, err := s.svc.ACL(c.Ctx, c.Account, c.queue)
	if err != nil {
		return nil, err
	}
	ids, err := auth.ParseSignedIdentifiersFor(auth.ServiceQueue, doc)
	if err != nil {
		return nil, err
	}
	return xmlReply(http.StatusOK, auth.AppendSignedIdentifiersXML(nil, ids)), nil
}

func (s *Server) setACL(c *call) (*edge.Reply, error) {
	body, err := readBody(c, 64<<10)
	if err != nil {
		return nil, err
	}
	ids, err := auth.ParseSignedIdentifiersFor(auth.ServiceQueue, body)
	if err != nil {
		return nil, err
	}
	var doc []byte
	if len(ids) > 0 {
		doc = auth.AppendSignedIdentifiersXML(nil, ids)
	}
	if err := s.svc.SetACL(c.Ctx, c.Account, c.queue, doc); err != nil {
		return nil, err
	}
	return noContent(), nil
}

func (s *Server) listQueues(c *call) (*edge.Reply, error) {
	prefix, hasPrefix := c.param("prefix")
	marker, hasMarker := c.param("marker")
	maxStr, hasMax := c.param("maxresults")
	max := int64(queue.MaxListResults)
	if hasMax {
		n, err := intParam(c, "maxresults", 0)
		if err != nil {
			return nil, err
		}
		if n < 1 {
			return nil, azerr.New(azerr.OutOfRangeQueryParameterValue).With("QueryParameterName", "maxresults").With("QueryParameterValue", maxStr)
		}
		max = min(n, queue.MaxListResults)
	}
	include, _ := c.param("include")
	withMeta := false
	for _, v := range strings.Split(include, ",") {
		switch strings.TrimSpace(v) {
		case "metadata":
			withMeta = true
		case "":
		default:
			return nil, azerr.New(azerr.InvalidQueryParameterValue).With("QueryParameterName", "include").With("QueryParameterValue", include)
		}
	}
	items, next, err := s.svc.ListQueues(c.Ctx, c.Account, prefix, marker, int(max))
	if err != nil {
		return nil, err
	}
	b := append(make([]byte, 0, 256), xmlDecl...)
	b = append(b, `<EnumerationResults ServiceEndpoint="`...)
	b = appendEscaped(b, c.BaseURL()+"/")
	b = append(b, `">`...)
	if hasPrefix {
		b = appendElem(b, "Prefix", prefix)
	}
	if hasMarker {
		b = appendElem(b, "Marker", marker)
	}
	if hasMax {
		b = appendElem(b, "MaxResults", maxStr)
	}
	if len(items) == 0 {
		b = append(b, "<Queues />"...)
	} else {
		b = append(b, "<Queues>"...)
		for _, it := range items {
			b = append(b, "<Queue>"...)
			b = appendElem(b, "Name", it.Name)
			if withMeta {
				if len(it.Metadata) == 0 {
					b = append(b, "<Metadata />"...)
				} else {
					b = append(b, "<Metadata>"...)
					for _, m := range it.Metadata {
						b = appendElem(b, m.Name, m.Value)
					}
					b = append(b, "</Metadata>"...)
				}
			}
			b = append(b, "</Queue>"...)
		}
		b = append(b, "</Queues>"...)
	}
	if next == "" {
		b = append(b, "<NextMarker />"...)
	} else {
		b = appendElem(b, "NextMarker", next)
	}
	b = append(b, "</EnumerationResults>"...)
	return xmlReply(http.StatusOK, b), nil
}

func (s *Server) putMessage(c *call) (*edge.Reply, error) {
	vt, err := intParam(c, "visibilitytimeout", 0)
	if err != nil {
		return nil, err
	}
	ttl, err := intParam(c, "messagettl", queue.DefaultTTL)
	if err != nil {
		return nil, err
	}
	body, err := readBody(c, maxBody)
	if err != nil {
		return nil, err
	}
	text, present, err := ParseMessageText(body)
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, badXML()
	}
	pop := c.partitionOp(opPutMessage)
	pop.Entities = messageUnits(text)
	if err := s.p.Admit(&c.Call, pop); err != nil {
		return nil, err
	}
	m, err := s.svc.PutMessage(c.Ctx, c.Account, c.queue, text, vt, ttl)
	if err != nil {
		return nil, err
	}
	return s.messagesReply(http.StatusCreated, []queue.Message{m}, true, false), nil
}

func (s *Server) getMessages(c *call) (*edge.Reply, error) {
	n, err := intParam(c, "numofmessages", 1)
	if err != nil {
		return nil, err
	}
	vt, err := intParam(c, "visibilitytimeout", queue.DefaultVisibilityGet)
	if err != nil {
		return nil, err
	}
	if err := queue.CheckCount(n); err != nil {
		return nil, err
	}
	msgs, err := s.svc.GetMessages(c.Ctx, c.Account, c.queue, int(n), vt)
	if err != nil {
		return nil, err
	}
	c.Part.Entities = len(msgs)
	return s.messagesReply(http.StatusOK, msgs, false, false), nil
}

func (s *Server) peekMessages(c *call) (*edge.Reply, error) {
	n, err := intParam(c, "numofmessages", 1)
	if err != nil {
		return nil, err
	}
	if err := queue.CheckCount(n); err != nil {
		return nil, err
	}
	msgs, err := s.svc.PeekMessages(c.Ctx, c.Account, c.queue, int(n))
	if err != nil {
		return nil, err
	}
	c.Part.Entities = len(msgs)
	return s.messagesReply(http.StatusOK, msgs, false, true), nil
}

func (s *Server) updateMessage(c *call) (*edge.Reply, error) {
	receipt, ok := c.param("popreceipt")
	if !ok {
		return nil, missingParam("popreceipt")
	}
	if _, ok := c.param("visibilitytimeout"); !ok {
		return nil, missingParam("visibilitytimeout")
	}
	vt, err := intParam(c, "visibilitytimeout", 0)
	if err != nil {
		return nil, err
	}
	body, err := readBody(c, maxBody)
	if err != nil {
		return nil, err
	}
	var text *string
	if len(bytes.TrimSpace(body)) > 0 {
		t, present, err := ParseMessageText(body)
		if err != nil {
			return nil, err
		}
		if present {
			text = &t
		}
	}
	pop := c.partitionOp(opUpdateMessage)
	pop.Entities = 1
	if text != nil {
		pop.Entities = messageUnits(*text)
	}
	if err := s.p.Admit(&c.Call, pop); err != nil {
		return nil, err
	}
	m, err := s.svc.UpdateMessage(c.Ctx, c.Account, c.queue, c.message, receipt, text, vt)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h["x-ms-popreceipt"] = []string{m.PopReceipt}
	h["x-ms-time-next-visible"] = []string{m.NextVisible.UTC().Format(http.TimeFormat)}
	return &edge.Reply{Status: http.StatusNoContent, Header: h}, nil
}
