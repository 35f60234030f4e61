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

// FuzzParseSASQueueBlob: ParseSASFor for the Queue and Blob services never panics; a SAS
// verifies only with the signature Sign computes over the resource the URL names; Query
// round-trips.
func FuzzParseSASQueueBlob(f *testing.F) {
	f.Add(uint8(1), "sv=2021-02-12&sp=raup&st=2025-01-01T00:00:00Z&se=2030-01-02T00:00:00Z&spr=https,http&sig=Ly/uBkT8dcg+P0uKoGm2xCE5HXDm32pR3dXmmwpTSFA=", "myqueue")
	f.Add(uint8(1), "sv=2019-02-02&ss=q&srt=sco&sp=raup&se=2030-01-02T00:00:00Z&sig=AAAA", "")
	f.Add(uint8(1), "sv=2021-02-12&si=p&sig=AAAA", "q")
	f.Add(uint8(2), "sv=2021-12-02&sr=b&sp=r&se=2030-01-02T00:00:00Z&rscc=no-cache&sig=AAAA", "c/dir/b.txt")
	f.Add(uint8(2), "sv=2021-12-02&sr=c&sp=rl&se=2030-01-02T00:00:00Z&sig=AAAA", "c")
	now := time.Date(2026, 11, 21, 5, 40, 0, 0, time.UTC)
	future := now.Add(time.Hour)
	policy := func(id string) (*AccessPolicy, bool) {
		return &AccessPolicy{Expiry: &future, Permission: "r"}, id == "p"
	}
	f.Fuzz(func(t *testing.T, svcByte uint8, rawQuery, resource string) {
		svc := Service(svcByte%2 + 1)
		q, _ := url.ParseQuery(rawQuery)
		s, ok, err := ParseSASFor(svc, q)
		if !ok || err != nil {
			if s != nil {
				t.Fatal("SAS returned with an error")
			}
			return
		}
		err = s.Verify(devAccount(), SASRequest{Now: now, TLS: true, Policy: policy, Resource: resource})
		if err == nil {
			want := *s
			want.Sign(DevAccountName, devAccount().Keys[0])
			if want.Signature != canonicalSig(s.Signature) {
				t.Fatalf("verified with signature %q, want %q", s.Signature, want.Signature)
			}
		}
		for op := range Operation(len(operationNames) + 1) {
			_ = s.Authorize(op, resource)
		}
		again, ok, err := ParseSASFor(svc, s.Query())
		if !ok || err != nil {
			t.Fatalf("Query does not round-trip: %v %v", ok, err)
		}
		again.ResourceName, again.SnapshotTime = s.ResourceName, s.SnapshotTime
		if again.StringToSign("a") != s.StringToSign("a") || again.Signature != s.Signature {
			t.Fatal("Query does not round-trip")
		}
	})
}

// FuzzBlobQueueStringToSign: any request signed with the Blob/Queue flavour verifies, and
// never under the Table flavour's string unless both strings are equal.
func FuzzBlobQueueStringToSign(f *testing.F) {
	f.Add("PUT", "/devstoreaccount1/q", "comp=metadata&timeout=30", "x-ms-meta-a_b", "1", "x-ms-meta-a1")
	f.Add("GET", "/devstoreaccount1/q/messages", "numofmessages=2&peekonly=true&a=%2F&a=b", "x-ms-client-request-id", " id", "Range")
	acct := DevAccount()
	f.Fuzz(func(t *testing.T, method, path, query, h1, v1, h2 string) {
		if strings.ContainsAny(method+path+query, "\r\n") {
			return
		}
		h := http.Header{}
		h.Set("x-ms-date", "Wed, 01 Jan 2025 00:00:00 GMT")
		if http.CanonicalHeaderKey(h1) != "" && !strings.ContainsAny(h1+v1+h2, "\r\n:") {
			h.Add(h1, v1)
			h.Add(h2, v1)
		}
		req := RequestInfo{Method: method, RawPath: path, RawQuery: query, Header: HTTPHeader(h), Account: acct.Name, PathStyle: true, Service: ServiceQueue}
		h.Set("Authorization", SignSharedKey(SchemeSharedKey, req, acct.Keys[0]))
		if err := NewVerifier(&acct).VerifySharedKey(req); err != nil {
			t.Fatalf("own signature refused: %v (%q)", err, StringToSign(SchemeSharedKey, req))
		}
	})
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
