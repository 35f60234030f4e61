package auth

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

// TestSASVectors checks the SAS test vectors of auth.md §7.1 and §8.
func TestSASVectors(t *testing.T) {
	tests := []struct {
		query string
		sts   string
		sig   string
	}{
		{"sp=raud&st=2025-01-01T00:00:00Z&se=2025-01-02T00:00:00Z&tn=mytable&spr=https,http&sv=2019-02-02",
			"raud\n2025-01-01T00:00:00Z\n2025-01-02T00:00:00Z\n/table/devstoreaccount1/mytable\n\n\nhttps,http\n2019-02-02\n\n\n\n",
			"nHSVSWOmptSz/srlur7Wkw+MiC/iJq281dufnX0mlzo="},
		{"sp=r&se=2025-01-02T00:00:00Z&tn=mytable&sv=2019-02-02&spk=p1&epk=p1&erk=zzz",
			"r\n\n2025-01-02T00:00:00Z\n/table/devstoreaccount1/mytable\n\n\n\n2019-02-02\np1\n\np1\nzzz",
			"sDRcQSUK9EbIBPzNV0XtzdvAIitEjO1eiLJYnyJe0Qs="},
		{"sp=rwdlacu&ss=t&srt=sco&se=2025-01-02T00:00:00Z&spr=https,http&sv=2019-02-02",
			"devstoreaccount1\nrwdlacu\nt\nsco\n\n2025-01-02T00:00:00Z\n\nhttps,http\n2019-02-02\n",
			"n/mDzAIvcAJKaulSisBWv77UM0Dvh45YBOeTjnmT1Ts="},
		{"sp=rwdlacu&ss=t&srt=sco&se=2025-01-02T00:00:00Z&spr=https,http&sv=2020-12-06",
			"devstoreaccount1\nrwdlacu\nt\nsco\n\n2025-01-02T00:00:00Z\n\nhttps,http\n2020-12-06\n\n",
			"ZHVbJB0kd+bB+z+mrQTP16Gxtl5IH49d6WBQaMTo59o="},
	}
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		q, _ := url.ParseQuery(tt.query)
		q.Set("sig", tt.sig)
		s, ok, err := ParseSAS(q)
		if !ok || err != nil {
			t.Fatalf("%s: %v %v", tt.query, ok, err)
		}
		if got := s.StringToSign(DevAccountName); got != tt.sts {
			t.Errorf("string-to-sign\n got %q\nwant %q", got, tt.sts)
		}
		if err := s.Verify(devAccount(), SASRequest{Now: now}); err != nil {
			t.Errorf("%s: %v", tt.query, err)
		}
		s.Sign(DevAccountName, devAccount().Keys[0])
		if s.Signature != tt.sig {
			t.Errorf("Sign = %s, want %s", s.Signature, tt.sig)
		}
	}
}

// TestLegacyServiceSAS: 2013-08-15 ≤ sv < 2015-04-05 signs without sip/spr and /table/.
func TestLegacyServiceSAS(t *testing.T) {
	s := mustSAS(t, "sv=2013-08-15&tn=MyTable&sp=r&se=2030-01-01&spk=a&sig=AAAA")
	want := "r\n\n2030-01-01\n/devstoreaccount1/mytable\n\n2013-08-15\na\n\n\n"
	if got := s.StringToSign(DevAccountName); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	s.Sign(DevAccountName, devAccount().Keys[0])
	wantCode(t, s.Verify(devAccount(), SASRequest{Now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}), "")
}

func mustSAS(t *testing.T, query string) *SAS {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	s, ok, err := ParseSAS(q)
	if !ok || err != nil {
		t.Fatalf("ParseSAS(%s): %v %v", query, ok, err)
	}
	return s
}

func TestParseSASDetect(t *testing.T) {
	q, _ := url.ParseQuery("$filter=x&sv=2019-02-02&tn=t&sp=r&se=2030-01-01")
	if s, ok, err := ParseSAS(q); s != nil || ok || err != nil {
		t.Fatalf("no sig: got %v %v %v", s, ok, err)
	}
	// An unencoded '+' in sig arrives as a space.
	s := mustSAS(t, "sv=2019-02-02&tn=t&sp=r&se=2030-01-01&sig=ab+c/d==")
	if s.Signature != "ab+c/d==" {
		t.Fatalf("sig %q", s.Signature)
	}
}

func TestParseSASErrors(t *testing.T) {
	const svc = "sv=2019-02-02&tn=t&sp=r&se=2030-01-01T00:00:00Z&sig=AAAA"
	const acct = "sv=2019-02-02&ss=t&srt=sco&sp=rl&se=2030-01-01T00:00:00Z&sig=AAAA"
	tests := []struct{ name, query string }{
		{"empty sig", "sv=2019-02-02&tn=t&sp=r&se=2030-01-01&sig="},
		{"bad sig", "sv=2019-02-02&tn=t&sp=r&se=2030-01-01&sig=!!"},
		{"no sv", "tn=t&sp=r&se=2030-01-01&sig=AAAA"},
		{"bad sv", strings.Replace(svc, "2019-02-02", "2019-2-2", 1)},
		{"old sv", strings.Replace(svc, "2019-02-02", "2012-02-12", 1)},
		{"no tn", strings.Replace(svc, "tn=t&", "", 1)},
		{"no sp", strings.Replace(svc, "sp=r&", "", 1)},
		{"no se", strings.Replace(svc, "&se=2030-01-01T00:00:00Z", "", 1)},
		{"bad sp letter", strings.Replace(svc, "sp=r", "sp=rw", 1)},
		{"upper sp", strings.Replace(svc, "sp=r", "sp=R", 1)},
		{"bad se", strings.Replace(svc, "2030-01-01T00:00:00Z", "2030-13-01", 1)},
		{"bad st", svc + "&st=yesterday"},
		{"se before st", svc + "&st=2031-01-01"},
		{"se equals st", svc + "&st=2030-01-01T00:00:00Z"},
		{"bad sip", svc + "&sip=1.2.3"},
		{"reversed sip", svc + "&sip=10.0.0.9-10.0.0.1"},
		{"mixed sip", svc + "&sip=10.0.0.1-::1"},
		{"spr http", svc + "&spr=http"},
		{"spr junk", svc + "&spr=ftp"},
		{"srk without spk", svc + "&srk=a"},
		{"erk without epk", svc + "&erk=a"},
		{"long si", svc + "&si=" + strings.Repeat("x", 65)},
		{"duplicate sp", svc + "&sp=r"},
		{"duplicate sig", svc + "&sig=AAAA"},
		{"acct old sv", strings.Replace(acct, "2019-02-02", "2014-02-14", 1)},
		{"acct no ss", "sv=2019-02-02&srt=sco&sp=rl&se=2030-01-01&sig=AAAA"},
		{"acct no srt", "sv=2019-02-02&ss=t&sp=rl&se=2030-01-01&sig=AAAA"},
		{"acct no sp", "sv=2019-02-02&ss=t&srt=sco&se=2030-01-01&sig=AAAA"},
		{"acct no se", "sv=2019-02-02&ss=t&srt=sco&sp=rl&sig=AAAA"},
		{"acct bad ss", strings.Replace(acct, "ss=t", "ss=tz", 1)},
		{"acct bad srt", strings.Replace(acct, "srt=sco", "srt=scx", 1)},
		{"acct bad sp", strings.Replace(acct, "sp=rl", "sp=rlz", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			s, ok, err := ParseSAS(q)
			if !ok || s != nil {
				t.Fatalf("got %v %v", s, ok)
			}
			wantCode(t, err, azerr.AuthenticationFailed)
		})
	}
}

// newSAS parses query, signs it with the dev key and returns it.
func newSAS(t *testing.T, query string) *SAS {
	t.Helper()
	s := mustSAS(t, query+"&sig=AAAA")
	s.Sign(DevAccountName, devAccount().Keys[0])
	return s
}

func TestVerifySAS(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	expiry := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
	mid := start.Add(time.Hour)
	policies := map[string]*AccessPolicy{
		"full":   {Start: &start, Expiry: &expiry, Permission: "raud"},
		"expiry": {Expiry: &expiry},
		"perm":   {Permission: "r"},
		"empty":  {},
	}
	lookup := func(id string) (*AccessPolicy, bool) { p, ok := policies[id]; return p, ok }
	base := "sv=2019-02-02&tn=t"
	win := "&sp=r&st=2025-01-01T00:00:00Z&se=2025-01-02T00:00:00Z"
	ip := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	tests := []struct {
		name  string
		query string
		req   SASRequest
		want  azerr.Code
	}{
		{"ok", base + win, SASRequest{Now: mid}, ""},
		{"before start", base + win, SASRequest{Now: start.Add(-time.Second)}, azerr.AuthenticationFailed},
		{"before start within skew", base + win, SASRequest{Now: start.Add(-time.Minute), StartSkew: 5 * time.Minute}, ""},
		{"at start", base + win, SASRequest{Now: start}, ""},
		{"at expiry", base + win, SASRequest{Now: expiry}, azerr.AuthenticationFailed},
		{"skew never extends expiry", base + win, SASRequest{Now: expiry, StartSkew: time.Hour}, azerr.AuthenticationFailed},
		{"date-only times", base + "&sp=r&st=2025-01-01&se=2025-01-02", SASRequest{Now: mid}, ""},
		{"minute times", base + "&sp=r&st=2025-01-01T00:00Z&se=2025-01-02T00:00Z", SASRequest{Now: mid}, ""},
		{"fraction times", base + "&sp=r&st=2025-01-01T00:00:00.0000000Z&se=2025-01-02T00:00:00.1234567Z", SASRequest{Now: mid}, ""},
		{"https only over http", base + win + "&spr=https", SASRequest{Now: mid}, azerr.AuthorizationProtocolMismatch},
		{"https only over https", base + win + "&spr=https", SASRequest{Now: mid, TLS: true}, ""},
		{"https,http over http", base + win + "&spr=https,http", SASRequest{Now: mid}, ""},
		{"sip single match", base + win + "&sip=10.0.0.5", SASRequest{Now: mid, ClientIP: ip("10.0.0.5")}, ""},
		{"sip single mapped", base + win + "&sip=10.0.0.5", SASRequest{Now: mid, ClientIP: ip("::ffff:10.0.0.5")}, ""},
		{"sip single miss", base + win + "&sip=10.0.0.5", SASRequest{Now: mid, ClientIP: ip("10.0.0.6")}, azerr.AuthorizationSourceIPMismatch},
		{"sip range low", base + win + "&sip=10.0.0.1-10.0.0.9", SASRequest{Now: mid, ClientIP: ip("10.0.0.1")}, ""},
		{"sip range high", base + win + "&sip=10.0.0.1-10.0.0.9", SASRequest{Now: mid, ClientIP: ip("10.0.0.9")}, ""},
		{"sip range out", base + win + "&sip=10.0.0.1-10.0.0.9", SASRequest{Now: mid, ClientIP: ip("10.0.0.10")}, azerr.AuthorizationSourceIPMismatch},
		{"sip unknown client", base + win + "&sip=10.0.0.1", SASRequest{Now: mid}, azerr.AuthorizationSourceIPMismatch},
		{"sip v6 client", base + win + "&sip=10.0.0.1", SASRequest{Now: mid, ClientIP: ip("::1")}, azerr.AuthorizationSourceIPMismatch},
		{"policy full", base + "&si=full", SASRequest{Now: mid, Policy: lookup}, ""},
		{"policy expired", base + "&si=full", SASRequest{Now: expiry.Add(time.Hour), Policy: lookup}, azerr.AuthenticationFailed},
		{"policy missing", base + "&si=gone", SASRequest{Now: mid, Policy: lookup}, azerr.AuthenticationFailed},
		{"policy without lookup", base + "&si=full", SASRequest{Now: mid}, azerr.AuthenticationFailed},
		{"policy + sas sp", base + "&si=full&sp=r", SASRequest{Now: mid, Policy: lookup}, azerr.AuthenticationFailed},
		{"policy + sas se", base + "&si=full&se=2025-01-02", SASRequest{Now: mid, Policy: lookup}, azerr.AuthenticationFailed},
		{"policy + sas st", base + "&si=full&st=2025-01-01", SASRequest{Now: mid, Policy: lookup}, azerr.AuthenticationFailed},
		{"policy expiry, sas sp", base + "&si=expiry&sp=r", SASRequest{Now: mid, Policy: lookup}, ""},
		{"policy expiry, no sp", base + "&si=expiry", SASRequest{Now: mid, Policy: lookup}, azerr.AuthenticationFailed},
		{"policy perm, sas se", base + "&si=perm&se=2025-01-02", SASRequest{Now: mid, Policy: lookup}, ""},
		{"policy perm, no se", base + "&si=perm", SASRequest{Now: mid, Policy: lookup}, azerr.AuthenticationFailed},
		{"policy empty, sas all", base + "&si=empty" + win, SASRequest{Now: mid, Policy: lookup}, ""},
		{"account ok", "sv=2019-02-02&ss=t&srt=sco&sp=rl&se=2025-01-02", SASRequest{Now: mid}, ""},
		{"account ignores si", "sv=2019-02-02&ss=t&srt=sco&sp=rl&se=2025-01-02&si=gone", SASRequest{Now: mid}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSAS(t, tt.query)
			err := s.Verify(devAccount(), tt.req)
			wantCode(t, err, tt.want)
			if (err == nil) != s.verified {
				t.Fatalf("verified=%v after %v", s.verified, err)
			}
		})
	}
}

func TestVerifySASSignature(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	s := newSAS(t, "sv=2019-02-02&tn=t&sp=r&se=2025-01-02")
	wantCode(t, s.Verify(nil, SASRequest{Now: now}), azerr.AuthenticationFailed)
	wantCode(t, s.Verify(&Account{Name: DevAccountName, Keys: [][]byte{[]byte("other")}}, SASRequest{Now: now}), azerr.AuthenticationFailed)
	wantCode(t, s.Verify(&Account{Name: DevAccountName, Keys: [][]byte{[]byte("other"), devAccount().Keys[0]}}, SASRequest{Now: now}), "")
	wantCode(t, s.Verify(&Account{Name: "otheracct", Keys: devAccount().Keys}, SASRequest{Now: now}), azerr.AuthenticationFailed)
	// Every signed field is covered: changing any one breaks the signature.
	for _, edit := range []func(*SAS){
		func(s *SAS) { s.Permissions = "ra" },
		func(s *SAS) { s.Expiry = "2025-01-03" },
		func(s *SAS) { s.TableName = "u" },
		func(s *SAS) { s.StartPK = "a" },
		func(s *SAS) { s.EndPK = "z" },
		func(s *SAS) { s.Protocol = "https,http" },
		func(s *SAS) { s.Version = "2019-07-07" },
	} {
		c := *s
		edit(&c)
		wantCode(t, c.Verify(devAccount(), SASRequest{Now: now}), azerr.AuthenticationFailed)
	}
	// tn is case-insensitive in the signature: the canonical resource lower-cases it.
	c := *s
	c.TableName = "T"
	wantCode(t, c.Verify(devAccount(), SASRequest{Now: now}), "")
}

func TestQueryRoundTrip(t *testing.T) {
	s := newSAS(t, "sv=2019-02-02&tn=t&sp=raud&st=2025-01-01&se=2025-01-02&sip=1.2.3.4&spr=https&spk=a&srk=b&epk=c&erk=d&si=x")
	again, ok, err := ParseSAS(s.Query())
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if again.StringToSign(DevAccountName) != s.StringToSign(DevAccountName) || again.Signature != s.Signature {
		t.Fatal("Query does not round-trip")
	}
}
