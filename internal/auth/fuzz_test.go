package auth

import (
	"bytes"
	"crypto/hmac"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParseSAS: no panics; a SAS verifies only with the signature Sign computes; Query
// round-trips; authorization and range checks never panic.
func FuzzParseSAS(f *testing.F) {
	f.Add("sv=2019-02-02&tn=t&sp=raud&st=2025-01-01&se=2030-01-01&spk=a&srk=b&epk=c&erk=d&sip=1.2.3.4-1.2.3.9&spr=https,http&sig=AAAA", "1.2.3.5")
	f.Add("sv=2020-12-06&ss=t&srt=sco&sp=rwdlacu&se=2030-01-01T00:00:00.1234567Z&ses=x&sig=AAAA", "::1")
	f.Add("sv=2013-08-15&tn=T&si=p&sig=AAAA", "")
	for _, ex := range loadSigExamples(f) {
		if _, q, ok := strings.Cut(ex.target, "?"); ok && strings.Contains(q, "sig=") {
			f.Add(q, "127.0.0.1")
		}
	}
	now := time.Date(2026, 11, 21, 5, 40, 0, 0, time.UTC)
	future := now.Add(time.Hour)
	policy := func(id string) (*AccessPolicy, bool) {
		return &AccessPolicy{Expiry: &future}, id == "p"
	}
	f.Fuzz(func(t *testing.T, rawQuery, ip string) {
		q, _ := url.ParseQuery(rawQuery)
		s, ok, err := ParseSAS(q)
		if !ok || err != nil {
			if s != nil {
				t.Fatal("SAS returned with an error")
			}
			return
		}
		client, _ := netip.ParseAddr(ip)
		err = s.Verify(devAccount(), SASRequest{Now: now, TLS: true, ClientIP: client, Policy: policy})
		if err == nil {
			want := *s
			want.Sign(DevAccountName, devAccount().Keys[0])
			if want.Signature != canonicalSig(s.Signature) {
				t.Fatalf("verified with signature %q, want %q", s.Signature, want.Signature)
			}
		}
		for op := range Operation(len(operationNames) + 1) {
			_ = s.Authorize(op, s.TableName)
		}
		_ = s.CheckKey("pk", "rk")
		again, ok, err := ParseSAS(s.Query())
		if !ok || err != nil || again.StringToSign("a") != s.StringToSign("a") || again.Signature != s.Signature {
			t.Fatalf("Query does not round-trip: %v %v", ok, err)
		}
	})
}

// canonicalSig re-encodes a base64 signature, since decoding tolerates non-canonical forms.
func canonicalSig(s string) string {
	b, err := decodeStdBase64(s)
	if err != nil {
		return s
	}
	return encodeSig(b)
}

// FuzzAuthorization: the header parser never panics, a parsed Shared Key header re-renders to
// an equal one, and VerifySharedKey accepts a header only when its signature is the HMAC.
func FuzzAuthorization(f *testing.F) {
	f.Add("SharedKeyLite devstoreaccount1:xTLoznVtAG1KOQPT13Zbjhd/K/fQg7qDD2DHW3PohGQ=")
	f.Add("SharedKey devstoreaccount1:AAAA")
	f.Add("Bearer x")
	f.Add("sharedkey a:b:c")
	for _, ex := range loadSigExamples(f) {
		if h := ex.header.Get("Authorization"); h != "" {
			f.Add(h)
		}
	}
	f.Fuzz(func(t *testing.T, h string) {
		a, err := ParseAuthorization(h)
		if err == nil && a.Scheme != SchemeBearer {
			again, err := ParseAuthorization(a.Scheme.String() + " " + a.Account + ":" + encodeSig(a.Signature))
			if err != nil || again.Account != a.Account || !bytes.Equal(again.Signature, a.Signature) {
				t.Fatalf("re-render of %q: %+v %v", h, again, err)
			}
		}
		hdr := http.Header{}
		hdr.Set("x-ms-date", vectorDate)
		hdr.Set("Authorization", h)
		req := RequestInfo{Method: "GET", RawPath: "/devstoreaccount1/Tables", Header: hdr, Account: DevAccountName, PathStyle: true}
		if VerifySharedKey(req, devAccount()) == nil {
			if !hmac.Equal(a.Signature, mac(devAccount().Keys[0], StringToSign(a.Scheme, req))) {
				t.Fatalf("%q verified without the right signature", h)
			}
		}
	})
}

// FuzzParseSignedIdentifiers: no panics; whatever parses renders to XML that parses back to
// the same identifiers and renders identically.
func FuzzParseSignedIdentifiers(f *testing.F) {
	files, _ := filepath.Glob("testdata/acl/*.xml")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`<SignedIdentifiers><SignedIdentifier><Id>a&amp;b</Id><AccessPolicy><Start>2025-01-01T00:00:00.123456789+05:00</Start><Permission>dr</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ids, err := ParseSignedIdentifiers(body)
		if err != nil {
			return
		}
		out := AppendSignedIdentifiersXML(nil, ids)
		back, err := ParseSignedIdentifiers(out)
		if err != nil {
			t.Fatalf("rendered XML does not parse: %v\n%s", err, out)
		}
		if !sameIdentifiers(ids, back) {
			t.Fatalf("round trip changed identifiers:\n%+v\n%+v", ids, back)
		}
		if again := AppendSignedIdentifiersXML(nil, back); !bytes.Equal(again, out) {
			t.Fatalf("rendering is not stable:\n%s\n%s", out, again)
		}
	})
}

// FuzzParseISOTime: parse → format → parse is the identity.
func FuzzParseISOTime(f *testing.F) {
	for _, s := range []string{"2025-01-01", "2025-01-01T00:00Z", "2025-01-01T00:00:00.1234567+01:00", "9999-12-31T23:59:59Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := parseISOTime(s)
		if err != nil {
			return
		}
		back, err := parseISOTime(formatISOTime(tm))
		if err != nil || !back.Equal(tm) {
			t.Fatalf("%q → %s → %v %v", s, formatISOTime(tm), back, err)
		}
	})
}

func sameIdentifiers(a, b []SignedIdentifier) bool {
	if len(a) != len(b) {
		return false
	}
	eqTime := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Policy.Permission != b[i].Policy.Permission ||
			!eqTime(a[i].Policy.Start, b[i].Policy.Start) || !eqTime(a[i].Policy.Expiry, b[i].Policy.Expiry) {
			return false
		}
	}
	return true
}

// FuzzParseHTTPDate: the positional RFC 1123 reader never accepts what time.Parse refuses,
// and agrees with it on what both accept.
func FuzzParseHTTPDate(f *testing.F) {
	for _, s := range []string{"Wed, 01 Jan 2025 00:00:00 GMT", "Fri, 29 Feb 2025 00:00:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "2025-01-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := parseRFC1123(s)
		if !ok {
			_, _ = parseHTTPDate(s) // must not panic
			return
		}
		want, err := time.Parse("Mon, 02 Jan 2006 15:04:05 GMT", s)
		if err != nil || !fast.Equal(want) {
			t.Fatalf("%q: fast path %v, time.Parse %v %v", s, fast, want, err)
		}
	})
}
