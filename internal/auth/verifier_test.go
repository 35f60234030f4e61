package auth

import (
	"net/http"
	"testing"
)

// verifierCases are requests whose verification outcome varies: keys, schemes, dates,
// secondary paths and malformed headers.
func verifierCases() []RequestInfo {
	dev := devAccount()
	other := []byte("another key of some length......")
	secondary := func(r *RequestInfo) {
		r.RawPath = "/devstoreaccount1-secondary/Tables"
		r.Secondary = true
	}
	return []RequestInfo{
		signed(SchemeSharedKey, dev.Keys[0], nil),
		signed(SchemeSharedKeyLite, dev.Keys[0], nil),
		signed(SchemeSharedKeyLite, other, nil),
		signed(SchemeSharedKey, dev.Keys[0], secondary),
		signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) {
			r.Header.(http.Header).Del("x-ms-date")
			r.Header.(http.Header).Set("Date", vectorDate)
		}),
		signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) { r.RawQuery = "comp=acl&x=1" }),
		signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) { r.Header.(http.Header).Set("Content-MD5", "abc") }),
		vectorRequest("GET", "/devstoreaccount1/Tables", "", map[string]string{"Authorization": "SharedKey devstoreaccount1:" + encodeSig(make([]byte, 300))}),
		vectorRequest("GET", "/devstoreaccount1/Tables", "", map[string]string{"Authorization": "SharedKey devstoreaccount1:AAAA"}),
		vectorRequest("GET", "/devstoreaccount1/Tables", "", map[string]string{"Authorization": "SharedKey devstoreaccount1:AAA"}),
		vectorRequest("GET", "/devstoreaccount1/Tables", "", map[string]string{"Authorization": "Bearer x"}),
		vectorRequest("GET", "/devstoreaccount1/Tables", "", nil),
		{Method: "GET", Account: DevAccountName},
	}
}

// TestVerifierMatchesVerifySharedKey: a Verifier, reused across requests (so its pooled HMAC
// states are Reset between them), answers exactly as VerifySharedKey.
func TestVerifierMatchesVerifySharedKey(t *testing.T) {
	accounts := []*Account{
		devAccount(),
		{Name: DevAccountName, Keys: [][]byte{[]byte("another key of some length......"), devAccount().Keys[0]}},
		{Name: "otheracct", Keys: devAccount().Keys},
		nil,
	}
	for _, acct := range accounts {
		v := NewVerifier(acct)
		if v.Account() != acct {
			t.Fatal("Account() is not the account given to NewVerifier")
		}
		for round := range 3 {
			for i, req := range verifierCases() {
				want := VerifySharedKey(req, acct)
				got := v.VerifySharedKey(req)
				if codeOf(got) != codeOf(want) || Detail(got) != Detail(want) {
					t.Errorf("account %v, round %d, case %d: Verifier %v, VerifySharedKey %v", acct, round, i, got, want)
				}
			}
		}
	}
}

// FuzzVerifier: for any Authorization header, date and path, the Verifier and
// VerifySharedKey agree.
func FuzzVerifier(f *testing.F) {
	f.Add("SharedKeyLite devstoreaccount1:xTLoznVtAG1KOQPT13Zbjhd/K/fQg7qDD2DHW3PohGQ=", vectorDate, "/devstoreaccount1/Tables", "")
	f.Add("SharedKey devstoreaccount1:AAAA", "", "/devstoreaccount1-secondary/t", "comp=acl")
	v := NewVerifier(devAccount())
	f.Fuzz(func(t *testing.T, authz, date, rawPath, rawQuery string) {
		hdr := http.Header{}
		hdr.Set("x-ms-date", date)
		hdr.Set("Authorization", authz)
		req := RequestInfo{Method: "GET", RawPath: rawPath, RawQuery: rawQuery, Header: hdr,
			Account: DevAccountName, PathStyle: true, Secondary: true}
		want := VerifySharedKey(req, devAccount())
		got := v.VerifySharedKey(req)
		if codeOf(got) != codeOf(want) || Detail(got) != Detail(want) {
			t.Fatalf("Verifier %v, VerifySharedKey %v", got, want)
		}
	})
}

func BenchmarkVerifier(b *testing.B) {
	req := signed(SchemeSharedKeyLite, devAccount().Keys[0], nil)
	acct := devAccount()
	b.Run("VerifySharedKey", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := VerifySharedKey(req, acct); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Verifier", func(b *testing.B) {
		v := NewVerifier(acct)
		b.ReportAllocs()
		for b.Loop() {
			if err := v.VerifySharedKey(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SignSharedKey", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = SignSharedKey(SchemeSharedKeyLite, req, acct.Keys[0])
		}
	})
}
