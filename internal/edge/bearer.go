package edge

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
func (p *Pipeline) authenticateBearer(c *Call, token string) error {
	if !c.FC.IsTLS() {
		return azerr.Newf(azerr.AuthenticationFailed, "Authentication scheme Bearer is not allowed with HTTP.")
	}
	t, err := auth.ValidateBearer(token, p.now(), auth.BearerAudiences(c.Account, strings.ToLower(p.svc.String()), c.BaseURL()))
	if err != nil {
		tenant := ""
		if t != nil {
			tenant = t.TenantID
		}
		c.FC.Response.Header.Set("WWW-Authenticate", auth.BearerChallenge(tenant))
		return err
	}
	return nil
}

// operationNames label metrics by operation (auth.Operation's values; 0 is a request refused
// before it was routed).
func operationNames() []string {
	var names []string
	for op := auth.Operation(0); ; op++ {
		name := op.String()
		if op == 0 {
			name = "Unknown"
		} else if name == "" || strings.HasPrefix(name, "Operation(") {
			return names
		}
		names = append(names, name)
	}
}

// DropCaches forgets the cached service properties, for when the store's contents are
// replaced underneath the service (a snapshot restore or a reset). The caller keeps requests
// out meanwhile; bumping every generation also refuses any fill begun before.
func (p *Pipeline) DropCaches() {
	pc := &p.props
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.init()
	for a := range pc.m {
		pc.gen[a]++
	}
	clear(pc.m)
}
