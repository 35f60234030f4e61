package config

import (
	"errors"
	"net"
	"strconv"
)

// Ops is the configuration of TLS, OAuth and the admin listener.
type Ops struct {
	// CertFile and KeyFile are PEM files; when set, every listener serves HTTPS.
	CertFile, KeyFile string
	// TLSSelfSigned serves HTTPS with a certificate from a local CA kept in the data
	// directory (DataDir/tls), made on first use.
	TLSSelfSigned bool
	// OAuth is "off" or "" (bearer tokens refused) or "basic" (structurally valid Entra ID
	// tokens accepted as the account owner; signatures not verified). Needs TLS.
	OAuth string
	// AdminHost and AdminPort are the admin listener's flags (port -1: none); Load turns
	// them into AdminAddr.
	AdminHost string
	AdminPort int
	// AdminAddr is the admin listener's address (health, metrics, reset, snapshots); ""
	// means none.
	AdminAddr string
}

// TLS reports whether the listeners serve HTTPS.
func (o Ops) TLS() bool { return o.CertFile != "" || o.TLSSelfSigned }

// DefaultAdminPort is the admin listener's port: the first above the Azure Storage
// emulator's 10000-10002 block that no well-known emulator uses.
const DefaultAdminPort = 10010

// opsFlags are the rows of the flag table for Ops.
func (c *Config) opsFlags() []Flag {
	return []Flag{
		{"cert", String(&c.CertFile, ""), "TLS certificate chain (PEM) for every listener; needs --key (off when empty)"},
		{"key", String(&c.KeyFile, ""), "TLS private key (PEM) of --cert"},
		{"tls-self-signed", Bool(&c.TLSSelfSigned, false), "serve HTTPS with a certificate from a local CA made in <data-dir>/tls and reused; the CA's path is printed at start-up"},
		{"oauth", Enum(&c.OAuth, "off", "off", "basic"), "accept Microsoft Entra ID bearer tokens: basic checks their form, audience, issuer and lifetime but not their signature, and needs HTTPS"},
		{"admin-host", String(&c.AdminHost, DefaultHost), "address of the admin listener (health, readiness, metrics, reset, snapshots)"},
		{"admin-port", Parsed(&c.AdminPort, strconv.Itoa(DefaultAdminPort), "port", parseAdminPort), "port of the admin listener; -1 turns it off, 0 picks a free one"},
	}
}

func parseAdminPort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < -1 || p > 65535 {
		return 0, errors.New("want a port number (0-65535), or -1 for none")
	}
	return p, nil
}

// finishOps checks the Ops flags together and sets AdminAddr.
func (c *Config) finishOps() []error {
	var errs []error
	if (c.CertFile == "") != (c.KeyFile == "") {
		errs = append(errs, errors.New("--cert and --key go together"))
	}
	if c.CertFile != "" && c.TLSSelfSigned {
		errs = append(errs, errors.New("--cert/--key and --tls-self-signed exclude each other"))
	}
	if c.OAuth == "basic" && !c.TLS() {
		errs = append(errs, errors.New("--oauth basic needs HTTPS (--cert/--key or --tls-self-signed): the Azure SDKs send bearer tokens only over HTTPS"))
	}
	c.AdminAddr = ""
	if c.AdminPort >= 0 {
		c.AdminAddr = net.JoinHostPort(c.AdminHost, strconv.Itoa(c.AdminPort))
	}
	return errs
}
