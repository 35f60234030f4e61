package e2e

import (
	"bufio"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
)

// TestHeaderFramingRefused: the Table endpoint answers 400 and closes the connection for
// header framing RFC 9112 forbids (whitespace before the colon or inside a name, obsolete
// line folding), before any operation runs: a correctly signed insert so framed writes
// nothing. No client library can send such a request, hence raw bytes.
func TestHeaderFramingRefused(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	u, _ := url.Parse(ts.endpoint)
	body := `{"PartitionKey":"p","RowKey":"r"}`
	path := u.Path + "/" + name
	// A correctly signed insert; extra is spliced into its header block.
	insert := func(extra string) string {
		h := http.Header{}
		h.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		info := auth.RequestInfo{Method: "POST", RawPath: path, Header: h, Account: devAccount, PathStyle: true}
		return "POST " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nx-ms-version: 2019-02-02\r\nx-ms-date: " + h.Get("x-ms-date") +
			"\r\nAuthorization: " + auth.SignSharedKey(auth.SchemeSharedKeyLite, info, auth.DevAccount().Keys[0]) +
			"\r\nContent-Type: application/json\r\n" + extra + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	for what, extra := range map[string]string{
		"space before colon": "Accept : application/json\r\n",
		"space inside name":  "X Ms-Foo: 1\r\n",
		"obs-fold":           "Accept: application/json;\r\n odata=nometadata\r\n",
		"obs-fold with tab":  "Prefer: return-no-content\r\n\tx\r\n",
	} {
		status, closed := rawRequest(t, u.Host, insert(extra))
		if status != 400 || !closed {
			t.Errorf("%s: %d (closed %v), want 400 and the connection closed", what, status, closed)
		}
	}
	if n := countFilter(t, tc, "PartitionKey eq 'p'"); n != 0 {
		t.Fatalf("refused requests wrote %d entities", n)
	}
	if status, _ := rawRequest(t, u.Host, insert("")); status != 201 {
		t.Fatalf("well-framed insert: %d", status)
	}
}

// rawRequest writes raw to a new connection and returns the answer's status and whether the
// server closes the connection after it.
func rawRequest(t *testing.T, addr, raw string) (int, bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	resp.Body.Close()
	closed := resp.Close
	if !closed {
		// No Connection: close header; see whether the server closes anyway.
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, err := r.ReadByte()
		closed = err != nil && !isTimeout(err)
	}
	return resp.StatusCode, closed
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
