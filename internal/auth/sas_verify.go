package auth

import (
	"crypto/hmac"
	"encoding/base64"
	"net/netip"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

// SASRequest is what the server knows about a request when verifying its SAS.
type SASRequest struct {
	// Now is the time the request arrived.
	Now time.Time
	// StartSkew tolerates a client clock that runs ahead: a token whose st is at most this far
	// in the future is accepted. Zero means strict. It never extends se.
	StartSkew time.Duration
	// TLS reports that the request arrived over https.
	TLS bool
	// ClientIP is the address of the client (zero when unknown; then any sip fails).
	ClientIP netip.Addr
	// Policy looks up a stored access policy by id among the policies of the table named by
	// the SAS's tn (the queue or container the URL names). Nil means there are none.
	Policy func(id string) (*AccessPolicy, bool)
	// Resource is what a Queue or Blob service SAS covers, from the URL: the queue name, the
	// container name (sr=c) or "container/blob" (sr=b), decoded. Unused for Table.
	Resource string
}

// Verify authenticates the SAS against acct, the account addressed by the URL (nil when the
// server does not know it), in the order of auth.md §7.2: stored policy, signature (with each
// account key), time window, protocol, source IP. On success the SAS holds its effective grant
// and Authorize may be called. Verify is not safe for concurrent use on one SAS.
//
// Errors: 403 AuthenticationFailed for everything except spr (403
// AuthorizationProtocolMismatch) and sip (403 AuthorizationSourceIPMismatch).
func (s *SAS) Verify(acct *Account, r SASRequest) error {
	s.verified, s.perm = false, 0
	if err := s.validate(); err != nil {
		return err
	}
	if acct == nil {
		return authFailed("unknown account")
	}
	if s.Kind == ServiceSAS && s.Service != ServiceTable {
		s.ResourceName = r.Resource
	}
	g, err := s.grant(r.Policy)
	if err != nil {
		return err
	}
	if !s.signatureMatches(acct) {
		return authFailed("signature mismatch")
	}
	if g.hasStart && r.Now.Add(r.StartSkew).Before(g.start) {
		return authFailed("signed start time is in the future")
	}
	if !r.Now.Before(g.expiry) {
		return authFailed("signed expiry time has passed")
	}
	if s.Protocol == "https" && !r.TLS {
		return fail(azerr.AuthorizationProtocolMismatch, "SAS requires https")
	}
	if s.IP != "" && !s.allowsIP(r.ClientIP) {
		return fail(azerr.AuthorizationSourceIPMismatch, "client address is outside sip")
	}
	s.verified, s.perm = true, g.perm
	return nil
}

// grant is the effective permission set and time window after merging a stored policy.
type grant struct {
	perm          perms
	hasStart      bool
	start, expiry time.Time
}

// grant merges the SAS with its stored access policy (service SAS with si only). A field may
// come from the SAS or from the policy, not both.
func (s *SAS) grant(lookup func(string) (*AccessPolicy, bool)) (grant, error) {
	g := grant{hasStart: s.Start != "", start: s.start, expiry: s.expiry}
	letters := s.Permissions
	hasExpiry := s.Expiry != ""
	if s.Kind == ServiceSAS && s.Identifier != "" {
		var p *AccessPolicy
		ok := false
		if lookup != nil {
			p, ok = lookup(s.Identifier)
		}
		if !ok || p == nil {
			return grant{}, authFailed("stored access policy " + s.Identifier + " does not exist")
		}
		if (p.Start != nil && s.Start != "") || (p.Expiry != nil && s.Expiry != "") ||
			(p.Permission != "" && s.Permissions != "") {
			return grant{}, authFailed("a field is given both in the SAS and in its stored access policy")
		}
		if p.Start != nil {
			g.hasStart, g.start = true, *p.Start
		}
		if p.Expiry != nil {
			hasExpiry, g.expiry = true, *p.Expiry
		}
		if p.Permission != "" {
			letters = p.Permission
		}
	}
	if !hasExpiry || letters == "" {
		return grant{}, authFailed("the SAS and its stored access policy give no expiry or no permissions")
	}
	allowed := allLetters
	if s.Kind == ServiceSAS {
		allowed = s.serviceLetters()
	}
	var ok bool
	if g.perm, ok = parsePerms(letters, allowed); !ok {
		return grant{}, authFailed("permissions hold an unknown letter")
	}
	if g.hasStart && !g.expiry.After(g.start) {
		return grant{}, authFailed("signed expiry time must be after signed start time")
	}
	return g, nil
}

func (s *SAS) signatureMatches(acct *Account) bool {
	sig, err := base64.StdEncoding.DecodeString(s.Signature)
	if err != nil {
		return false
	}
	sts := s.StringToSign(acct.Name)
	for _, key := range acct.Keys {
		if hmac.Equal(mac(key, sts), sig) {
			return true
		}
	}
	return false
}

func (s *SAS) allowsIP(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	return ip.IsValid() && ip.BitLen() == s.ipLo.BitLen() &&
		ip.Compare(s.ipLo) >= 0 && ip.Compare(s.ipHi) <= 0
}
