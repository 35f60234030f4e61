package tlsconfig

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSelfSignedCoversHostsAndIsReused(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	cfg, caPath, err := SelfSigned(dir, []string{"tablo.example"}, now)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := CertPool(caPath)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"localhost", "127.0.0.1", "::1", "devstoreaccount1.table.localhost",
		"devstoreaccount1.queue.localhost", "devstoreaccount1-secondary.blob.localhost", "devstoreaccount1.localhost", "tablo.example"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: pool}); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: pool}); err == nil {
		t.Error("certificate verified for a name it must not cover")
	}

	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ca1, cert1 := read(CAFile), read(certFile)
	if _, _, err := SelfSigned(dir, []string{"tablo.example"}, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ca1, read(CAFile)) || !bytes.Equal(cert1, read(certFile)) {
		t.Fatal("a restart with the same hosts made new files")
	}
	// A new host needs a new server certificate from the same CA.
	if _, _, err := SelfSigned(dir, []string{"other.example"}, now); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ca1, read(CAFile)) || bytes.Equal(cert1, read(certFile)) {
		t.Fatal("a new host must re-issue the certificate and keep the CA")
	}
	// Near expiry the certificate is issued again.
	cert2 := read(certFile)
	if _, _, err := SelfSigned(dir, []string{"other.example"}, now.AddDate(1, 0, -1)); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(cert2, read(certFile)) {
		t.Fatal("certificate near expiry was reused")
	}
	if info, err := os.Stat(filepath.Join(dir, keyFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", info, err)
	}
}

func TestFromFilesReportsBadFiles(t *testing.T) {
	if _, err := FromFiles(filepath.Join(t.TempDir(), "missing.pem"), "nokey.pem"); err == nil {
		t.Fatal("missing files accepted")
	}
	dir := t.TempDir()
	if _, _, err := SelfSigned(dir, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := FromFiles(filepath.Join(dir, certFile), filepath.Join(dir, keyFile)); err != nil {
		t.Fatal(err)
	}
}
