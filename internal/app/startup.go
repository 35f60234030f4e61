package app

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/tablo/tablo/internal/auth"
)

// Endpoint is one listening service as clients reach it.
type Endpoint struct {
	Service string // "Table"
	Listen  string // the bound address, e.g. 0.0.0.0:10002
	// URL is a base URL a client on this machine can use, without the account segment.
	URL string
	// AllInterfaces is set when the listener is on every interface (0.0.0.0 or ::); URL then
	// uses loopback.
	AllInterfaces bool
}

// Endpoints lists the running services, in start-up order.
func (a *App) Endpoints() []Endpoint {
	eps := make([]Endpoint, 0, len(a.listeners))
	for _, l := range a.listeners {
		ep := endpointOf(l.service, a.cfg.Host, l.ln.Addr())
		if a.tls != nil {
			ep.URL = "https" + strings.TrimPrefix(ep.URL, "http")
		}
		eps = append(eps, ep)
	}
	return eps
}

// endpointOf describes a listener bound for host. A wildcard host (0.0.0.0, ::, or empty)
// binds every interface (Go makes one dual-stack socket for either), so the URL uses IPv4
// loopback, which every client can reach.
func endpointOf(service, host string, addr net.Addr) Endpoint {
	port := "0"
	if ta, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(ta.Port)
	}
	ep := Endpoint{Service: service, Listen: net.JoinHostPort(host, port)}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host, ep.AllInterfaces = "127.0.0.1", true
	}
	ep.URL = "http://" + net.JoinHostPort(host, port)
	return ep
}

// ConnectionAccount is the account the printed connection string is for: the development
// account when it is configured (its key is public), else the first.
func (a *App) ConnectionAccount() auth.Account {
	for _, acc := range a.cfg.Accounts {
		if isDevKey(acc) {
			return acc
		}
	}
	return a.cfg.Accounts[0]
}

// ConnectionString is a ready-to-paste connection string for account with every running
// endpoint. The key is spelled out only for the development account with its public key;
// otherwise it is a placeholder, since keys are never printed.
func ConnectionString(account auth.Account, eps []Endpoint) string {
	var b strings.Builder
	protocol := "http"
	if len(eps) > 0 && strings.HasPrefix(eps[0].URL, "https:") {
		protocol = "https"
	}
	b.WriteString("DefaultEndpointsProtocol=" + protocol + ";AccountName=")
	b.WriteString(account.Name)
	b.WriteString(";AccountKey=")
	if isDevKey(account) {
		b.WriteString(auth.DevAccountKey)
	} else {
		b.WriteString("<key of " + account.Name + " from --accounts>")
	}
	b.WriteString(";")
	for _, ep := range eps {
		fmt.Fprintf(&b, "%sEndpoint=%s/%s;", ep.Service, ep.URL, account.Name)
	}
	return b.String()
}

// isDevKey reports whether account is the development account with its public key.
func isDevKey(account auth.Account) bool {
	key, _ := base64.StdEncoding.DecodeString(auth.DevAccountKey)
	return account.Name == auth.DevAccountName && len(account.Keys) > 0 && bytes.Equal(account.Keys[0], key)
}

// WriteStartup writes the human start-up summary: one line per service with its URL, the
// engine and where its data lives, the accounts by name, and a connection string. It is
// printed whatever the log level (cmd/tablo writes it to stdout).
func (a *App) WriteStartup(w io.Writer, version string) {
	eps := a.Endpoints()
	fmt.Fprintf(w, "Tablo %s\n", version)
	for _, ep := range eps {
		line := fmt.Sprintf("  %-8s %s", ep.Service, ep.URL)
		if ep.AllInterfaces {
			line += "  (listening on " + ep.Listen + ", every interface; use this machine's address from elsewhere)"
		}
		fmt.Fprintln(w, line)
	}
	switch {
	case a.cfg.PostgresURL != "":
		fmt.Fprintln(w, "  engine   postgres, shared with every Tablo on the same database (--postgres)")
	case a.cfg.InMemory:
		fmt.Fprintln(w, "  engine   pebble, in memory (nothing survives a restart)")
	default:
		fmt.Fprintf(w, "  engine   pebble, data in %s\n", a.claim.Dir())
	}
	names := make([]string, len(a.cfg.Accounts))
	for i, acc := range a.cfg.Accounts {
		names[i] = acc.Name
	}
	fmt.Fprintf(w, "  accounts %s\n", strings.Join(names, ", "))
	if a.caPath != "" {
		fmt.Fprintf(w, "  TLS      self-signed; clients must trust the CA in %s\n", a.caPath)
	}
	if addr := a.AdminAddr(); addr != nil {
		fmt.Fprintf(w, "  admin    http://%s  (/healthz /readyz /metrics; tablo reset, tablo snapshot)\n", addr)
	}
	acc := a.ConnectionAccount()
	fmt.Fprintf(w, "Connection string (%s):\n%s\n", acc.Name, ConnectionString(acc, eps))
}

// logStarted logs the same facts as WriteStartup, for log collectors.
func (a *App) logStarted() {
	attrs := []any{}
	for _, ep := range a.Endpoints() {
		attrs = append(attrs, strings.ToLower(ep.Service)+"_url", ep.URL, strings.ToLower(ep.Service)+"_listen", ep.Listen)
	}
	switch {
	case a.cfg.PostgresURL != "":
		attrs = append(attrs, "engine", "postgres")
	case a.cfg.InMemory:
		attrs = append(attrs, "engine", "pebble (in memory)")
	default:
		attrs = append(attrs, "engine", "pebble", "data_dir", a.claim.Dir())
	}
	names := make([]string, len(a.cfg.Accounts))
	for i, acc := range a.cfg.Accounts {
		names[i] = acc.Name
	}
	attrs = append(attrs, "accounts", strings.Join(names, ","))
	if a.caPath != "" {
		attrs = append(attrs, "tls_ca", a.caPath)
	}
	if addr := a.AdminAddr(); addr != nil {
		attrs = append(attrs, "admin_url", "http://"+addr.String())
	}
	a.log.Info("tablo started", attrs...)
}
