package auth

import (
	"net/http"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

const vectorDate = "Wed, 01 Jan 2025 00:00:00 GMT"

func vectorRequest(method, rawPath, rawQuery string, hdr map[string]string) RequestInfo {
	h := http.Header{}
	h.Set("x-ms-date", vectorDate)
	for k, v := range hdr {
		h.Set(k, v)
	}
	return RequestInfo{Method: method, RawPath: rawPath, RawQuery: rawQuery, Header: h,
		Account: DevAccountName, PathStyle: true}
}

// TestSharedKeyVectors checks the test vectors of auth.md §5.
func TestSharedKeyVectors(t *testing.T) {
	tests := []struct {
		scheme Scheme
		req    RequestInfo
		sts    string
		sig    string
	}{
		{SchemeSharedKeyLite, vectorRequest("GET", "/devstoreaccount1/Tables", "", nil),
			"Wed, 01 Jan 2025 00:00:00 GMT\n/devstoreaccount1/devstoreaccount1/Tables",
			"xTLoznVtAG1KOQPT13Zbjhd/K/fQg7qDD2DHW3PohGQ="},
		{SchemeSharedKey, vectorRequest("POST", "/devstoreaccount1/Tables", "", map[string]string{"Content-Type": "application/json"}),
			"POST\n\napplication/json\nWed, 01 Jan 2025 00:00:00 GMT\n/devstoreaccount1/devstoreaccount1/Tables",
			"Dsh80yZ8Fqxp9O6KWWMnYutzbz2HMkF1Luy6T28Dl/4="},
		{SchemeSharedKeyLite, vectorRequest("GET", "/devstoreaccount1/mytable", "comp=acl", nil),
			"Wed, 01 Jan 2025 00:00:00 GMT\n/devstoreaccount1/devstoreaccount1/mytable?comp=acl",
			"ycBKSyKYTrQJvphvPjyJMNG4/avIgaEt5vVxNR39Zns="},
		{SchemeSharedKey, vectorRequest("GET", "/devstoreaccount1/mytable(PartitionKey='p%201',RowKey='r')", "", nil),
			"GET\n\n\nWed, 01 Jan 2025 00:00:00 GMT\n/devstoreaccount1/devstoreaccount1/mytable(PartitionKey='p%201',RowKey='r')",
			"oLt1iuNE6YiEca3wYqdndh4iXT+X4ZbOz6gP38F4r4s="},
	}
	for _, tt := range tests {
		if got := StringToSign(tt.scheme, tt.req); got != tt.sts {
			t.Errorf("string-to-sign\n got %q\nwant %q", got, tt.sts)
		}
		header := tt.scheme.String() + " devstoreaccount1:" + tt.sig
		if got := SignSharedKey(tt.scheme, tt.req, devAccount().Keys[0]); got != header {
			t.Errorf("SignSharedKey = %q, want %q", got, header)
		}
		tt.req.Header.(http.Header).Set("Authorization", header)
		if err := VerifySharedKey(tt.req, devAccount()); err != nil {
			t.Errorf("%s: %v", tt.sts, err)
		}
	}
}

func TestCanonicalResource(t *testing.T) {
	tests := []struct{ rawPath, rawQuery, want string }{
		{"", "", "/acct/"},
		{"/", "restype=service&comp=properties", "/acct/?comp=properties"},
		{"/acct", "comp=properties&restype=service", "/acct/acct?comp=properties"},
		{"/t()", "$filter=PartitionKey%20eq%20'a'&$top=2&NextPartitionKey=x&timeout=5", "/acct/t()"},
		{"/t", "COMP=acl", "/acct/t?comp=acl"},
		{"/t", "a=1&comp=%61cl&comp=stats", "/acct/t?comp=acl"},
		{"/t", "comp=", "/acct/t?comp="},
		{"/t", "comp=%zz", "/acct/t?comp=%zz"},
		{"/t(PartitionKey='pk%20''q''')", "", "/acct/t(PartitionKey='pk%20''q''')"},
	}
	for _, tt := range tests {
		if got := canonicalResource("acct", tt.rawPath, tt.rawQuery); got != tt.want {
			t.Errorf("canonicalResource(%q, %q) = %q, want %q", tt.rawPath, tt.rawQuery, got, tt.want)
		}
	}
}

func TestParseAuthorization(t *testing.T) {
	tests := []struct {
		in      string
		scheme  Scheme
		account string
		ok      bool
	}{
		{"SharedKey acct:AAAA", SchemeSharedKey, "acct", true},
		{"SharedKeyLite acct:AAAA", SchemeSharedKeyLite, "acct", true},
		{"sharedkeylite acct:AAAA", SchemeSharedKeyLite, "acct", true},
		{"  SharedKey   acct:AAAA  ", SchemeSharedKey, "acct", true},
		{"Bearer eyJ0eXAi", SchemeBearer, "", true},
		{"", 0, "", false},
		{"SharedKey", 0, "", false},
		{"SharedKey acct", 0, "", false},
		{"SharedKey :AAAA", 0, "", false},
		{"SharedKey acct:", 0, "", false},
		{"SharedKey acct:not base64!", 0, "", false},
		{"SharedKey acct:AAA", 0, "", false},
		{"Basic dXNlcjpwYXNz", 0, "", false},
		{"Bearer ", 0, "", false},
	}
	for _, tt := range tests {
		a, err := ParseAuthorization(tt.in)
		if !tt.ok {
			if err == nil {
				t.Errorf("%q: no error", tt.in)
				continue
			}
			wantCode(t, err, azerr.InvalidAuthenticationInfo)
			continue
		}
		if err != nil || a.Scheme != tt.scheme || a.Account != tt.account {
			t.Errorf("%q: got %+v, %v", tt.in, a, err)
		}
	}
}

// signed returns a path-style request to /devstoreaccount1/Tables signed with key.
func signed(s Scheme, key []byte, edit func(*RequestInfo)) RequestInfo {
	req := vectorRequest("GET", "/devstoreaccount1/Tables", "", nil)
	if edit != nil {
		edit(&req)
	}
	req.Header.(http.Header).Set("Authorization", SignSharedKey(s, req, key))
	return req
}

func TestVerifySharedKeyErrors(t *testing.T) {
	dev := devAccount()
	other := []byte("another key of some length......")
	twoKeys := &Account{Name: DevAccountName, Keys: [][]byte{other, dev.Keys[0]}}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	setHeader := func(k, v string) func(*RequestInfo) {
		return func(r *RequestInfo) { r.Header.(http.Header).Set(k, v) }
	}
	tests := []struct {
		name string
		req  RequestInfo
		acct *Account
		want azerr.Code
	}{
		{"ok", signed(SchemeSharedKey, dev.Keys[0], nil), dev, ""},
		{"second key", signed(SchemeSharedKeyLite, dev.Keys[0], nil), twoKeys, ""},
		{"wrong key", signed(SchemeSharedKeyLite, other, nil), dev, azerr.AuthenticationFailed},
		{"unknown account", signed(SchemeSharedKey, dev.Keys[0], nil), nil, azerr.AuthenticationFailed},
		{"header account differs", func() RequestInfo {
			r := signed(SchemeSharedKey, dev.Keys[0], nil)
			r.Account = "otheracct" // same key, but the URL addresses another account
			return r
		}(), &Account{Name: "otheracct", Keys: dev.Keys}, azerr.AuthenticationFailed},
		{"account object differs", signed(SchemeSharedKey, dev.Keys[0], nil),
			&Account{Name: "otheracct", Keys: dev.Keys}, azerr.AuthenticationFailed},
		{"no authorization", vectorRequest("GET", "/devstoreaccount1/Tables", "", nil), dev, azerr.AuthenticationFailed},
		{"garbage authorization", vectorRequest("GET", "/x", "", map[string]string{"Authorization": "garbage"}), dev,
			azerr.InvalidAuthenticationInfo},
		{"bearer", vectorRequest("GET", "/x", "", map[string]string{"Authorization": "Bearer abc"}), dev,
			azerr.InvalidAuthenticationInfo},
		{"nil header", RequestInfo{Method: "GET", Account: DevAccountName}, dev, azerr.AuthenticationFailed},
		{"no date", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) { r.Header.(http.Header).Del("x-ms-date") }),
			dev, azerr.MissingRequiredHeader},
		{"Date only", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) {
			r.Header.(http.Header).Del("x-ms-date")
			r.Header.(http.Header).Set("Date", vectorDate)
		}), dev, ""},
		{"tampered after signing", func() RequestInfo {
			r := signed(SchemeSharedKey, dev.Keys[0], nil)
			r.RawPath = "/devstoreaccount1/Tables2"
			return r
		}(), dev, azerr.AuthenticationFailed},
		{"content-type is signed by SharedKey", func() RequestInfo {
			r := signed(SchemeSharedKey, dev.Keys[0], nil)
			r.Header.(http.Header).Set("Content-Type", "application/json")
			return r
		}(), dev, azerr.AuthenticationFailed},
		{"content-type is not signed by SharedKeyLite", func() RequestInfo {
			r := signed(SchemeSharedKeyLite, dev.Keys[0], nil)
			r.Header.(http.Header).Set("Content-Type", "application/json")
			return r
		}(), dev, ""},
		{"skew off by default", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) { r.Now = now.Add(time.Hour) }), dev, ""},
		{"skew within", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) {
			r.Now, r.MaxClockSkew = now.Add(14*time.Minute), 15*time.Minute
		}), dev, ""},
		{"skew too old", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) {
			r.Now, r.MaxClockSkew = now.Add(16*time.Minute), 15*time.Minute
		}), dev, azerr.AuthenticationFailed},
		{"skew too new", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) {
			r.Now, r.MaxClockSkew = now.Add(-16*time.Minute), 15*time.Minute
		}), dev, azerr.AuthenticationFailed},
		{"skew with bad date", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) {
			setHeader("x-ms-date", "yesterday")(r)
			r.Now, r.MaxClockSkew = now, 15*time.Minute
		}), dev, azerr.AuthenticationFailed},
		{"RFC 3339 date refused", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) {
			setHeader("x-ms-date", "2025-01-01T00:00:00Z")(r)
			r.Now, r.MaxClockSkew = now, 15*time.Minute
		}), dev, azerr.AuthenticationFailed},
		{"numeric zone refused", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) {
			setHeader("x-ms-date", "Wed, 01 Jan 2025 00:00:00 +0000")(r)
			r.Now, r.MaxClockSkew = now, 15*time.Minute
		}), dev, azerr.AuthenticationFailed},
		{"RFC 850 date accepted", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) {
			setHeader("x-ms-date", "Wednesday, 01-Jan-25 00:00:00 GMT")(r)
			r.Now, r.MaxClockSkew = now, 15*time.Minute
		}), dev, ""},
		{"a year old", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) {
			r.Now, r.MaxClockSkew = now.AddDate(1, 0, 0), 15*time.Minute
		}), dev, azerr.AuthenticationFailed},
		{"wider window", signed(SchemeSharedKey, dev.Keys[0], func(r *RequestInfo) {
			r.Now, r.MaxClockSkew = now.Add(20*time.Minute), time.Hour
		}), dev, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, VerifySharedKey(tt.req, tt.acct), tt.want) })
	}
}

// TestSignedDate: when x-ms-date is sent, the signature must cover it; a signature over a
// Date header sent alongside is refused (Azure refuses it), and Date alone is signed.
func TestSignedDate(t *testing.T) {
	dev := devAccount()
	req := vectorRequest("GET", "/devstoreaccount1/Tables", "", map[string]string{"Date": "Thu, 02 Jan 2025 00:00:00 GMT"})
	h := req.Header.(http.Header)
	h.Set("Authorization", "SharedKeyLite devstoreaccount1:"+sign(dev.Keys[0], "Thu, 02 Jan 2025 00:00:00 GMT\n/devstoreaccount1/devstoreaccount1/Tables"))
	wantCode(t, VerifySharedKey(req, dev), azerr.AuthenticationFailed)
	h.Set("Authorization", SignSharedKey(SchemeSharedKeyLite, req, dev.Keys[0]))
	wantCode(t, VerifySharedKey(req, dev), "")
	// The date checked against the clock is the signed one, x-ms-date.
	req.Now, req.MaxClockSkew = time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC), 15*time.Minute
	wantCode(t, VerifySharedKey(req, dev), azerr.AuthenticationFailed)
}

// TestSecondary: path-style secondary URLs verify with the path as sent and with the account
// segment stripped of -secondary; host-style secondary URLs sign the primary account.
func TestSecondary(t *testing.T) {
	dev := devAccount()
	req := vectorRequest("GET", "/devstoreaccount1-secondary/Tables", "", nil)
	req.Secondary = true
	h := req.Header.(http.Header)
	for _, sts := range []string{
		vectorDate + "\n/devstoreaccount1/devstoreaccount1-secondary/Tables",
		vectorDate + "\n/devstoreaccount1/devstoreaccount1/Tables",
	} {
		h.Set("Authorization", "SharedKeyLite devstoreaccount1:"+sign(dev.Keys[0], sts))
		wantCode(t, VerifySharedKey(req, dev), "")
	}
	req.PathStyle = false // host style: the stripped form must not be accepted by accident
	wantCode(t, VerifySharedKey(req, dev), azerr.AuthenticationFailed)

	host := vectorRequest("GET", "/Tables", "", nil)
	host.PathStyle, host.Secondary = false, true
	host.Header.(http.Header).Set("Authorization", "SharedKeyLite devstoreaccount1:"+sign(dev.Keys[0], vectorDate+"\n/devstoreaccount1/Tables"))
	wantCode(t, VerifySharedKey(host, dev), "")
}

func sign(key []byte, sts string) string {
	return encodeSig(mac(key, sts))
}

func TestSplitRequestURI(t *testing.T) {
	tests := []struct{ in, path, query string }{
		{"/devstoreaccount1/Tables?%24top=2", "/devstoreaccount1/Tables", "%24top=2"},
		{"/devstoreaccount1?comp=properties&restype=service", "/devstoreaccount1", "comp=properties&restype=service"},
		{"/t(PartitionKey='a%3Fb',RowKey='')", "/t(PartitionKey='a%3Fb',RowKey='')", ""},
		{"http://127.0.0.1:10002/devstoreaccount1/Tables?x=1", "/devstoreaccount1/Tables", "x=1"},
		{"https://acct.table.core.windows.net", "/", ""},
		{"https://acct.table.core.windows.net?comp=x", "/", "comp=x"},
		{"/a?b=http://c/d", "/a", "b=http://c/d"},
		{"", "/", ""},
		{"*", "*", ""},
		// The edges of the absolute form: an empty scheme is no scheme (the target is a
		// path), and an empty host leaves the path or query that follows it whole.
		{"://h/p?q", "://h/p", "q"},
		{"http:///p?q", "/p", "q"},
		{"http://?q", "/", "q"},
	}
	for _, tt := range tests {
		if p, q := SplitRequestURI(tt.in); p != tt.path || q != tt.query {
			t.Errorf("%q: got %q %q", tt.in, p, q)
		}
	}
}

// TestParseHTTPDate: the positional fast path reads every valid RFC 1123 date, agrees with
// time.Parse on it, and leaves everything else to it.
func TestParseHTTPDate(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"Wed, 01 Jan 2025 00:00:00 GMT", true},
		{"Sun, 06 Nov 1994 08:49:37 GMT", true},
		{"Thu, 29 Feb 2024 23:59:59 GMT", true},
		{"Fri, 31 Jan 2025 00:00:00 GMT", true},
		{"Mon, 01 Jan 0000 00:00:00 GMT", true},
		{"Sunday, 06-Nov-94 08:49:37 GMT", true},
		{"Fri, 29 Feb 2025 00:00:00 GMT", false},
		{"Wed, 31 Apr 2025 00:00:00 GMT", false},
		{"Wed, 01 Jan 2025 24:00:00 GMT", false},
		{"Wed, 01 Foo 2025 00:00:00 GMT", false},
		{"Wed, 01 Jan 2025 00:00:00 UTC", false},
		{"Wed, 01 Jan 2025 00:00:00 +0000", false},
		{"Wed, 1 Jan 2025 00:00:00 GMT", false},
		{"2025-01-01T00:00:00Z", false},
		{"", false},
		// One wrong separator, each place the positional reader checks one.
		{"Wed; 01 Jan 2025 00:00:00 GMT", false},
		{"Wed,_01 Jan 2025 00:00:00 GMT", false},
		{"Wed, 01_Jan 2025 00:00:00 GMT", false},
		{"Wed, 01 Jan_2025 00:00:00 GMT", false},
		{"Wed, 01 Jan 2025_00:00:00 GMT", false},
		{"Wed, 01 Jan 2025 00.00:00 GMT", false},
		{"Wed, 01 Jan 2025 00:00.00 GMT", false},
		// A character just below '0' in a number ("2/25" would read as 1925).
		{"Wed, 01 Jan 2/25 00:00:00 GMT", false},
		// Past the clock's edges, where a lenient reader would carry into the next field.
		{"Wed, 01 Jan 2025 10:60:00 GMT", false},
		{"Wed, 01 Jan 2025 10:00:60 GMT", false},
	} {
		got, ok := parseHTTPDate(tt.in)
		if ok != tt.ok {
			t.Errorf("%q: ok %v, want %v", tt.in, ok, tt.ok)
			continue
		}
		if ok {
			want, err := time.Parse(time.RFC1123, tt.in)
			if err != nil {
				want, err = time.Parse(time.RFC850, tt.in)
			}
			if err != nil || !got.Equal(want) {
				t.Errorf("%q: %v, time.Parse says %v (%v)", tt.in, got, want, err)
			}
		}
		// Every valid date of the RFC 1123 form, the one SDKs send, is read by position:
		// time.Parse is only for the rest.
		if want, err := time.Parse("Mon, 02 Jan 2006 15:04:05 GMT", tt.in); err == nil {
			if got, ok := parseRFC1123(tt.in); !ok || !got.Equal(want) {
				t.Errorf("%q: positional reader gives %v, %v; want %v", tt.in, got, ok, want)
			}
		}
	}
}

func BenchmarkParseHTTPDate(b *testing.B) {
	for b.Loop() {
		if _, ok := parseHTTPDate("Wed, 01 Jan 2025 00:00:00 GMT"); !ok {
			b.Fatal("refused")
		}
	}
}
