package auth

import (
	"cmp"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// The worked examples of the Blob/Queue Shared Key (dev key, x-ms-date fixed).
func TestBlobQueueSharedKeyExamples(t *testing.T) {
	acct := DevAccount()
	const date = "Wed, 01 Jan 2025 00:00:00 GMT"
	hdr := func(kv ...string) HTTPHeader {
		h := http.Header{}
		h.Set("x-ms-date", date)
		h.Set("x-ms-version", "2021-02-12")
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return HTTPHeader(h)
	}
	cases := []struct {
		name   string
		scheme Scheme
		method string
		target string
		header HTTPHeader
		sts    string
		auth   string
	}{
		{"create queue", SchemeSharedKey, "PUT", "/devstoreaccount1/myqueue", hdr("Content-Length", "0", "x-ms-meta-owner", "me"),
			"PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Wed, 01 Jan 2025 00:00:00 GMT\nx-ms-meta-owner:me\nx-ms-version:2021-02-12\n/devstoreaccount1/devstoreaccount1/myqueue",
			"SharedKey devstoreaccount1:yFagjIplUrYGR/njCZUywZvOz/sVOAjKphv04b3JtDU="},
		{"get messages", SchemeSharedKey, "GET", "/devstoreaccount1/myqueue/messages?numofmessages=2&visibilitytimeout=30", hdr(),
			"GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Wed, 01 Jan 2025 00:00:00 GMT\nx-ms-version:2021-02-12\n/devstoreaccount1/devstoreaccount1/myqueue/messages\nnumofmessages:2\nvisibilitytimeout:30",
			"SharedKey devstoreaccount1:R9ub7TxNR7U/SoClnwQMDPJKd7SGC2u3NfSt2/sSuqo="},
		{"get messages lite", SchemeSharedKeyLite, "GET", "/devstoreaccount1/myqueue/messages?numofmessages=2&visibilitytimeout=30", hdr(),
			"GET\n\n\n\nx-ms-date:Wed, 01 Jan 2025 00:00:00 GMT\nx-ms-version:2021-02-12\n/devstoreaccount1/devstoreaccount1/myqueue/messages",
			""},
		{"put message", SchemeSharedKey, "POST", "/devstoreaccount1/myqueue/messages?messagettl=-1", hdr("Content-Length", "73", "Content-Type", "application/xml"),
			"POST\n\n\n73\n\napplication/xml\n\n\n\n\n\n\nx-ms-date:Wed, 01 Jan 2025 00:00:00 GMT\nx-ms-version:2021-02-12\n/devstoreaccount1/devstoreaccount1/myqueue/messages\nmessagettl:-1",
			"SharedKey devstoreaccount1:PyIotLKYcGRZCvftirHNscsDrmpFepuUe9gaqCOY4j4="},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, query := SplitRequestURI(tc.target)
			req := RequestInfo{Method: tc.method, RawPath: path, RawQuery: query, Header: tc.header,
				Account: "devstoreaccount1", PathStyle: true, Service: ServiceQueue}
			if got := StringToSign(tc.scheme, req); got != tc.sts {
				t.Fatalf("string-to-sign\n got %q\nwant %q", got, tc.sts)
			}
			if tc.auth == "" {
				tc.auth = SignSharedKey(tc.scheme, req, acct.Keys[0])
			}
			if got := SignSharedKey(tc.scheme, req, acct.Keys[0]); got != tc.auth {
				t.Fatalf("Authorization %q, want %q", got, tc.auth)
			}
			h := http.Header(tc.header).Clone()
			h.Set("Authorization", tc.auth)
			req.Header = HTTPHeader(h)
			if err := NewVerifier(&acct).VerifySharedKey(req); err != nil {
				t.Fatalf("verify: %v", err)
			}
			// The Table flavour of the same request must not verify.
			req.Service = ServiceTable
			if err := NewVerifier(&acct).VerifySharedKey(req); err == nil {
				t.Fatal("the Table flavour accepted a Blob/Queue signature")
			}
		})
	}
}

// The wire reference's Shared Key Lite example leaves the Date line out entirely; Azure's
// documentation has an empty Date line. Both are accepted.
func TestBlobQueueSharedKeyLiteWithoutDateLine(t *testing.T) {
	acct := DevAccount()
	h := http.Header{}
	h.Set("x-ms-date", "Wed, 01 Jan 2025 00:00:00 GMT")
	h.Set("x-ms-version", "2021-02-12")
	h.Set("Authorization", "SharedKeyLite devstoreaccount1:0oUi+7xGKw17E/uPAxDAKe2BhNkYXr95drkv1dLw1oA=")
	req := RequestInfo{Method: "GET", RawPath: "/devstoreaccount1/myqueue/messages", RawQuery: "numofmessages=2&visibilitytimeout=30",
		Header: HTTPHeader(h), Account: "devstoreaccount1", PathStyle: true, Service: ServiceQueue}
	if err := NewVerifier(&acct).VerifySharedKey(req); err != nil {
		t.Fatal(err)
	}
}

// The service orders '_' before digits and letters; code-point order puts digits first.
// Both are accepted (the second as a leniency for azqueue 1.0.1 and azure-cli 2.45).
func TestBlobQueueHeaderOrder(t *testing.T) {
	if compareServiceOrder("x-ms-meta-a_b", "x-ms-meta-a1") >= 0 || compareServiceOrder("x-ms-meta-a1", "x-ms-meta-ab") >= 0 {
		t.Fatal("service order: want x-ms-meta-a_b < x-ms-meta-a1 < x-ms-meta-ab")
	}
	if compareServiceOrder("x-ms-meta-a", "x-ms-meta-ab") >= 0 || compareServiceOrder("x-ms-meta-ab", "x-ms-meta-a") <= 0 {
		t.Fatal("service order: want a prefix first, from either side")
	}
	acct := DevAccount()
	h := http.Header{}
	h.Set("x-ms-date", "Wed, 01 Jan 2025 00:00:00 GMT")
	h.Set("x-ms-version", "2021-02-12")
	h.Set("x-ms-meta-a1", "1")
	h.Set("x-ms-meta-a_b", "2")
	req := RequestInfo{Method: "PUT", RawPath: "/devstoreaccount1/q", Header: HTTPHeader(h), Account: "devstoreaccount1", PathStyle: true, Service: ServiceQueue}
	sts := StringToSign(SchemeSharedKey, req)
	want := "x-ms-meta-a_b:2\nx-ms-meta-a1:1\n"
	if !strings.Contains(sts, want) {
		t.Fatalf("string-to-sign %q lacks %q", sts, want)
	}
	// Sign in code-point order by hand: the verifier must accept it too.
	cp := "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Wed, 01 Jan 2025 00:00:00 GMT\nx-ms-meta-a1:1\nx-ms-meta-a_b:2\nx-ms-version:2021-02-12\n/devstoreaccount1/devstoreaccount1/q"
	h.Set("Authorization", "SharedKey devstoreaccount1:"+encodeSig(mac(acct.Keys[0], cp)))
	if err := NewVerifier(&acct).VerifySharedKey(req); err != nil {
		t.Fatalf("code-point order refused: %v", err)
	}
	// One Verifier tries first the order that matched last: both keep working, alternately.
	v := NewVerifier(&acct)
	service := SignSharedKey(SchemeSharedKey, req, acct.Keys[0])
	codePoint := h.Get("Authorization")
	for i, auth := range []string{service, codePoint, codePoint, service, service, codePoint} {
		h.Set("Authorization", auth)
		if err := v.VerifySharedKey(req); err != nil {
			t.Fatalf("request %d refused after the other order matched: %v", i, err)
		}
	}
	h.Set("Authorization", "SharedKey devstoreaccount1:"+encodeSig(mac(acct.Keys[0], cp+"x")))
	if err := v.VerifySharedKey(req); err == nil {
		t.Fatal("a wrong signature was accepted")
	}
}

// Only two x-ms-* headers, whose service and code-point orders differ in every place, and a
// Date header instead of x-ms-date (signed on the Date line): a request signed in code-point
// order still verifies.
func TestBlobQueueCodePointOrderOnly(t *testing.T) {
	acct := DevAccount()
	const date = "Wed, 01 Jan 2025 00:00:00 GMT"
	h := http.Header{}
	h.Set("Date", date)
	h.Set("x-ms-meta-a1", "1")
	h.Set("x-ms-meta-a_b", "2")
	req := RequestInfo{Method: "PUT", RawPath: "/devstoreaccount1/q", Header: HTTPHeader(h), Account: "devstoreaccount1", PathStyle: true, Service: ServiceQueue}
	cp := "PUT\n\n\n\n\n\n" + date + "\n\n\n\n\n\nx-ms-meta-a1:1\nx-ms-meta-a_b:2\n/devstoreaccount1/devstoreaccount1/q"
	h.Set("Authorization", "SharedKey devstoreaccount1:"+encodeSig(mac(acct.Keys[0], cp)))
	if err := NewVerifier(&acct).VerifySharedKey(req); err != nil {
		t.Fatalf("code-point order refused: %v", err)
	}
}

// The service's order of header names holding punctuation, written by hand from its rule
// (the culture-aware order the Azure SDKs for Go, JavaScript and .NET reproduce): hyphens
// and apostrophes are ignored at first, the other token characters come before the digits
// in the order ! # $ % & * . ^ _ ` | ~ +, digits before letters, a prefix first; names equal
// but for hyphens and apostrophes are ordered at the first position where they differ: an
// ordinary character, then the end of the name, then an apostrophe, then a hyphen.
func TestBlobQueueHeaderOrderPunctuation(t *testing.T) {
	want := []string{"x-ms-a", "x-ms-a-", "x-ms-a!", "x-ms-a#", "x-ms-a$", "x-ms-a%", "x-ms-a&",
		"x-ms-a*", "x-ms-a.", "x-ms-a^", "x-ms-a_", "x-ms-a`", "x-ms-a|", "x-ms-a~", "x-ms-a+",
		"x-ms-a0", "x-ms-a9", "x-msab", "x-ms-ab", "x-ms-ab-", "x-ms-a'b", "x-ms-a-b", "x-ms-az",
		"x-ms-b"}
	for i, a := range want {
		for j, b := range want {
			if got := compareServiceOrder(a, b); got != cmp.Compare(i, j) {
				t.Errorf("compareServiceOrder(%q, %q) = %d, want %d", a, b, got, cmp.Compare(i, j))
			}
		}
	}

	// The string-to-sign lists them in that order, and a signature over it verifies.
	const date = "Wed, 01 Jan 2025 00:00:00 GMT"
	h := http.Header{}
	h.Set("x-ms-date", date)
	h.Set("x-ms-version", "2021-02-12")
	h.Set("x-ms-a-b", "3")
	h.Set("x-ms-ab", "2")
	h.Set("x-ms-a~", "1")
	req := RequestInfo{Method: "PUT", RawPath: "/devstoreaccount1/c", RawQuery: "restype=container",
		Header: HTTPHeader(h), Account: "devstoreaccount1", PathStyle: true, Service: ServiceBlob}
	sts := "PUT\n\n\n\n\n\n\n\n\n\n\n\n" +
		"x-ms-a~:1\nx-ms-ab:2\nx-ms-a-b:3\nx-ms-date:" + date + "\nx-ms-version:2021-02-12\n" +
		"/devstoreaccount1/devstoreaccount1/c\nrestype:container"
	checkSignsAndVerifies(t, h, req, sts)
}

// The canonicalization's edges, against a string-to-sign written by hand: a name that is a
// prefix of another sorts first (and "x-ms-" alone is an x-ms-* header), header names are
// lower-cased ('Z' included), leading blanks of a value are dropped, an empty value keeps
// its line, and query names and values are decoded ('+' is a space), names lower-cased.
func TestBlobQueueCanonicalEdges(t *testing.T) {
	const date = "Wed, 01 Jan 2025 00:00:00 GMT"
	h := http.Header{}
	h.Set("x-ms-date", date)
	h["X-Ms-Meta-Ab"] = []string{""}
	h["X-Ms-Meta-A"] = []string{" \tv"}
	h["X-Ms-"] = []string{"z"}
	h["X-Ms-Meta-Zed"] = []string{"1"} // names are lower-cased, 'Z' included
	req := RequestInfo{Method: "GET", RawPath: "/devstoreaccount1/c", RawQuery: "restype=container&Comp=list&prefix=a%2Fb+c&my%20name=1",
		Header: HTTPHeader(h), Account: "devstoreaccount1", PathStyle: true, Service: ServiceBlob}
	want := "GET\n\n\n\n\n\n\n\n\n\n\n\n" +
		"x-ms-:z\nx-ms-date:" + date + "\nx-ms-meta-a:v\nx-ms-meta-ab:\nx-ms-meta-zed:1\n" +
		"/devstoreaccount1/devstoreaccount1/c\ncomp:list\nmy name:1\nprefix:a/b c\nrestype:container"
	checkSignsAndVerifies(t, h, req, want)
}

// checkSignsAndVerifies asserts that req's Shared Key string-to-sign is want, and that the
// verifier accepts req (whose headers are h) signed over it with the dev account's key.
func checkSignsAndVerifies(t *testing.T, h http.Header, req RequestInfo, want string) {
	t.Helper()
	if got := StringToSign(SchemeSharedKey, req); got != want {
		t.Fatalf("string-to-sign\n got %q\nwant %q", got, want)
	}
	acct := DevAccount()
	h.Set("Authorization", "SharedKey devstoreaccount1:"+encodeSig(mac(acct.Keys[0], want)))
	if err := NewVerifier(&acct).VerifySharedKey(req); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

// canonQueryReference is the canonicalized query as the documentation words it: decoded,
// lower-cased names in order, each with its values sorted and joined with ",".
func canonQueryReference(rawQuery string) string {
	vals := map[string][]string{}
	for _, pair := range strings.Split(rawQuery, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if n, err := url.QueryUnescape(k); err == nil {
			k = n
		}
		if n, err := url.QueryUnescape(v); err == nil {
			v = n
		}
		k = strings.ToLower(k)
		vals[k] = append(vals[k], v)
	}
	names := slices.Sorted(maps.Keys(vals))
	var b strings.Builder
	for _, k := range names {
		slices.Sort(vals[k])
		b.WriteString("\n" + k + ":" + strings.Join(vals[k], ","))
	}
	return b.String()
}

func TestCanonQuery(t *testing.T) {
	for _, q := range []string{"", "comp=list", "b=2&a=1&A=0&a=%41&&c", "popreceipt=AbC-_x&numofmessages=1", "x=1&x=1&X=+&y"} {
		if got, want := string(appendCanonQuery(nil, q)), canonQueryReference(q); got != want {
			t.Errorf("%q: %q, want %q", q, got, want)
		}
	}
}

func FuzzCanonQuery(f *testing.F) {
	f.Add("b=2&a=1&A=0&a=%41&&c")
	f.Add("comp=metadata&restype=container&timeout=30")
	f.Fuzz(func(t *testing.T, q string) {
		if got, want := string(appendCanonQuery(nil, q)), canonQueryReference(q); got != want {
			t.Fatalf("%q: %q, want %q", q, got, want)
		}
	})
}

// peekHeader is a header view like the server's: Peek and an enumeration of raw bytes.
type peekHeader http.Header

func (h peekHeader) Get(key string) string { return http.Header(h).Get(key) }

func (h peekHeader) Peek(key string) []byte {
	if v := http.Header(h).Get(key); v != "" {
		return []byte(v)
	}
	return nil
}

func (h peekHeader) EachHeaderBytes(fn func(name, value []byte)) {
	for k, vs := range h {
		for _, v := range vs {
			fn([]byte(k), []byte(v))
		}
	}
}

// getOnlyHeader can only look headers up by name: no x-ms-* line can be listed.
type getOnlyHeader http.Header

func (h getOnlyHeader) Get(key string) string { return http.Header(h).Get(key) }

// The Blob/Queue string-to-sign through the server's byte-level header view and through a
// header that cannot be enumerated: the Date line is empty when x-ms-date is sent and holds
// the Date header otherwise; the standard headers are signed by name either way.
func TestBlobQueueHeaderViews(t *testing.T) {
	const date = "Wed, 01 Jan 2025 00:00:00 GMT"
	req := RequestInfo{Method: "PUT", RawPath: "/devstoreaccount1/q", Account: "devstoreaccount1", PathStyle: true, Service: ServiceQueue}
	h := http.Header{}
	h.Set("Date", date)
	h.Set("Content-Type", "text/plain")
	req.Header = peekHeader(h)
	want := "PUT\n\n\n\n\ntext/plain\n" + date + "\n\n\n\n\n\n/devstoreaccount1/devstoreaccount1/q"
	if got := StringToSign(SchemeSharedKey, req); got != want {
		t.Fatalf("Date only\n got %q\nwant %q", got, want)
	}
	h.Set("x-ms-date", date)
	want = "PUT\n\n\n\n\ntext/plain\n\n\n\n\n\n\nx-ms-date:" + date + "\n/devstoreaccount1/devstoreaccount1/q"
	if got := StringToSign(SchemeSharedKey, req); got != want {
		t.Fatalf("with x-ms-date\n got %q\nwant %q", got, want)
	}
	req.Header = getOnlyHeader(h)
	want = "PUT\n\n\n\n\ntext/plain\n\n\n\n\n\n\n/devstoreaccount1/devstoreaccount1/q"
	if got := StringToSign(SchemeSharedKey, req); got != want {
		t.Fatalf("a header without enumeration\n got %q\nwant %q", got, want)
	}
}
