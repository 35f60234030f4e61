package config

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// Ops is the configuration of TLS, OAuth and the admin listener.
type Ops struct {
	// CertFile and KeyFile are PEM files; when set, every listener serves HTTPS.
	CertFile, KeyFile string
	// TLSSelfSigned serves HTTPS with a certificate from a local CA kept in the data
	// directory (DataDir/tls), made on first use.
	TLSSelfSigned bool
	// OAuth is "" (bearer tokens refused) or "basic" (structurally valid Entra ID tokens
	// accepted as the account owner; signatures not verified). Needs TLS.
	OAuth string
	// AdminAddr is the admin listener's address (health, metrics, reset, snapshots); ""
	// means none.
	AdminAddr string
}

// TLS reports whether the listeners serve HTTPS.
func (o Ops) TLS() bool { return o.CertFile != "" || o.TLSSelfSigned }

// DefaultAdminPort is the admin listener's port: the first above the Azure Storage
// emulator's 10000-10002 block that no well-known emulator uses.
const DefaultAdminPort = 10010

// opsFlags registers the Ops flags on fs; the returned function fills c.Ops after Parse and
// returns every problem found.
func opsFlags(fs *flag.FlagSet, getenv func(name, def string) string) func(c *Config) []error {
	cert := fs.String("cert", getenv("TABLO_CERT", ""), "TLS certificate chain (PEM) for every listener; needs --key (TABLO_CERT)")
	key := fs.String("key", getenv("TABLO_KEY", ""), "TLS private key (PEM) of --cert (TABLO_KEY)")
	selfSigned := fs.String("tls-self-signed", getenv("TABLO_TLS_SELF_SIGNED", "false"), "serve HTTPS with a certificate from a local CA made in <data-dir>/tls and reused; prints the CA path to trust (TABLO_TLS_SELF_SIGNED)")
	oauth := fs.String("oauth", getenv("TABLO_OAUTH", ""), "accept Microsoft Entra ID bearer tokens: \"basic\" checks their form, audience, issuer and lifetime but not their signature; needs TLS (TABLO_OAUTH)")
	adminHost := fs.String("admin-host", getenv("TABLO_ADMIN_HOST", "127.0.0.1"), "address of the admin listener (TABLO_ADMIN_HOST)")
	adminPort := fs.String("admin-port", getenv("TABLO_ADMIN_PORT", strconv.Itoa(DefaultAdminPort)), "port of the admin listener (health, metrics, reset, snapshots); -1 turns it off (TABLO_ADMIN_PORT)")
	// A bool flag given as --tls-self-signed (no value) must still parse.
	fs.Lookup("tls-self-signed").Value = &boolString{fs.Lookup("tls-self-signed").Value}
	return func(c *Config) []error {
		var errs []error
		o := Ops{CertFile: *cert, KeyFile: *key, OAuth: strings.ToLower(*oauth)}
		var err error
		if o.TLSSelfSigned, err = ParseBool(*selfSigned); err != nil {
			errs = append(errs, fmt.Errorf("config: --tls-self-signed / TABLO_TLS_SELF_SIGNED: %w", err))
		}
		if (o.CertFile == "") != (o.KeyFile == "") {
			errs = append(errs, errors.New("config: --cert and --key go together"))
		}
		if o.CertFile != "" && o.TLSSelfSigned {
			errs = append(errs, errors.New("config: --cert/--key and --tls-self-signed exclude each other"))
		}
		switch o.OAuth {
		case "":
		case "basic":
			if !o.TLS() {
				errs = append(errs, errors.New("config: --oauth basic needs HTTPS (--cert/--key or --tls-self-signed): the Azure SDKs send bearer tokens only over HTTPS"))
			}
		default:
			errs = append(errs, fmt.Errorf("config: --oauth %q: want basic", *oauth))
		}
		switch p, err := strconv.Atoi(*adminPort); {
		case err != nil || p < -1 || p > 65535:
			errs = append(errs, fmt.Errorf("config: --admin-port %q is not a port number (-1 turns it off)", *adminPort))
		case p >= 0:
			o.AdminAddr = joinHostPort(*adminHost, p)
		}
		c.Ops = o
		return errs
	}
}

func joinHostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// ParseBool accepts 1/0, true/false, yes/no and on/off in any case.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off", "":
		return false, nil
	}
	return false, fmt.Errorf("%q: want 1/0, true/false, yes/no or on/off", s)
}

// boolString makes a string flag usable without a value (--flag means true).
type boolString struct{ flag.Value }

func (*boolString) IsBoolFlag() bool { return true }

// String also serves the zero value the flag package makes to print defaults.
func (b *boolString) String() string {
	if b == nil || b.Value == nil {
		return ""
	}
	return b.Value.String()
}
