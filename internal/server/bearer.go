package server

import (
	"strings"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
)

// cutBearer returns the token of an "Authorization: Bearer <token>" header.
func cutBearer(authz string) (string, bool) {
	scheme, token, ok := strings.Cut(authz, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// authenticateBearer accepts a Microsoft Entra ID token (with --oauth basic) as the account's
// owner: package auth checks its form, lifetime, audience and issuer, not its signature. A
// rejected token gets Azure's 401 with the challenge SDKs read to find the tenant.
func (s *Server) authenticateBearer(c *call, token string) error {
	if !c.fc.IsTLS() {
		return azerr.Newf(azerr.AuthenticationFailed, "Authentication scheme Bearer is not allowed with HTTP.")
	}
	t, err := auth.ValidateBearer(token, s.now(), auth.BearerAudiences(c.account, "table", c.baseURL()))
	if err != nil {
		tenant := ""
		if t != nil {
			tenant = t.TenantID
		}
		c.fc.Response.Header.Set("WWW-Authenticate", auth.BearerChallenge(tenant))
		s.log.Debug("bearer token refused", "request_id", c.requestID, "reason", auth.Detail(err))
		return err
	}
	return nil
}
