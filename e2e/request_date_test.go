package e2e

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/app"
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
)

// datedRequest sends a Shared Key Lite request carrying the given x-ms-date and Date headers
// ("" leaves one out), signed over signDate as the date (what a client that signed it would
// have used).
func datedRequest(t testing.TB, endpoint, method, pathAndQuery, xmsDate, date, signDate, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, endpoint+pathAndQuery, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	signing := http.Header{"X-Ms-Date": {signDate}}
	info := auth.RequestInfo{Method: method, RawPath: req.URL.EscapedPath(), RawQuery: req.URL.RawQuery, Header: signing, Account: devAccount, PathStyle: true}
	req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKeyLite, info, auth.DevAccount().Keys[0]))
	if xmsDate != "" {
		req.Header.Set("x-ms-date", xmsDate)
	}
	if date != "" {
		req.Header.Set("Date", date)
	}
	return send(t, req)
}

func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// TestRequestDates: like Azure, a Shared Key request dated more than 15 minutes from the
// server's clock, or with a date that is not an HTTP date, is 403 AuthenticationFailed with an
// AuthenticationErrorDetail saying why, and a write so refused changes nothing.
func TestRequestDates(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	now := time.Now()
	refused := []struct{ what, date, detail string }{
		{"20 minutes old", httpDate(now.Add(-20 * time.Minute)), "too old"},
		{"a day old", httpDate(now.Add(-24 * time.Hour)), "too old"},
		{"from 2001", httpDate(time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC)), "too old"},
		{"20 minutes ahead", httpDate(now.Add(20 * time.Minute)), "future"},
		{"unparsable", "yesterday", "not a valid HTTP date"},
		{"RFC 3339", now.UTC().Format(time.RFC3339), "not a valid HTTP date"},
	}
	for _, r := range refused {
		t.Run(r.what, func(t *testing.T) {
			status, h, body := datedRequest(t, ts.endpoint, "POST", "/"+name, r.date, "", r.date, `{"PartitionKey":"p","RowKey":"`+r.what+`"}`)
			// JSON has no detail member: it is a line of the message, before RequestId.
			if status != 403 || h.Get("x-ms-error-code") != "AuthenticationFailed" || !strings.Contains(body, `\nAuthenticationErrorDetail:`) ||
				!strings.Contains(body, r.detail) || !regexp.MustCompile(`\\nRequestId:[0-9a-f-]+\\nTime:[0-9T:.-]+Z"`).MatchString(body) {
				t.Errorf("insert: %d %s", status, body)
			}
			// The XML endpoints carry Azure's AuthenticationErrorDetail element.
			status, _, body = datedRequest(t, ts.endpoint, "GET", "/"+name+"?comp=acl", r.date, "", r.date, "")
			if status != 403 || !strings.Contains(body, "<Code>AuthenticationFailed</Code>") || !strings.Contains(body, "<AuthenticationErrorDetail>") || !strings.Contains(body, r.detail) {
				t.Errorf("get ACL: %d %s", status, body)
			}
		})
	}
	if n := countFilter(t, tc, "PartitionKey eq 'p'"); n != 0 {
		t.Errorf("refused inserts wrote %d entities", n)
	}

	// Within the window, with either header, and in RFC 850 form (HTTP allows it).
	for _, d := range []string{httpDate(now.Add(-10 * time.Minute)), httpDate(now.Add(10 * time.Minute)), now.UTC().Format("Monday, 02-Jan-06 15:04:05 GMT")} {
		if status, _, body := datedRequest(t, ts.endpoint, "GET", "/Tables", d, "", d, ""); status != 200 {
			t.Errorf("x-ms-date %q: %d %s", d, status, body)
		}
		if status, _, body := datedRequest(t, ts.endpoint, "GET", "/Tables", "", d, d, ""); status != 200 {
			t.Errorf("Date %q: %d %s", d, status, body)
		}
	}
	// Date alone is checked too.
	old := httpDate(now.Add(-time.Hour))
	if status, _, _ := datedRequest(t, ts.endpoint, "GET", "/Tables", "", old, old, ""); status != 403 {
		t.Errorf("old Date header: %d", status)
	}
}

// TestSignatureCoversXMsDate: with both x-ms-date and Date sent, the signature must cover
// x-ms-date (Azure's rule); one over Date is refused, whatever the dates.
func TestSignatureCoversXMsDate(t *testing.T) {
	ts := startServer(t)
	xms, date := httpDate(time.Now()), httpDate(time.Now().Add(-time.Minute))
	if status, _, body := datedRequest(t, ts.endpoint, "GET", "/Tables", xms, date, date, ""); status != 403 {
		t.Errorf("signature over Date: %d %s", status, body)
	}
	if status, _, body := datedRequest(t, ts.endpoint, "GET", "/Tables", xms, date, xms, ""); status != 200 {
		t.Errorf("signature over x-ms-date: %d %s", status, body)
	}
	// A current Date cannot launder a stale x-ms-date.
	stale := httpDate(time.Now().Add(-time.Hour))
	if status, _, _ := datedRequest(t, ts.endpoint, "GET", "/Tables", stale, xms, stale, ""); status != 403 {
		t.Errorf("stale x-ms-date with a current Date: %d", status)
	}
}

// TestRequestDateWindowFlag: the window is configurable for drifting test clocks.
func TestRequestDateWindowFlag(t *testing.T) {
	cfg, err := config.Load(freePorts("--in-memory", "--request-date-window", "1h"), func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{app: a, endpoint: "http://" + a.Addr().String() + "/" + devAccount}
	t.Cleanup(func() { ts.stop(t) })
	d := httpDate(time.Now().Add(-20 * time.Minute))
	if status, _, body := datedRequest(t, ts.endpoint, "GET", "/Tables", d, "", d, ""); status != 200 {
		t.Errorf("20 minutes old with a 1h window: %d %s", status, body)
	}
	d = httpDate(time.Now().Add(-2 * time.Hour))
	if status, _, _ := datedRequest(t, ts.endpoint, "GET", "/Tables", d, "", d, ""); status != 403 {
		t.Errorf("2 hours old with a 1h window: %d", status)
	}
}
