// Package tlsconfig builds the TLS configuration every listener shares: from PEM files the
// user gives (--cert/--key), or from a local certificate authority it creates once in the
// data directory (--tls-self-signed) so that clients can trust one CA file across restarts.
package tlsconfig

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// FromFiles loads a certificate chain and its private key from PEM files.
func FromFiles(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: load --cert %s / --key %s: %w", certFile, keyFile, err)
	}
	return serverConfig(cert), nil
}

func serverConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// DefaultHosts are the names the self-signed certificate covers besides any the caller adds:
// loopback by name and address, and the host-style names of every service
// (devstoreaccount1.table.localhost and so on; Azurite's production-style
// devstoreaccount1.localhost too).
var DefaultHosts = []string{
	"localhost", "127.0.0.1", "::1",
	"*.localhost", "*.table.localhost", "*.queue.localhost", "*.blob.localhost",
	"host.docker.internal",
}

// Files names what SelfSigned keeps in its directory.
const (
	CAFile   = "ca.pem"
	caKey    = "ca-key.pem"
	certFile = "cert.pem"
	keyFile  = "key.pem"
)

// renewBefore is how long before its expiry a stored server certificate is replaced (the
// CA is kept, so clients that trust it need nothing new).
const renewBefore = 30 * 24 * time.Hour

// SelfSigned returns a configuration whose certificate is issued by a local CA, both kept in
// dir (created if needed) and reused on the next start. The server certificate is issued
// again when it is near expiry or does not cover every host asked for. It returns the CA
// certificate's path, which clients must trust.
func SelfSigned(dir string, hosts []string, now time.Time) (*tls.Config, string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("tls: %w", err)
	}
	hosts = dedupe(append(slices.Clone(DefaultHosts), hosts...))
	ca, caPriv, err := loadOrCreateCA(dir, now)
	if err != nil {
		return nil, "", err
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, certFile), filepath.Join(dir, keyFile))
	if err != nil || !usable(cert, ca, hosts, now) {
		if cert, err = issue(dir, ca, caPriv, hosts, now); err != nil {
			return nil, "", err
		}
	}
	return serverConfig(cert), filepath.Join(dir, CAFile), nil
}

func dedupe(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

func loadOrCreateCA(dir string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, CAFile), filepath.Join(dir, caKey))
	if err == nil {
		ca, perr := x509.ParseCertificate(pair.Certificate[0])
		key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
		if perr == nil && ok && now.Before(ca.NotAfter.Add(-renewBefore)) {
			return ca, key, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("tls: stored CA in %s is unreadable (delete the directory to make a new one): %w", dir, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "Tablo local CA", Organization: []string{"Tablo"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: create CA: %w", err)
	}
	if err := writePair(dir, CAFile, caKey, der, key); err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	return ca, key, err
}

// usable reports whether cert was issued by ca, is valid for a while yet and covers hosts.
func usable(cert tls.Certificate, ca *x509.Certificate, hosts []string, now time.Time) bool {
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || leaf.CheckSignatureFrom(ca) != nil || !now.Before(leaf.NotAfter.Add(-renewBefore)) {
		return false
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !slices.ContainsFunc(leaf.IPAddresses, ip.Equal) {
				return false
			}
		} else if !slices.Contains(leaf.DNSNames, h) {
			return false
		}
	}
	return true
}

func issue(dir string, ca *x509.Certificate, caPriv *ecdsa.PrivateKey, hosts []string, now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "localhost", Organization: []string{"Tablo"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caPriv)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls: issue certificate: %w", err)
	}
	if err := writePair(dir, certFile, keyFile, der, key); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(filepath.Join(dir, certFile), filepath.Join(dir, keyFile))
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// writePair writes a certificate (readable by all) and its key (owner only), each through a
// temporary file and a rename so that a crash never leaves half a file.
func writePair(dir, certName, keyName string, der []byte, key *ecdsa.PrivateKey) error {
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	if err := writeFile(filepath.Join(dir, keyName), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, certName), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeFile(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	return nil
}

// CertPool returns a pool holding the PEM certificates in file (for clients that must trust
// the self-signed CA).
func CertPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("tls: no certificate in %s", file)
	}
	return p, nil
}
