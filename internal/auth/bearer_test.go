package auth

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func mint(t testing.TB, claims map[string]any) string {
	t.Helper()
	h, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT"})
	p, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	e := base64.RawURLEncoding.EncodeToString
	return e(h) + "." + e(p) + "." + e([]byte("sig"))
}

var bearerNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func goodClaims() map[string]any {
	return map[string]any{
		"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/tenant-1/", "tid": "tenant-1",
		"nbf": bearerNow.Add(-time.Minute).Unix(), "iat": bearerNow.Add(-time.Minute).Unix(), "exp": bearerNow.Add(time.Hour).Unix(),
	}
}

func TestValidateBearer(t *testing.T) {
	auds := BearerAudiences("acct", "table", "https://127.0.0.1:10002/acct")
	ok := []func(map[string]any){
		func(map[string]any) {},
		func(c map[string]any) { c["aud"] = "https://storage.azure.com/" },
		func(c map[string]any) { c["aud"] = "https://acct.table.core.windows.net" },
		func(c map[string]any) { c["aud"] = "https://127.0.0.1:10002/acct/" },
		func(c map[string]any) { c["aud"] = []string{"x", "https://storage.azure.com"} },
		func(c map[string]any) { c["aud"] = "e406a681-f3d4-42a8-90b6-c2b029497af1" },
		func(c map[string]any) { c["iss"] = "https://login.microsoftonline.com/tenant-1/v2.0" },
		func(c map[string]any) { c["iss"] = "https://sts.chinacloudapi.cn/contoso.onmicrosoft.com/" },
		func(c map[string]any) { delete(c, "nbf") },
		func(c map[string]any) { c["exp"] = bearerNow.Add(-4 * time.Minute).Unix() }, // within the skew
		func(c map[string]any) { c["exp"] = float64(bearerNow.Unix()) + 0.5 },
	}
	for i, alter := range ok {
		c := goodClaims()
		alter(c)
		if _, err := ValidateBearer(mint(t, c), bearerNow, auds); err != nil {
			t.Errorf("case %d: %v (%s)", i, err, Detail(err))
		}
	}
	bad := map[string]struct {
		alter  func(map[string]any)
		detail string
	}{
		"expired":      {func(c map[string]any) { c["exp"] = bearerNow.Add(-6 * time.Minute).Unix() }, "expired"},
		"no exp":       {func(c map[string]any) { delete(c, "exp") }, "expiration"},
		"exp string":   {func(c map[string]any) { c["exp"] = "soon" }, "expiration"},
		"future nbf":   {func(c map[string]any) { c["nbf"] = bearerNow.Add(time.Hour).Unix() }, "not yet valid"},
		"audience":     {func(c map[string]any) { c["aud"] = "https://management.azure.com" }, "Audience"},
		"other acct":   {func(c map[string]any) { c["aud"] = "https://other.table.core.windows.net" }, "Audience"},
		"other svc":    {func(c map[string]any) { c["aud"] = "https://acct.queue.core.windows.net" }, "Audience"},
		"no aud":       {func(c map[string]any) { delete(c, "aud") }, "Audience"},
		"aud number":   {func(c map[string]any) { c["aud"] = 7 }, "Audience"},
		"issuer host":  {func(c map[string]any) { c["iss"] = "https://sts.evil.net/tenant-1/" }, "Issuer"},
		"issuer http":  {func(c map[string]any) { c["iss"] = "http://sts.windows.net/tenant-1/" }, "Issuer"},
		"issuer path":  {func(c map[string]any) { c["iss"] = "https://sts.windows.net/tenant-1/x/y" }, "Issuer"},
		"no tenant":    {func(c map[string]any) { c["iss"] = "https://sts.windows.net//" }, "Issuer"},
		"issuer empty": {func(c map[string]any) { delete(c, "iss") }, "Issuer"},
	}
	for name, b := range bad {
		c := goodClaims()
		b.alter(c)
		_, err := ValidateBearer(mint(t, c), bearerNow, auds)
		if err == nil || !strings.Contains(Detail(err), b.detail) {
			t.Errorf("%s: %v (%s), want detail with %q", name, err, Detail(err), b.detail)
			continue
		}
		assertBearerError(t, err)
	}
	for _, tok := range []string{"", "abc", "a.b", "a.b.c.d", "e30.e30.", "!!.e30.c2ln", "e30.e30.c2ln",
		base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + ".e30.c2ln",
		base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256"}`)) + "." + base64.RawURLEncoding.EncodeToString([]byte(`[1]`)) + ".c2ln",
		strings.Repeat("a", maxTokenLen+1)} {
		_, err := ValidateBearer(tok, bearerNow, auds)
		if err == nil || !strings.Contains(Detail(err), "well-formed") {
			t.Errorf("%q: %v", tok, err)
		}
	}
}

func assertBearerError(t *testing.T, err error) {
	t.Helper()
	var ae *authError
	if !asAuthError(err, &ae) || ae.err.Code != "InvalidAuthenticationInfo" || ae.err.Status() != 401 {
		t.Fatalf("error %v: want 401 InvalidAuthenticationInfo", err)
	}
}

func asAuthError(err error, target **authError) bool {
	e, ok := err.(*authError)
	*target = e
	return ok
}

func TestBearerChallenge(t *testing.T) {
	if got := BearerChallenge("tenant-1"); got != "Bearer authorization_uri=https://login.microsoftonline.com/tenant-1/oauth2/authorize resource_id=https://storage.azure.com" {
		t.Fatal(got)
	}
	if got := BearerChallenge("x y\r\nSet-Cookie: a"); !strings.Contains(got, "/common/") {
		t.Fatalf("unsafe tenant copied into the header: %q", got)
	}
}

// FuzzValidateBearer: any input is either accepted with a lifetime that holds at now, or
// refused with 401 InvalidAuthenticationInfo; never a panic.
func FuzzValidateBearer(f *testing.F) {
	f.Add(mint(f, goodClaims()))
	f.Add("e30.e30.c2ln")
	f.Add("a.b.c")
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256"}`)) + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"aud":["https://storage.azure.com"],"exp":1e10,"iss":"https://sts.windows.net/t/"}`)) + ".eA")
	auds := BearerAudiences("acct", "table", "https://127.0.0.1:10002/acct")
	f.Fuzz(func(t *testing.T, token string) {
		tok, err := ValidateBearer(token, bearerNow, auds)
		if err != nil {
			assertBearerError(t, err)
			if !strings.HasPrefix(BearerChallenge(tenantOf(tok)), "Bearer authorization_uri=https://login.microsoftonline.com/") ||
				strings.ContainsAny(BearerChallenge(tenantOf(tok)), "\r\n") {
				t.Fatalf("bad challenge for %q", token)
			}
			return
		}
		if bearerNow.After(tok.Expires.Add(BearerClockSkew)) {
			t.Fatalf("accepted an expired token: %q", token)
		}
	})
}

func tenantOf(t *BearerToken) string {
	if t == nil {
		return ""
	}
	return t.TenantID
}
