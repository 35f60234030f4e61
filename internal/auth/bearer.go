package auth

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

// Bearer tokens (Microsoft Entra ID access tokens, JWTs) are checked the way a local server
// can: structure, lifetime, audience and issuer form. Their signatures are NOT verified (no
// identity provider is reachable), so any well-formed token is accepted and acts as the
// account's owner. Azure's answers to a bad token are 401 InvalidAuthenticationInfo with a
// WWW-Authenticate challenge and a detail saying which check failed.

// BearerClockSkew is the lifetime tolerance, as Entra ID token validation allows.
const BearerClockSkew = 5 * time.Minute

// StorageAudience is the audience of tokens for any storage account (the Azure SDKs ask for
// the scope StorageAudience + "/.default").
const StorageAudience = "https://storage.azure.com"

// storageAppID is Azure Storage's application id, the audience of some v1 tokens.
const storageAppID = "e406a681-f3d4-42a8-90b6-c2b029497af1"

// bearerMessage is Azure's message for a rejected bearer token.
const bearerMessage = "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."

// BearerToken is a validated token's claims that matter here.
type BearerToken struct {
	TenantID string
	Subject  string
	Expires  time.Time
}

// BearerAudiences lists the audiences a token may carry to reach account's service (e.g.
// "table") at serviceURL, the service root as the client addressed it (e.g.
// https://127.0.0.1:10002/devstoreaccount1 or https://devstoreaccount1.table.localhost:10002).
func BearerAudiences(account, service, serviceURL string) []string {
	return []string{
		StorageAudience, storageAppID,
		"https://" + account + "." + service + ".core.windows.net",
		strings.TrimSuffix(serviceURL, "/"),
	}
}

// ValidateBearer checks token (the part after "Bearer ") at time now against audiences
// (compared without a trailing slash and, for their scheme and host, case-insensitively).
// It returns the token's claims, or an error for 401 InvalidAuthenticationInfo whose Detail
// says which check failed.
func ValidateBearer(token string, now time.Time, audiences []string) (*BearerToken, error) {
	c, ok := parseJWT(token)
	if !ok {
		return nil, bearerFail("Signature validation failed. The token is not a well-formed JWT.")
	}
	t := &BearerToken{TenantID: c.Tid, Subject: c.Sub}
	exp, ok := numericDate(c.Exp)
	if !ok {
		return t, bearerFail("Lifetime validation failed. The token has no valid expiration time.")
	}
	t.Expires = exp
	if now.After(exp.Add(BearerClockSkew)) {
		return t, bearerFail("Lifetime validation failed. The token is expired.")
	}
	if c.Nbf != nil {
		nbf, ok := numericDate(c.Nbf)
		if !ok || now.Add(BearerClockSkew).Before(nbf) {
			return t, bearerFail("Lifetime validation failed. The token is not yet valid.")
		}
	}
	if !audienceMatches(c.Aud, audiences) {
		return t, bearerFail("Audience validation failed. Audience did not match.")
	}
	tenant, ok := issuerTenant(c.Iss)
	if !ok {
		return t, bearerFail("Issuer validation failed. Issuer did not match.")
	}
	if t.TenantID == "" {
		t.TenantID = tenant
	}
	return t, nil
}

// BearerChallenge is the WWW-Authenticate value of a 401 for a bad or missing token.
func BearerChallenge(tenant string) string {
	if tenant == "" || !validTenant(tenant) {
		tenant = "common"
	}
	return "Bearer authorization_uri=https://login.microsoftonline.com/" + tenant + "/oauth2/authorize resource_id=" + StorageAudience
}

func bearerFail(detail string) error {
	return &authError{
		err:    &azerr.Error{Code: azerr.InvalidAuthenticationInfo, Msg: bearerMessage, HTTPStatus: http.StatusUnauthorized},
		detail: detail,
	}
}

// jwtClaims are the registered claims checked; json.RawMessage keeps each claim's type
// open (aud is a string or an array; numbers may be floats).
type jwtClaims struct {
	Aud json.RawMessage `json:"aud"`
	Iss string          `json:"iss"`
	Exp json.RawMessage `json:"exp"`
	Nbf json.RawMessage `json:"nbf"`
	Tid string          `json:"tid"`
	Sub string          `json:"sub"`
}

// maxTokenLen bounds the work on a token; Entra tokens are a few KiB.
const maxTokenLen = 16 << 10

// parseJWT checks the JWS compact form: three base64url segments, a JSON header naming an
// algorithm, a JSON claims object, and a non-empty signature.
func parseJWT(token string) (jwtClaims, bool) {
	var c jwtClaims
	if len(token) > maxTokenLen {
		return c, false
	}
	h, rest, ok1 := strings.Cut(token, ".")
	p, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(sig, ".") || sig == "" {
		return c, false
	}
	hb, err1 := b64url(h)
	pb, err2 := b64url(p)
	_, err3 := b64url(sig)
	if err1 != nil || err2 != nil || err3 != nil {
		return c, false
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(hb, &header) != nil || header.Alg == "" || strings.EqualFold(header.Alg, "none") {
		return c, false
	}
	if !isJSONObject(pb) || json.Unmarshal(pb, &c) != nil {
		return c, false
	}
	return c, true
}

func b64url(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

func isJSONObject(b []byte) bool {
	s := strings.TrimSpace(string(b))
	return strings.HasPrefix(s, "{")
}

// numericDate reads a JWT NumericDate (seconds since the epoch, possibly fractional).
func numericDate(raw json.RawMessage) (time.Time, bool) {
	var f float64
	if len(raw) == 0 || json.Unmarshal(raw, &f) != nil || math.IsNaN(f) || f < 0 || f > 1e11 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}

func audienceMatches(raw json.RawMessage, allowed []string) bool {
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if json.Unmarshal(raw, &list) != nil {
		return false
	}
	for _, a := range list {
		a = strings.TrimSuffix(a, "/")
		for _, w := range allowed {
			if a != "" && strings.EqualFold(a, strings.TrimSuffix(w, "/")) {
				return true
			}
		}
	}
	return false
}

// issuerHosts are Entra ID's token issuers: v1 tokens (sts.*) name https://HOST/TENANT/,
// v2 tokens (login.*) https://HOST/TENANT/v2.0; public, sovereign and test clouds.
var issuerHosts = map[string]bool{
	"sts.windows.net": true, "sts.chinacloudapi.cn": true, "sts.microsoftonline.de": true,
	"sts.windows-ppe.net": true, "login.microsoftonline.com": true, "login.chinacloudapi.cn": true,
	"login.microsoftonline.us": true, "login.microsoftonline.de": true, "login.windows-ppe.net": true,
}

// issuerTenant checks iss's form and returns its tenant.
func issuerTenant(iss string) (string, bool) {
	rest, ok := strings.CutPrefix(iss, "https://")
	if !ok {
		return "", false
	}
	host, path, ok := strings.Cut(rest, "/")
	if !ok || !issuerHosts[strings.ToLower(host)] {
		return "", false
	}
	tenant, tail, _ := strings.Cut(path, "/")
	if !validTenant(tenant) || (tail != "" && tail != "v2.0" && tail != "v2.0/") {
		return "", false
	}
	return tenant, true
}

// validTenant accepts a tenant id (a GUID) or a tenant domain name.
func validTenant(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
