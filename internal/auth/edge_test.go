package auth

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestAccountNameEdges: names of 3 and 24 characters from a-z and 0-9 are accepted; one
// shorter or longer, or a character just outside those ranges, is refused.
func TestAccountNameEdges(t *testing.T) {
	const key = "AAAA"
	for _, name := range []string{"az0", "a09z", strings.Repeat("z", 24), "09a", "abc9"} {
		if a, err := ParseAccounts(name + ":" + key); err != nil || len(a) != 1 || a[0].Name != name {
			t.Errorf("%q: %v %v", name, a, err)
		}
	}
	for _, name := range []string{"ab", strings.Repeat("a", 25), "ab`", "ab{", "ab/", "ab@", "abA", "abZ", "ab-"} {
		if _, err := ParseAccounts(name + ":" + key); !errors.Is(err, ErrAccountsSyntax) {
			t.Errorf("%q: %v, want ErrAccountsSyntax", name, err)
		}
	}
	// The error names the key that is bad, counting from 1, and never echoes it.
	_, err := ParseAccounts("acct1:AAAA:!!!secret")
	if err == nil || !strings.Contains(err.Error(), "key 2") || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad second key: %v", err)
	}
	_, err = ParseAccounts("acct1:!!!")
	if err == nil || !strings.Contains(err.Error(), "key 1") {
		t.Errorf("bad first key: %v", err)
	}
}

// TestBearerEdges: the lifetime, size and tenant checks at their exact bounds.
func TestBearerEdges(t *testing.T) {
	auds := BearerAudiences("acct", "table", "https://127.0.0.1:10002/acct")
	check := func(name string, c map[string]any, wantDetail string) *BearerToken {
		t.Helper()
		tok, err := ValidateBearer(mint(t, c), bearerNow, auds)
		switch {
		case wantDetail == "" && err != nil:
			t.Errorf("%s: %v (%s)", name, err, Detail(err))
		case wantDetail != "" && (err == nil || !strings.Contains(Detail(err), wantDetail)):
			t.Errorf("%s: %v (%s), want %q", name, err, Detail(err), wantDetail)
		}
		return tok
	}
	// NumericDate: 0 and 1e11 seconds are dates; past 1e11 (year 5138) is not.
	c := goodClaims()
	c["nbf"] = 0
	check("nbf 0", c, "")
	c = goodClaims()
	c["exp"] = 1e11
	check("exp 1e11", c, "")
	c["exp"] = 1e11 + 1
	check("exp past 1e11", c, "no valid expiration")
	c["exp"] = -1
	check("exp negative", c, "no valid expiration")
	// A fractional expiry keeps its fraction in nanoseconds.
	c = goodClaims()
	c["exp"] = float64(bearerNow.Unix()+60) + 0.25
	if tok := check("fractional exp", c, ""); tok == nil || !tok.Expires.Equal(bearerNow.Add(60*time.Second+250*time.Millisecond)) {
		t.Errorf("fractional exp: %+v", tok)
	}
	// Without tid, the tenant is the issuer's; with it, tid wins.
	c = goodClaims()
	delete(c, "tid")
	c["iss"] = "https://sts.windows.net/from-issuer/"
	if tok := check("no tid", c, ""); tok == nil || tok.TenantID != "from-issuer" {
		t.Errorf("tenant without tid: %+v", tok)
	}
	c["tid"] = "from-tid"
	if tok := check("tid", c, ""); tok == nil || tok.TenantID != "from-tid" {
		t.Errorf("tenant with tid: %+v", tok)
	}
	// A tenant of 128 characters is one; 129 is not.
	c = goodClaims()
	c["iss"] = "https://sts.windows.net/" + strings.Repeat("t", 128) + "/"
	check("tenant of 128", c, "")
	c["iss"] = "https://sts.windows.net/" + strings.Repeat("t", 129) + "/"
	check("tenant of 129", c, "Issuer")
	// A token of exactly maxTokenLen bytes is read; one byte more is not.
	c = goodClaims()
	c["pad"] = ""
	for n := (maxTokenLen - len(mint(t, c))) * 3 / 4; len(mint(t, c)) < maxTokenLen; n++ {
		c["pad"] = strings.Repeat("x", n)
	}
	if n := len(mint(t, c)); n != maxTokenLen {
		t.Fatalf("padded token of %d bytes", n)
	}
	check("token of maxTokenLen", c, "")
	c["pad"] = c["pad"].(string) + "xxx" // base64 grows by 4 for every 3 bytes
	check("token past maxTokenLen", c, "well-formed")
}

// TestTenantCharacters: a tenant is letters, digits, '-' and '.'; the characters next to
// those ranges make BearerChallenge fall back to "common" rather than copy them.
func TestTenantCharacters(t *testing.T) {
	if got := BearerChallenge("azAZ09-.b"); !strings.Contains(got, "/azAZ09-.b/") {
		t.Errorf("valid tenant refused: %q", got)
	}
	for _, c := range []string{"`", "{", "@", "[", "/", ":", ",", "_"} {
		if got := BearerChallenge("t" + c); !strings.Contains(got, "/common/") {
			t.Errorf("tenant with %q accepted: %q", c, got)
		}
	}
	if got := BearerChallenge(strings.Repeat("a", 128)); strings.Contains(got, "/common/") {
		t.Errorf("tenant of 128 refused")
	}
	if got := BearerChallenge(strings.Repeat("a", 129)); !strings.Contains(got, "/common/") {
		t.Errorf("tenant of 129 accepted")
	}
}

// TestCompNameEncoded: a percent-encoded "comp" parameter name is still comp.
func TestCompNameEncoded(t *testing.T) {
	for _, q := range []string{"co%6Dp=acl", "%63omp=acl", "restype=x&COM%50=acl"} {
		if got := canonicalResource("acct", "/t", q); got != "/acct/t?comp=acl" {
			t.Errorf("query %q: %q", q, got)
		}
	}
	if got := canonicalResource("acct", "/t", "co%zzp=acl"); got != "/acct/t" {
		t.Errorf("undecodable name taken as comp: %q", got)
	}
}

// TestSecondaryCandidates: a path-style secondary URL also verifies against the path with
// "-secondary" dropped from the account segment, whether or not a path follows it, but a
// longer account segment that merely starts with it is not rewritten.
func TestSecondaryCandidates(t *testing.T) {
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/acct-secondary", []string{"/acct/acct-secondary", "/acct/acct"}},
		{"/acct-secondary/t()", []string{"/acct/acct-secondary/t()", "/acct/acct/t()"}},
		{"/acct-secondaryx/t", []string{"/acct/acct-secondaryx/t"}},
		{"/acct/t", []string{"/acct/acct/t"}},
	} {
		out, n := candidateResources(RequestInfo{Account: "acct", Secondary: true, PathStyle: true, RawPath: c.path})
		var got []string
		for i := range n {
			got = append(got, string(out[i].appendTo(nil)))
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: %q, want %q", c.path, got, c.want)
		}
	}
}

// TestISOTimeYearBounds: years 1 and 9999 are accepted, also when reached through an offset;
// an offset that carries the time out of them is refused.
func TestISOTimeYearBounds(t *testing.T) {
	for s, want := range map[string]time.Time{
		"0001-01-01":                  time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		"0001-01-01T01:30+01:00":      time.Date(1, 1, 1, 0, 30, 0, 0, time.UTC),
		"9999-12-31T23:59:59Z":        time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		"9999-12-31T22:30-01:00":      time.Date(9999, 12, 31, 23, 30, 0, 0, time.UTC),
		"9999-12-31T23:59:59.9999999": time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC),
	} {
		if got, err := parseISOTime(s); err != nil || !got.Equal(want) {
			t.Errorf("%s: %v %v, want %v", s, got, err, want)
		}
	}
	if got, err := parseISOTime("2026-01-02T00:00+23:59"); err != nil || !got.Equal(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)) {
		t.Errorf("offset +23:59: %v %v", got, err)
	}
	for _, s := range []string{"0001-01-01T00:30+01:00", "9999-12-31T23:30-01:00", "2026-01-02T00:00+24:00", "2026-01-02T00:00+00:60"} {
		if got, err := parseISOTime(s); err == nil {
			t.Errorf("%s: %v, want an error", s, got)
		}
	}
}

// TestFirstBlobOperation: the first Blob operation has its name and its SAS rule (an
// account SAS with service-level resource type and list permission).
func TestFirstBlobOperation(t *testing.T) {
	if got := ListContainers.String(); got != "ListContainers" {
		t.Errorf("ListContainers.String() = %q", got)
	}
	r, ok := ruleOf(ListContainers)
	if !ok || r.resource != 's' || r.account != "l" || !r.serviceDenied {
		t.Errorf("ruleOf(ListContainers) = %+v, %v", r, ok)
	}
	if got := (blobOpsEnd - 1).String(); got != blobOperationNames[len(blobOperationNames)-1] {
		t.Errorf("last blob operation: %q", got)
	}
}

// TestSASParseEdges: the oldest accepted versions, the longest stored policy identifier, and
// the container-only permission letters, each at its edge.
func TestSASParseEdges(t *testing.T) {
	parse := func(svc Service, query string) error {
		t.Helper()
		q, err := url.ParseQuery(query + "&sig=c2ln")
		if err != nil {
			t.Fatal(err)
		}
		_, ok, err := ParseSASFor(svc, q)
		if !ok {
			t.Fatalf("%s: not taken as a SAS", query)
		}
		return err
	}
	const se = "&se=2030-01-01T00:00:00Z"
	for _, c := range []struct {
		svc   Service
		query string
		ok    bool
	}{
		{ServiceQueue, "sv=2013-08-15&sp=r" + se, true},
		{ServiceQueue, "sv=2013-08-14&sp=r" + se, false},
		{ServiceTable, "sv=2013-08-15&tn=t&sp=r" + se, true},
		{ServiceTable, "sv=2013-08-14&tn=t&sp=r" + se, false},
		{ServiceTable, "sv=2015-04-05&ss=t&srt=s&sp=r" + se, true},
		{ServiceTable, "sv=2015-04-04&ss=t&srt=s&sp=r" + se, false},
		{ServiceTable, "sv=2020-12-06&tn=t&si=" + strings.Repeat("é", 64), true},
		{ServiceTable, "sv=2020-12-06&tn=t&si=" + strings.Repeat("é", 65), false},
		{ServiceBlob, "sv=2020-12-06&sr=c&sp=rl" + se, true},
		{ServiceBlob, "sv=2020-12-06&sr=b&sp=rl" + se, false},
		{ServiceBlob, "sv=2020-12-06&sr=b&sp=rt" + se, true},
	} {
		if err := parse(c.svc, c.query); (err == nil) != c.ok {
			t.Errorf("%v %s: %v, want ok=%v", c.svc, c.query, err, c.ok)
		}
	}
}

// TestTableSASAtSipSprVersion: a table SAS gains sip, spr and the /table/ prefix at exactly
// 2015-04-05.
func TestTableSASAtSipSprVersion(t *testing.T) {
	s := mustSAS(t, "sv=2015-04-05&tn=MyTable&sp=r&se=2030-01-01&spk=a&sig=AAAA")
	want := "r\n\n2030-01-01\n/table/devstoreaccount1/mytable\n\n\n\n2015-04-05\na\n\n\n"
	if got := s.StringToSign(DevAccountName); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestSkewAtItsEdges: a request date exactly MaxClockSkew old or ahead is accepted; one
// second further is not.
func TestSkewAtItsEdges(t *testing.T) {
	const date = "Wed, 01 Jan 2025 00:00:00 GMT"
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const skew = 15 * time.Minute
	for _, c := range []struct {
		now time.Time
		ok  bool
	}{
		{at.Add(skew), true}, {at.Add(skew + time.Second), false},
		{at.Add(-skew), true}, {at.Add(-skew - time.Second), false},
	} {
		if err := checkSkew(date, c.now, skew); (err == nil) != c.ok {
			t.Errorf("date %s at %s: %v, want accepted=%v", date, c.now, err, c.ok)
		}
	}
}

// TestZeroKindsNameNothing: an Authorization or SAS never parsed has no scheme or kind; the
// zero values are none of the named ones.
func TestZeroKindsNameNothing(t *testing.T) {
	var a Authorization
	for _, s := range []Scheme{SchemeSharedKey, SchemeSharedKeyLite, SchemeBearer} {
		if a.Scheme == s {
			t.Errorf("the zero Scheme is %v", s)
		}
	}
	if got := a.Scheme.String(); got != "Scheme(?)" {
		t.Errorf("the zero Scheme prints as %q", got)
	}
	var s SAS
	if s.Kind == ServiceSAS || s.Kind == AccountSAS {
		t.Errorf("the zero SASKind is %v", s.Kind)
	}
}
