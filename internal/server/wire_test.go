package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
)

// checkVersionRef is checkVersion as it was before the time.Parse fast path.
func checkVersionRef(v string) error {
	if v == "" {
		return nil
	}
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return azerr.New(azerr.InvalidHeaderValue)
	}
	if t.Before(time.Date(2013, 8, 15, 0, 0, 0, 0, time.UTC)) {
		return azerr.New(azerr.JSONFormatNotSupported)
	}
	return nil
}

func sameVersionAnswer(t *testing.T, v string) {
	t.Helper()
	got, want := checkVersion(v), checkVersionRef(v)
	if (got == nil) != (want == nil) || got != nil && azerr.From(got).Code != azerr.From(want).Code {
		t.Fatalf("checkVersion(%q) = %v, want %v", v, got, want)
	}
}

var versionSeeds = []string{
	"", "2019-02-02", "2013-08-15", "2013-08-14", "2012-02-12", "2020-12-06", "2099-12-31",
	"2019-02-29", "2020-02-29", "2019-04-31", "2019-13-01", "2019-00-10", "2019-01-00",
	"0000-01-01", "2019-2-02", "+019-02-02", "2019-02-02x", "2019/02/02", "２０19-02-02", "abcd-ef-gh",
}

func TestCheckVersion(t *testing.T) {
	for _, v := range versionSeeds {
		sameVersionAnswer(t, v)
	}
}

// FuzzCheckVersion: the fast path answers exactly as time.Parse does.
func FuzzCheckVersion(f *testing.F) {
	for _, v := range versionSeeds {
		f.Add(v)
	}
	f.Fuzz(sameVersionAnswer)
}

// quotedRef is argScanner.quoted without the substring fast path.
func quotedRef(a *argScanner) (string, error) {
	if !a.consume("'") {
		return "", errQuerySyntax
	}
	var b strings.Builder
	for a.i < len(a.s) {
		c := a.s[a.i]
		a.i++
		if c != '\'' {
			b.WriteByte(c)
			continue
		}
		if a.i < len(a.s) && a.s[a.i] == '\'' {
			b.WriteByte('\'')
			a.i++
			continue
		}
		return b.String(), nil
	}
	return "", azerr.Newf(azerr.InvalidInput, "There is an unterminated string literal at position %d in '%s'.", a.i, a.s)
}

// FuzzQuoted: quoted reads the same literal, stops at the same place and fails the same way
// as the character-by-character reference.
func FuzzQuoted(f *testing.F) {
	for _, s := range []string{"'a'", "'o''k'", "''", "''''", "'a", "a'", "'a'b", "'a'''", "'''a'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, b := &argScanner{s: s}, &argScanner{s: s}
		got, gerr := a.quoted()
		want, werr := quotedRef(b)
		if got != want || a.i != b.i || (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("%q: quoted = %q, %d, %v; reference %q, %d, %v", s, got, a.i, gerr, want, b.i, werr)
		}
	})
}

// preferValueRef is preferValue as it was (strings.Split).
func preferValueRef(h http.Header) string {
	for _, v := range h.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			switch strings.TrimSpace(p) {
			case "return-no-content":
				return "return-no-content"
			case "return-content":
				return "return-content"
			}
		}
	}
	return ""
}

func FuzzPreferValue(f *testing.F) {
	for _, s := range []string{"", "return-no-content", " return-content ,x", "x,,return-content", "odata.maxpagesize=1, return-no-content", ","} {
		f.Add(s, "return-content")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		h := http.Header{"Prefer": {a, b}}
		if got, want := preferValue(h["Prefer"]), preferValueRef(h); got != want {
			t.Fatalf("%q: %q, want %q", h["Prefer"], got, want)
		}
	})
}

// TestURLBuilders: the one-allocation URL builders give what concatenating baseURL does.
func TestURLBuilders(t *testing.T) {
	for _, tc := range []struct {
		host      string
		tls       bool
		pathStyle bool
	}{
		{"127.0.0.1:10002", false, true},
		{"devstoreaccount1.table.example.com", true, false},
		{"localhost", true, true},
	} {
		r := httptest.NewRequest("GET", "http://"+tc.host+"/x", nil)
		c := New(Options{}).newCall(requestCtxFor(r, tc.tls))
		c.Account, c.PathStyle = "devstoreaccount1", tc.pathStyle
		for _, k := range [][2]string{{"p", "r"}, {"o'neil", "a b/ü"}, {strings.Repeat("k", 300), ""}} {
			want := c.baseURL() + "/" + entity.EntityPath("tbl", k[0], k[1])
			if got := c.entityURL("tbl", k[0], k[1]); got != want {
				t.Errorf("entityURL = %q, want %q", got, want)
			}
		}
		if got, want := c.elementMetadata("tbl"), c.baseURL()+"/$metadata#tbl/@Element"; got != want {
			t.Errorf("elementMetadata = %q, want %q", got, want)
		}
	}
}

// TestResolveAccountRawPath: the path after the account segment is sliced from the target
// exactly as "/" + rest.
func TestResolveAccountRawPath(t *testing.T) {
	s := New(Options{Accounts: []auth.Account{auth.DevAccount()}})
	for _, tc := range []struct{ target, host, rawPath, query string }{
		{"/devstoreaccount1/Tables", "127.0.0.1:10002", "/Tables", ""},
		{"/devstoreaccount1", "127.0.0.1:10002", "/", ""},
		{"/devstoreaccount1/", "[::1]:10002", "/", ""},
		{"/devstoreaccount1/t(PartitionKey='a%20b',RowKey='r')?$format=json", "localhost", "/t(PartitionKey='a%20b',RowKey='r')", "$format=json"},
		{"/Tables?comp=x", "devstoreaccount1.table.example.com", "/Tables", "comp=x"},
	} {
		r := httptest.NewRequest("GET", "http://"+tc.host+tc.target, nil)
		c := s.newCall(requestCtxFor(r, false))
		if err := s.resolveAccount(c); err != nil {
			t.Fatalf("%s %s: %v", tc.host, tc.target, err)
		}
		if c.Account != "devstoreaccount1" || c.RawPath != tc.rawPath || c.TargetQuery != tc.query {
			t.Errorf("%s %s: account %q rawPath %q query %q", tc.host, tc.target, c.Account, c.RawPath, c.TargetQuery)
		}
	}
}
