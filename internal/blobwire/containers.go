package blobwire

import (
	"net/http"
	"strconv"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/blob"
	"github.com/tablo/tablo/internal/edge"
)

func (s *Server) status(c *call, code int) {
	c.Status = code
	c.FC.SetStatusCode(code)
}

func (s *Server) createContainer(c *call) error {
	ct, err := s.svc.CreateContainer(c.Ctx, c.Account, c.container, c.Header.Get("X-Ms-Blob-Public-Access"), c.meta())
	if err != nil {
		return err
	}
	setETag(&c.FC.Response.Header, ct.ETag(), ct.Modified)
	s.status(c, http.StatusCreated)
	return nil
}

func setContainerHeaders(c *call, ct *blob.Container, now int64) {
	h := &c.FC.Response.Header
	setETag(h, ct.ETag(), ct.Modified)
	setMeta(h, ct.Meta)
	h.Set("X-Ms-Lease-Status", ct.Lease.Status(now))
	h.Set("X-Ms-Lease-State", ct.Lease.State(now))
	if d := ct.Lease.DurationName(now); d != "" {
		h.Set("X-Ms-Lease-Duration", d)
	}
	if ct.Public != "" {
		h.Set("X-Ms-Blob-Public-Access", ct.Public)
	}
	h.Set("X-Ms-Has-Immutability-Policy", "false")
	h.Set("X-Ms-Has-Legal-Hold", "false")
	h.Set("X-Ms-Default-Encryption-Scope", "$account-encryption-key")
	h.Set("X-Ms-Deny-Encryption-Scope-Override", "false")
}

func (s *Server) containerProperties(c *call) error {
	ct, err := s.svc.GetContainer(c.Ctx, c.Account, c.container)
	if err != nil {
		return err
	}
	if id := c.Header.Get("X-Ms-Lease-Id"); id != "" && (!ct.Lease.Active(s.svc.Now()) || id != ct.Lease.ID) {
		return azerr.New(azerr.LeaseIDMismatchWithContainerOperation)
	}
	setContainerHeaders(c, ct, s.svc.Now())
	s.status(c, http.StatusOK)
	return nil
}

func (s *Server) deleteContainer(c *call) error {
	cond, err := c.cond()
	if err != nil {
		return err
	}
	if cond.IfMatch != "" || cond.IfNoneMatch != "" {
		return azerr.New(azerr.UnsupportedHeader)
	}
	if err := s.svc.DeleteContainer(c.Ctx, c.Account, c.container, cond); err != nil {
		return err
	}
	s.status(c, http.StatusAccepted)
	return nil
}

func (s *Server) setContainerMetadata(c *call) error {
	cond, err := c.cond()
	if err != nil {
		return err
	}
	if cond.IfMatch != "" || cond.IfNoneMatch != "" || !cond.IfUnmodifiedSince.IsZero() {
		return azerr.New(azerr.UnsupportedHeader)
	}
	ct, err := s.svc.SetContainerMetadata(c.Ctx, c.Account, c.container, c.meta(), cond)
	if err != nil {
		return err
	}
	setETag(&c.FC.Response.Header, ct.ETag(), ct.Modified)
	s.status(c, http.StatusOK)
	return nil
}

func (s *Server) getContainerACL(c *call) error {
	ct, err := s.svc.GetContainer(c.Ctx, c.Account, c.container)
	if err != nil {
		return err
	}
	h := &c.FC.Response.Header
	setETag(h, ct.ETag(), ct.Modified)
	if ct.Public != "" {
		h.Set("X-Ms-Blob-Public-Access", ct.Public)
	}
	h.Set("Content-Type", "application/xml")
	body := auth.AppendSignedIdentifiersXML(nil, ct.ACL) // with its XML declaration
	s.status(c, http.StatusOK)
	if c.Method != http.MethodHead {
		c.FC.Response.SetBody(body)
	}
	return nil
}

func (s *Server) setContainerACL(c *call) error {
	cond, err := c.cond()
	if err != nil {
		return err
	}
	body, err := c.readSmallBody(64 << 10)
	if err != nil {
		return err
	}
	ids, err := auth.ParseSignedIdentifiersFor(auth.ServiceBlob, body)
	if err != nil {
		return err
	}
	ct, err := s.svc.SetContainerACL(c.Ctx, c.Account, c.container, c.Header.Get("X-Ms-Blob-Public-Access"), ids, cond)
	if err != nil {
		return err
	}
	setETag(&c.FC.Response.Header, ct.ETag(), ct.Modified)
	s.status(c, http.StatusOK)
	return nil
}

// leaseRequest reads a lease call's headers.
func (c *call) leaseRequest() (blob.LeaseRequest, error) {
	r := blob.LeaseRequest{
		Action:      c.Header.Get("X-Ms-Lease-Action"),
		ID:          c.Header.Get("X-Ms-Lease-Id"),
		ProposedID:  c.Header.Get("X-Ms-Proposed-Lease-Id"),
		BreakPeriod: -1,
	}
	if r.Action == "" {
		return r, azerr.New(azerr.MissingRequiredHeader)
	}
	if r.Action == "acquire" {
		d, err := strconv.Atoi(c.Header.Get("X-Ms-Lease-Duration"))
		if err != nil {
			return r, azerr.New(azerr.InvalidHeaderValue)
		}
		r.Duration = d
	}
	if v := c.Header.Get("X-Ms-Lease-Break-Period"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 || p > 60 {
			return r, azerr.New(azerr.InvalidHeaderValue)
		}
		r.BreakPeriod = p
	}
	switch r.Action {
	case "renew", "release", "change":
		if r.ID == "" {
			return r, azerr.New(azerr.MissingRequiredHeader)
		}
	}
	if r.Action == "change" && r.ProposedID == "" {
		return r, azerr.New(azerr.MissingRequiredHeader)
	}
	return r, nil
}

// leaseReply answers a lease call with its status (acquire 201, break 202, others 200).
func (s *Server) leaseReply(c *call, action string, res blob.LeaseResult, etag string, modified int64) {
	h := &c.FC.Response.Header
	setETag(h, etag, modified)
	code := http.StatusOK
	switch action {
	case "acquire":
		code = http.StatusCreated
	case "break":
		code = http.StatusAccepted
		h.Set("X-Ms-Lease-Time", strconv.Itoa(res.BreakSeconds))
	}
	if res.ID != "" && action != "break" {
		h.Set("X-Ms-Lease-Id", res.ID)
	}
	s.status(c, code)
}

func (s *Server) leaseContainer(c *call) error {
	r, err := c.leaseRequest()
	if err != nil {
		return err
	}
	cond, err := c.cond()
	if err != nil {
		return err
	}
	cond.LeaseID = ""
	ct, res, err := s.svc.LeaseContainer(c.Ctx, c.Account, c.container, r, cond)
	if err != nil {
		return containerLeaseErr(err)
	}
	s.leaseReply(c, r.Action, res, ct.ETag(), ct.Modified)
	return nil
}

// containerLeaseErr words lease-call errors for a container (same codes as blobs).
func containerLeaseErr(err error) error { return err }

func (s *Server) accountInfo(c *call) error {
	h := &c.FC.Response.Header
	h.Set("X-Ms-Sku-Name", "Standard_RAGRS")
	h.Set("X-Ms-Account-Kind", "StorageV2")
	h.Set("X-Ms-Is-Hns-Enabled", "false")
	s.status(c, http.StatusOK)
	return nil
}

func (s *Server) getServiceProperties(c *call) error {
	rp, err := s.p.GetServiceProperties(&c.Call)
	return s.reply(c, rp, err)
}

func (s *Server) setServiceProperties(c *call) error {
	body, err := c.readSmallBody(edge.MaxPropertiesBody)
	if err != nil {
		return err
	}
	rp, err := s.p.SetServiceProperties(&c.Call, body)
	return s.reply(c, rp, err)
}

func (s *Server) serviceStats(c *call) error {
	rp, err := s.p.GetServiceStats(&c.Call)
	return s.reply(c, rp, err)
}
