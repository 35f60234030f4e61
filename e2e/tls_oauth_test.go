package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/internal/app"
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/tlsconfig"
)

// opsServer is a Tablo started with operational options (TLS, OAuth, admin listener).
type opsServer struct {
	app     *app.App
	cfg     config.Config
	base    string // scheme://127.0.0.1:port
	admin   string // http://127.0.0.1:port of the admin listener
	dataDir string
}

func startOpsServer(t testing.TB, dir string, mutate func(*config.Config)) *opsServer {
	t.Helper()
	cfg := config.Config{Host: "127.0.0.1", DataDir: dir, Accounts: []auth.Account{auth.DevAccount()},
		Ops: config.Ops{AdminAddr: "127.0.0.1:0"}}
	if mutate != nil {
		mutate(&cfg)
	}
	level := slog.LevelWarn
	if os.Getenv("TABLO_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	a, err := app.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level})))
	if err != nil {
		t.Fatal(err)
	}
	s := &opsServer{app: a, cfg: cfg, base: "http://" + a.Addr().String(), dataDir: dir}
	if cfg.TLS() {
		s.base = "https://" + a.Addr().String()
	}
	if ad := a.AdminAddr(); ad != nil {
		s.admin = "http://" + ad.String()
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *opsServer) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.app.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
}

// trustingClient is an HTTP client that trusts the server's self-signed CA and dials the
// server whatever host name a URL names (for host-style URLs under *.localhost).
func trustingClient(t testing.TB, caPath, addr string) *http.Client {
	t.Helper()
	pool, err := tlsconfig.CertPool(caPath)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}}
}

func tlsClientOptions(hc *http.Client) *aztables.ClientOptions {
	return &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: hc,
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}}
}

// TestTLSSelfSigned drives the Go SDK over HTTPS with a DefaultEndpointsProtocol=https
// connection string, path style and host style, trusting only the CA the server made; a
// restart reuses the CA.
func TestTLSSelfSigned(t *testing.T) {
	dir := t.TempDir()
	s := startOpsServer(t, dir, func(c *config.Config) { c.TLSSelfSigned = true })
	ca := s.app.CAPath()
	if !strings.HasPrefix(ca, dir) {
		t.Fatalf("CA %q not in the data directory %q", ca, dir)
	}
	var summary strings.Builder
	s.app.WriteStartup(&summary, "test")
	for _, want := range []string{"https://127.0.0.1:", "DefaultEndpointsProtocol=https;", "clients must trust the CA in " + ca, "admin    http://127.0.0.1:"} {
		if !strings.Contains(summary.String(), want) {
			t.Errorf("start-up summary lacks %q:\n%s", want, summary.String())
		}
	}
	addr := s.app.Addr().String()
	hc := trustingClient(t, ca, addr)
	_, port, _ := net.SplitHostPort(addr)
	for _, endpoint := range []string{
		s.base + "/" + devAccount,
		"https://" + devAccount + ".table.localhost:" + port,
		"https://localhost:" + port + "/" + devAccount,
	} {
		cs := fmt.Sprintf("DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;TableEndpoint=%s;", devAccount, devKey, endpoint)
		svc, err := aztables.NewServiceClientFromConnectionString(cs, tlsClientOptions(hc))
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("tls%d", time.Now().UnixNano()%1e9)
		if _, err := svc.CreateTable(ctx, name, nil); err != nil {
			t.Fatalf("%s: create: %v", endpoint, err)
		}
		tc := svc.NewClient(name)
		if _, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","V":1}`), nil); err != nil {
			t.Fatalf("%s: insert: %v", endpoint, err)
		}
		got, err := tc.GetEntity(ctx, "p", "r", nil)
		if err != nil || !bytes.Contains(got.Value, []byte(`"V":1`)) {
			t.Fatalf("%s: get: %v %s", endpoint, err, got.Value)
		}
	}
	// A client that does not trust the CA is refused by its own TLS check.
	cs := fmt.Sprintf("DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;TableEndpoint=%s/%s;", devAccount, devKey, s.base, devAccount)
	untrusted, _ := aztables.NewServiceClientFromConnectionString(cs, clientOptions())
	if _, err := untrusted.CreateTable(ctx, "untrusted", nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusting client: %v", err)
	}
	caBytes, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	s.stop(t)
	s2 := startOpsServer(t, dir, func(c *config.Config) { c.TLSSelfSigned = true })
	again, _ := os.ReadFile(s2.app.CAPath())
	if !bytes.Equal(caBytes, again) {
		t.Fatal("a restart made a new CA")
	}
	cs = fmt.Sprintf("DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;TableEndpoint=%s/%s;", devAccount, devKey, s2.base, devAccount)
	svc, _ := aztables.NewServiceClientFromConnectionString(cs, tlsClientOptions(trustingClient(t, ca, s2.app.Addr().String())))
	if _, err := svc.CreateTable(ctx, "afterrestart", nil); err != nil {
		t.Fatalf("after restart with the old CA file: %v", err)
	}
}

// TestTLSCertFiles serves a certificate the user supplies (--cert/--key).
func TestTLSCertFiles(t *testing.T) {
	certDir := t.TempDir()
	if _, _, err := tlsconfig.SelfSigned(certDir, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	s := startOpsServer(t, t.TempDir(), func(c *config.Config) {
		c.CertFile, c.KeyFile = certDir+"/cert.pem", certDir+"/key.pem"
	})
	if s.app.CAPath() != "" {
		t.Fatalf("CA path %q with user certificates", s.app.CAPath())
	}
	cs := fmt.Sprintf("DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;TableEndpoint=%s/%s;", devAccount, devKey, s.base, devAccount)
	svc, _ := aztables.NewServiceClientFromConnectionString(cs, tlsClientOptions(trustingClient(t, certDir+"/"+tlsconfig.CAFile, s.app.Addr().String())))
	if _, err := svc.CreateTable(ctx, "usercert", nil); err != nil {
		t.Fatal(err)
	}
}

// jwt builds an unsigned-in-substance token: header, claims and a placeholder signature.
func jwt(claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "RS256", "typ": "JWT", "kid": "test"}) + "." + enc(claims) + "." +
		base64.RawURLEncoding.EncodeToString([]byte("not a real signature"))
}

const testTenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

func entraClaims(aud string, now time.Time) map[string]any {
	return map[string]any{
		"aud": aud, "iss": "https://sts.windows.net/" + testTenant + "/", "tid": testTenant,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"oid": "11059fcc-5514-4800-b5f8-49808b9cfab6", "sub": "test",
	}
}

// mintingCredential is an azcore.TokenCredential that mints Entra-shaped tokens for the
// scope the SDK asks for, optionally altered.
type mintingCredential struct {
	alter func(claims map[string]any)
}

func (m mintingCredential) GetToken(_ context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	if len(o.Scopes) != 1 {
		return azcore.AccessToken{}, errors.New("want one scope")
	}
	now := time.Now()
	c := entraClaims(strings.TrimSuffix(o.Scopes[0], "/.default"), now)
	if m.alter != nil {
		m.alter(c)
	}
	return azcore.AccessToken{Token: jwt(c), ExpiresOn: now.Add(time.Hour)}, nil
}

// TestOAuthBearerThroughSDK: with --oauth basic, the Go SDK's token credential reaches every
// kind of operation; expired, wrong-audience and wrong-issuer tokens get Azure's 401.
func TestOAuthBearerThroughSDK(t *testing.T) {
	s := startOpsServer(t, t.TempDir(), func(c *config.Config) { c.TLSSelfSigned = true; c.OAuth = "basic" })
	hc := trustingClient(t, s.app.CAPath(), s.app.Addr().String())
	url := s.base + "/" + devAccount
	svc, err := aztables.NewServiceClient(url, mintingCredential{}, tlsClientOptions(hc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, "oauth", nil); err != nil {
		t.Fatal(err)
	}
	tc := svc.NewClient("oauth")
	if _, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.GetProperties(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// The account's service URL is an audience too.
	own, _ := aztables.NewServiceClient(url, mintingCredential{alter: func(c map[string]any) { c["aud"] = url + "/" }}, tlsClientOptions(hc))
	if _, err := own.NewClient("oauth").GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("service URL audience: %v", err)
	}

	for name, alter := range map[string]func(map[string]any){
		"expired":      func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() },
		"not yet":      func(c map[string]any) { c["nbf"] = time.Now().Add(time.Hour).Unix() },
		"audience":     func(c map[string]any) { c["aud"] = "https://vault.azure.net" },
		"other acct":   func(c map[string]any) { c["aud"] = "https://someoneelse.table.core.windows.net" },
		"issuer":       func(c map[string]any) { c["iss"] = "https://evil.example/" + testTenant + "/" },
		"no exp":       func(c map[string]any) { delete(c, "exp") },
		"aud is array": func(c map[string]any) { c["aud"] = []string{"https://vault.azure.net"} },
	} {
		bad, _ := aztables.NewServiceClient(url, mintingCredential{alter: alter}, tlsClientOptions(hc))
		_, err := bad.NewClient("oauth").GetEntity(ctx, "p", "r", nil)
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != 401 || re.ErrorCode != "InvalidAuthenticationInfo" {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "audience" {
			body, _ := io.ReadAll(re.RawResponse.Body)
			if !strings.Contains(string(body), `Please refer to the information in the www-authenticate header.\nAuthenticationErrorDetail:Audience validation failed. Audience did not match.\nRequestId:`) {
				t.Errorf("audience: message %s", body)
			}
		}
		if ch := re.RawResponse.Header.Get("WWW-Authenticate"); ch != "Bearer authorization_uri=https://login.microsoftonline.com/"+testTenant+"/oauth2/authorize resource_id=https://storage.azure.com" {
			t.Errorf("%s: WWW-Authenticate %q", name, ch)
		}
	}

	// Malformed tokens, raw.
	for _, token := range []string{"abc", "a.b.c", jwt(entraClaims("https://storage.azure.com", time.Now())) + ".x", "e30.e30."} {
		req, _ := http.NewRequest("GET", url+"/Tables", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("x-ms-version", "2019-02-02")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || resp.Header.Get("x-ms-error-code") != "InvalidAuthenticationInfo" ||
			!strings.Contains(resp.Header.Get("WWW-Authenticate"), "/common/oauth2/authorize") {
			t.Errorf("token %q: %d %v %s", token, resp.StatusCode, resp.Header, body)
		}
	}
}

// TestOAuthOffRefusesBearer: without --oauth a bearer token authenticates nothing.
func TestOAuthOffRefusesBearer(t *testing.T) {
	s := startOpsServer(t, t.TempDir(), func(c *config.Config) { c.TLSSelfSigned = true })
	hc := trustingClient(t, s.app.CAPath(), s.app.Addr().String())
	svc, _ := aztables.NewServiceClient(s.base+"/"+devAccount, mintingCredential{}, tlsClientOptions(hc))
	_, err := svc.CreateTable(ctx, "nooauth", nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode < 400 || re.StatusCode > 403 {
		t.Fatalf("bearer without --oauth: %v", err)
	}
}

// TestOAuthNeedsTLS: the configuration refuses --oauth without HTTPS.
func TestOAuthNeedsTLS(t *testing.T) {
	_, err := config.Load([]string{"--oauth", "basic"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "needs HTTPS") {
		t.Fatalf("--oauth without TLS: %v", err)
	}
	if _, err := config.Load([]string{"--oauth", "basic", "--tls-self-signed"}, func(string) string { return "" }, io.Discard); err != nil {
		t.Fatal(err)
	}
}
