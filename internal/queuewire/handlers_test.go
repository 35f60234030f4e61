package queuewire

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/edge"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/queue"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/testlog"
)

// These tests drive the Queue service's handlers as cmd/tablo wires them (a durable Pebble
// engine, the partition layer, the development account), over real HTTP on loopback with
// requests signed with the account key, and check what a client sees: status, Azure error
// code and details, headers and body. The end-to-end tests (e2e/) cover the same surface
// through the SDKs; these let the package's own tests judge it (mutation testing,
// docs/testing.md), with every limit at its edge.

const account = "devstoreaccount1"

// wire is a Queue server on loopback over a fresh store.
type wire struct {
	t     *testing.T
	base  string // http://127.0.0.1:port
	svc   *queue.Service
	parts *partition.Layer
	log   *testlog.Buffer
}

func newWire(t *testing.T) *wire {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	svc := queue.New(db, queue.Options{ReapInterval: -1})
	parts := partition.New(partition.Options{})
	logs := &testlog.Buffer{}
	srv := New(Options{Service: svc, Accounts: []auth.Account{auth.DevAccount()}, Partitions: parts,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	hs := srv.NewHTTPServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	w := &wire{t: t, base: "http://" + ln.Addr().String(), svc: svc, parts: parts, log: logs}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-served
		svc.Close()
		db.Close()
		logs.FailOnErrors(t) // no test here expects a recovered panic or a 5xx
	})
	return w
}

// reply is what a client sees.
type reply struct {
	status int
	header http.Header
	body   string
}

// code is the error code the reply carries (header), "" for none.
func (r reply) code() string { return r.header.Get("x-ms-error-code") }

// send sends req after signing it with Shared Key (Blob/Queue flavour) for account acct,
// where the account name in the path is pathAccount.
func (w *wire) send(req *http.Request, sign bool) reply {
	w.t.Helper()
	req.Header.Set("x-ms-version", "2021-02-12")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	if sign {
		rawPath, rawQuery := auth.SplitRequestURI(req.URL.RequestURI())
		req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKey, auth.RequestInfo{
			Method: req.Method, RawPath: rawPath, RawQuery: rawQuery, Header: auth.HTTPHeader(req.Header),
			Account: account, PathStyle: true, Service: auth.ServiceQueue,
		}, auth.DevAccount().Keys[0]))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// request builds a request for target (after the account: "/q/messages?x=1"); hdr values
// are set with their names as written (x-ms-meta-Purpose keeps its case).
func (w *wire) request(method, target, body string, hdr map[string]string) *http.Request {
	w.t.Helper()
	return w.requestTo(method, w.base+"/"+account+target, body, hdr)
}

func (w *wire) requestTo(method, rawURL, body string, hdr map[string]string) *http.Request {
	w.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, rawURL, rd)
	if err != nil {
		// A path Go refuses to parse (a malformed escape) is sent as written.
		target, _ := strings.CutPrefix(rawURL, w.base)
		if req, err = http.NewRequest(method, w.base+"/", rd); err != nil {
			w.t.Fatal(err)
		}
		req.URL.Opaque, req.URL.RawQuery, _ = strings.Cut(target, "?")
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Content-Length", fmt.Sprint(len(body)))
	}
	for k, v := range hdr {
		req.Header[k] = []string{v}
	}
	return req
}

// do sends a signed request.
func (w *wire) do(method, target, body string, hdr map[string]string) reply {
	w.t.Helper()
	return w.send(w.request(method, target, body, hdr), true)
}

// ok fails the test unless r has status want.
func (w *wire) ok(r reply, want int, what string) reply {
	w.t.Helper()
	if r.status != want {
		w.t.Fatalf("%s: %d %s %s, want %d", what, r.status, r.code(), r.body, want)
	}
	return r
}

// fails checks that r is Azure's error answer status/code, in the header and the body (HEAD
// answers carry no body), with each detail element given.
func (w *wire) fails(r reply, status int, code, what string, details ...string) {
	w.t.Helper()
	if r.status != status || r.code() != code {
		w.t.Errorf("%s: %d %s %s, want %d %s", what, r.status, r.code(), r.body, status, code)
		return
	}
	if r.body != "" && !strings.Contains(r.body, "<Code>"+code+"</Code>") {
		w.t.Errorf("%s: body %s lacks the code %s", what, r.body, code)
	}
	for _, d := range details {
		if !strings.Contains(r.body, d) {
			w.t.Errorf("%s: body %s lacks %s", what, r.body, d)
		}
	}
}

func (w *wire) createQueue(name string) {
	w.t.Helper()
	w.ok(w.do("PUT", "/"+name, "", nil), http.StatusCreated, "create "+name)
}

func messageBody(text string) string {
	return `<?xml version="1.0" encoding="utf-8"?><QueueMessage><MessageText>` + text + `</MessageText></QueueMessage>`
}

var (
	popReceiptRE = regexp.MustCompile(`<PopReceipt>([^<]*)</PopReceipt>`)
	messageIDRE  = regexp.MustCompile(`<MessageId>([^<]*)</MessageId>`)
)

// put puts text and returns the message id and pop receipt.
func (w *wire) put(q, text string) (id, receipt string) {
	w.t.Helper()
	r := w.ok(w.do("POST", "/"+q+"/messages", messageBody(text), nil), http.StatusCreated, "put")
	return messageIDRE.FindStringSubmatch(r.body)[1], popReceiptRE.FindStringSubmatch(r.body)[1]
}

func TestQueueLifecycleAnswers(t *testing.T) {
	w := newWire(t)
	w.ok(w.do("PUT", "/lifecycle", "", map[string]string{"x-ms-meta-Purpose": "wire", "x-ms-meta-owner": "me"}), 201, "create")
	if r := w.ok(w.do("PUT", "/lifecycle", "", map[string]string{"x-ms-meta-purpose": "wire", "x-ms-meta-OWNER": "me"}), 204, "create again, same metadata"); r.body != "" {
		t.Errorf("204 with a body: %q", r.body)
	}
	w.fails(w.do("PUT", "/lifecycle", "", map[string]string{"x-ms-meta-purpose": "other"}), 409, "QueueAlreadyExists", "create again, other metadata")
	w.put("lifecycle", "one")
	w.put("lifecycle", "two")
	for _, m := range []string{"GET", "HEAD"} {
		r := w.ok(w.do(m, "/lifecycle?comp=metadata", "", nil), 200, m+" metadata")
		if r.header.Get("x-ms-approximate-messages-count") != "2" || r.header.Get("x-ms-meta-Purpose") != "wire" ||
			r.header.Get("x-ms-meta-owner") != "me" || r.body != "" {
			t.Errorf("%s metadata: %v %q", m, r.header, r.body)
		}
	}
	// Set Queue Metadata replaces the whole set; an empty value drops the name.
	w.ok(w.do("PUT", "/lifecycle?comp=metadata", "", map[string]string{"x-ms-meta-Next": "v2", "x-ms-meta-gone": ""}), 204, "set metadata")
	r := w.ok(w.do("GET", "/lifecycle?comp=metadata", "", nil), 200, "metadata after set")
	if r.header.Get("x-ms-meta-Next") != "v2" || r.header.Get("x-ms-meta-Purpose") != "" || r.header.Get("x-ms-meta-gone") != "" {
		t.Errorf("metadata after set: %v", r.header)
	}
	w.ok(w.do("DELETE", "/lifecycle", "", nil), 204, "delete")
	w.fails(w.do("DELETE", "/lifecycle", "", nil), 404, "QueueNotFound", "delete again")
	w.fails(w.do("GET", "/lifecycle?comp=metadata", "", nil), 404, "QueueNotFound", "metadata of a deleted queue")
	w.fails(w.do("HEAD", "/lifecycle?comp=metadata", "", nil), 404, "QueueNotFound", "HEAD metadata of a deleted queue")
	w.fails(w.do("PUT", "/lifecycle?comp=metadata", "", nil), 404, "QueueNotFound", "set metadata of a deleted queue")
	w.fails(w.do("DELETE", "/lifecycle/messages", "", nil), 404, "QueueNotFound", "clear a deleted queue")
}

// Metadata names are C# identifiers: a header named just x-ms-meta- names nothing valid; the
// total of names and values may be 8 KiB exactly.
func TestMetadataEdges(t *testing.T) {
	w := newWire(t)
	w.fails(w.do("PUT", "/metaq", "", map[string]string{"x-ms-meta-": "v"}), 400, "InvalidMetadata", "empty metadata name")
	w.fails(w.do("PUT", "/metaq", "", map[string]string{"x-ms-meta-1st": "v"}), 400, "InvalidMetadata", "name starting with a digit")
	w.fails(w.do("PUT", "/metaq", "", map[string]string{"x-ms-meta-a-b": "v"}), 400, "InvalidMetadata", "name with a hyphen")
	// A header that only looks like metadata is not metadata.
	w.ok(w.do("PUT", "/metaq", "", map[string]string{"x-ms-metaX": "v", "x-ms-met": "v"}), 201, "near-metadata headers")
	r := w.ok(w.do("GET", "/metaq?comp=metadata", "", nil), 200, "metadata")
	for k := range r.header {
		if strings.HasPrefix(strings.ToLower(k), "x-ms-meta") {
			t.Errorf("unexpected metadata header %s", k)
		}
	}
	exact := strings.Repeat("v", queue.MaxMetadataBytes-len("big"))
	w.ok(w.do("PUT", "/metaq?comp=metadata", "", map[string]string{"x-ms-meta-big": exact}), 204, "metadata of exactly 8 KiB")
	w.fails(w.do("PUT", "/metaq?comp=metadata", "", map[string]string{"x-ms-meta-big": exact + "v"}), 400, "MetadataTooLarge", "metadata one byte over 8 KiB")
	w.fails(w.do("PUT", "/metaq2", "", map[string]string{"x-ms-meta-big": exact + "v"}), 400, "MetadataTooLarge", "create with metadata one byte over 8 KiB")
}

func TestListQueuesAnswers(t *testing.T) {
	w := newWire(t)
	w.ok(w.do("GET", "?comp=list", "", nil), 200, "empty list")
	r := w.ok(w.do("GET", "/?comp=list", "", nil), 200, "empty list, slash")
	want := `<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="` + w.base + "/" + account +
		`/"><Queues /><NextMarker /></EnumerationResults>`
	if r.body != want || r.header.Get("Content-Type") != "application/xml" {
		t.Errorf("empty list:\n%s\nwant\n%s (%s)", r.body, want, r.header.Get("Content-Type"))
	}
	w.ok(w.do("PUT", "/list-a", "", map[string]string{"x-ms-meta-Purpose": "a<b"}), 201, "create a")
	w.createQueue("list-b")
	w.createQueue("list-c")
	w.createQueue("other")
	r = w.ok(w.do("GET", "?comp=list&prefix=list-&maxresults=2&include=metadata", "", nil), 200, "page 1")
	want = `<Prefix>list-</Prefix><MaxResults>2</MaxResults><Queues><Queue><Name>list-a</Name><Metadata><Purpose>a&lt;b</Purpose></Metadata></Queue>` +
		`<Queue><Name>list-b</Name><Metadata /></Queue></Queues><NextMarker>/devstoreaccount1/list-c</NextMarker></EnumerationResults>`
	if !strings.HasSuffix(r.body, want) {
		t.Errorf("page 1:\n%s\nwant suffix\n%s", r.body, want)
	}
	r = w.ok(w.do("GET", "?comp=list&prefix=list-&maxresults=2&marker="+url.QueryEscape("/devstoreaccount1/list-c"), "", nil), 200, "page 2")
	want = `<Prefix>list-</Prefix><Marker>/devstoreaccount1/list-c</Marker><MaxResults>2</MaxResults><Queues><Queue><Name>list-c</Name></Queue></Queues><NextMarker /></EnumerationResults>`
	if !strings.HasSuffix(r.body, want) {
		t.Errorf("page 2:\n%s\nwant suffix\n%s", r.body, want)
	}
	// maxresults: 1 is the least; more than 5,000 is 5,000 and echoed as sent.
	r = w.ok(w.do("GET", "?comp=list&maxresults=1", "", nil), 200, "maxresults=1")
	if strings.Count(r.body, "<Queue>") != 1 || !strings.Contains(r.body, "<NextMarker>/devstoreaccount1/list-b</NextMarker>") {
		t.Errorf("maxresults=1: %s", r.body)
	}
	r = w.ok(w.do("GET", "?comp=list&maxresults=5001", "", nil), 200, "maxresults=5001")
	if strings.Count(r.body, "<Queue>") != 4 || !strings.Contains(r.body, "<MaxResults>5001</MaxResults>") {
		t.Errorf("maxresults=5001: %s", r.body)
	}
	r = w.ok(w.do("GET", "?comp=list&include=,metadata,", "", nil), 200, "include with empty items")
	if !strings.Contains(r.body, "<Metadata />") {
		t.Errorf("include=,metadata,: %s", r.body)
	}
	w.fails(w.do("GET", "?comp=list&maxresults=0", "", nil), 400, "OutOfRangeQueryParameterValue", "maxresults=0",
		"<QueryParameterName>maxresults</QueryParameterName>", "<QueryParameterValue>0</QueryParameterValue>")
	w.fails(w.do("GET", "?comp=list&maxresults=-1", "", nil), 400, "OutOfRangeQueryParameterValue", "maxresults=-1")
	w.fails(w.do("GET", "?comp=list&maxresults=two", "", nil), 400, "InvalidQueryParameterValue", "maxresults=two",
		"<QueryParameterName>maxresults</QueryParameterName>", "<QueryParameterValue>two</QueryParameterValue>")
	w.fails(w.do("GET", "?comp=list&include=acl", "", nil), 400, "InvalidQueryParameterValue", "include=acl",
		"<QueryParameterName>include</QueryParameterName>")
	w.fails(w.do("GET", "?comp=list&marker=elsewhere", "", nil), 400, "InvalidMarker", "foreign marker")
}

func TestMessageAnswers(t *testing.T) {
	w := newWire(t)
	w.createQueue("msgs")
	before := time.Now().UTC().Truncate(time.Second)
	r := w.ok(w.do("POST", "/msgs/messages?messagettl=-1", messageBody("first &lt;1&gt;"), nil), 201, "put")
	put := regexp.MustCompile(`^<\?xml version="1.0" encoding="utf-8"\?><QueueMessagesList><QueueMessage><MessageId>[0-9a-f-]{36}</MessageId>` +
		`<InsertionTime>[^<]+ GMT</InsertionTime><ExpirationTime>Fri, 31 Dec 9999 23:59:59 GMT</ExpirationTime>` +
		`<PopReceipt>[^<]+</PopReceipt><TimeNextVisible>[^<]+ GMT</TimeNextVisible></QueueMessage></QueueMessagesList>$`)
	if !put.MatchString(r.body) {
		t.Errorf("put answer: %s", r.body)
	}
	w.put("msgs", "second")

	// Peek: the oldest, without receipt or next-visible time.
	r = w.ok(w.do("GET", "/msgs/messages?peekonly=TRUE", "", nil), 200, "peek")
	peek := regexp.MustCompile(`^<\?xml version="1.0" encoding="utf-8"\?><QueueMessagesList><QueueMessage><MessageId>[0-9a-f-]{36}</MessageId>` +
		`<InsertionTime>[^<]+</InsertionTime><ExpirationTime>[^<]+</ExpirationTime><DequeueCount>0</DequeueCount>` +
		`<MessageText>first &lt;1&gt;</MessageText></QueueMessage></QueueMessagesList>$`)
	if !peek.MatchString(r.body) {
		t.Errorf("peek answer: %s", r.body)
	}
	// Get with the defaults: one message, hidden for 30 s.
	r = w.ok(w.do("GET", "/msgs/messages", "", nil), 200, "get")
	if strings.Count(r.body, "<QueueMessage>") != 1 || !strings.Contains(r.body, "<DequeueCount>1</DequeueCount><MessageText>first &lt;1&gt;</MessageText>") {
		t.Fatalf("get answer: %s", r.body)
	}
	next := regexp.MustCompile(`<TimeNextVisible>([^<]+)</TimeNextVisible>`).FindStringSubmatch(r.body)[1]
	nv, err := time.Parse(http.TimeFormat, next)
	if err != nil {
		t.Fatal(err)
	}
	if d := nv.Sub(before); d < 30*time.Second || d > 90*time.Second {
		t.Errorf("TimeNextVisible %s is %v after the put, want about 30 s", next, d)
	}
	id, receipt := messageIDRE.FindStringSubmatch(r.body)[1], popReceiptRE.FindStringSubmatch(r.body)[1]

	// Update without a body keeps the text; with a document without MessageText too.
	for _, body := range []string{"", " \r\n", `<QueueMessage></QueueMessage>`} {
		r = w.ok(w.do("PUT", "/msgs/messages/"+id+"?popreceipt="+url.QueryEscape(receipt)+"&visibilitytimeout=0", body, nil), 204, fmt.Sprintf("update with body %q", body))
		receipt = r.header.Get("x-ms-popreceipt")
		if receipt == "" {
			t.Fatalf("update: no x-ms-popreceipt: %v", r.header)
		}
		if _, err := time.Parse(http.TimeFormat, r.header.Get("x-ms-time-next-visible")); err != nil {
			t.Errorf("x-ms-time-next-visible %q: %v", r.header.Get("x-ms-time-next-visible"), err)
		}
	}
	r = w.ok(w.do("GET", "/msgs/messages?peekonly=true&numofmessages=32", "", nil), 200, "peek after updates")
	if !strings.Contains(r.body, "<MessageText>first &lt;1&gt;</MessageText>") {
		t.Errorf("text after updates without text: %s", r.body)
	}
	r = w.ok(w.do("PUT", "/msgs/messages/"+id+"?popreceipt="+url.QueryEscape(receipt)+"&visibilitytimeout=0", messageBody("changed"), nil), 204, "update text")
	stale := receipt
	receipt = r.header.Get("x-ms-popreceipt")
	r = w.ok(w.do("GET", "/msgs/messages?peekonly=true&numofmessages=32", "", nil), 200, "peek after the text update")
	if !strings.Contains(r.body, "<MessageText>changed</MessageText>") || strings.Count(r.body, "<QueueMessage>") != 2 {
		t.Errorf("after the text update: %s", r.body)
	}

	w.fails(w.do("PUT", "/msgs/messages/"+id+"?visibilitytimeout=0", "", nil), 400, "MissingRequiredQueryParameter", "update without popreceipt",
		"<QueryParameterName>popreceipt</QueryParameterName>")
	w.fails(w.do("PUT", "/msgs/messages/"+id+"?popreceipt="+url.QueryEscape(receipt), "", nil), 400, "MissingRequiredQueryParameter", "update without visibilitytimeout",
		"<QueryParameterName>visibilitytimeout</QueryParameterName>")
	w.fails(w.do("DELETE", "/msgs/messages/"+id, "", nil), 400, "MissingRequiredQueryParameter", "delete without popreceipt",
		"<QueryParameterName>popreceipt</QueryParameterName>")
	w.fails(w.do("DELETE", "/msgs/messages/"+id+"?popreceipt="+url.QueryEscape(stale), "", nil), 404, "MessageNotFound", "delete with a stale receipt")
	w.fails(w.do("PUT", "/msgs/messages/"+id+"?popreceipt="+url.QueryEscape(stale)+"&visibilitytimeout=0", "", nil), 404, "MessageNotFound", "update with a stale receipt")
	w.ok(w.do("DELETE", "/msgs/messages/"+id+"?popreceipt="+url.QueryEscape(receipt), "", nil), 204, "delete")
	r = w.ok(w.do("GET", "/msgs/messages?numofmessages=32&visibilitytimeout=1", "", nil), 200, "get the rest")
	if strings.Count(r.body, "<QueueMessage>") != 1 || !strings.Contains(r.body, "<MessageText>second</MessageText>") {
		t.Errorf("after the delete: %s", r.body)
	}
	w.ok(w.do("DELETE", "/msgs/messages", "", nil), 204, "clear")
	r = w.ok(w.do("GET", "/msgs/messages?peekonly=true", "", nil), 200, "peek an empty queue")
	if !strings.HasSuffix(r.body, "<QueueMessagesList />") {
		t.Errorf("empty peek: %s", r.body)
	}
	w.fails(w.do("POST", "/msgs/messages", `<QueueMessage></QueueMessage>`, nil), 400, "InvalidXmlDocument", "put without MessageText")
	w.fails(w.do("POST", "/msgs/messages", ``, nil), 400, "InvalidXmlDocument", "put without a body")
	w.fails(w.do("POST", "/nosuch/messages", messageBody("x"), nil), 404, "QueueNotFound", "put to a missing queue")
	w.fails(w.do("GET", "/nosuch/messages", "", nil), 404, "QueueNotFound", "get from a missing queue")
	w.fails(w.do("GET", "/nosuch/messages?peekonly=true", "", nil), 404, "QueueNotFound", "peek a missing queue")
}

// Every numeric parameter exactly at its limits and one past them, and the text limit.
func TestMessageLimitsAtEdges(t *testing.T) {
	w := newWire(t)
	w.createQueue("edges")
	outOf := func(target, body, name, value, lo, hi string) {
		t.Helper()
		method := "GET"
		if body != "" {
			method = "POST"
		}
		w.fails(w.do(method, target, body, nil), 400, "OutOfRangeQueryParameterValue", target,
			"<QueryParameterName>"+name+"</QueryParameterName>", "<QueryParameterValue>"+value+"</QueryParameterValue>",
			"<MinimumAllowed>"+lo+"</MinimumAllowed>", "<MaximumAllowed>"+hi+"</MaximumAllowed>")
	}
	invalid := func(method, target, body, name, value string) {
		t.Helper()
		w.fails(w.do(method, target, body, nil), 400, "InvalidQueryParameterValue", target,
			"<QueryParameterName>"+name+"</QueryParameterName>", "<QueryParameterValue>"+value+"</QueryParameterValue>")
	}
	m := messageBody("m")
	// Put: visibilitytimeout 0 … min(7 days, ttl-1); messagettl ≥ 1 or -1.
	w.ok(w.do("POST", "/edges/messages?visibilitytimeout=604800&messagettl=-1", m, nil), 201, "put, visibility 7 days")
	outOf("/edges/messages?visibilitytimeout=604801&messagettl=-1", m, "visibilitytimeout", "604801", "0", "604800")
	w.ok(w.do("POST", "/edges/messages?visibilitytimeout=9&messagettl=10", m, nil), 201, "put, visibility ttl-1")
	outOf("/edges/messages?visibilitytimeout=10&messagettl=10", m, "visibilitytimeout", "10", "0", "9")
	outOf("/edges/messages?visibilitytimeout=-1", m, "visibilitytimeout", "-1", "0", "604799")
	w.ok(w.do("POST", "/edges/messages?messagettl=1", m, nil), 201, "put, ttl 1")
	outOf("/edges/messages?messagettl=0", m, "messagettl", "0", "-1", "2147483647")
	outOf("/edges/messages?messagettl=-2", m, "messagettl", "-2", "-1", "2147483647")
	invalid("POST", "/edges/messages?messagettl=1h", m, "messagettl", "1h")
	invalid("POST", "/edges/messages?visibilitytimeout=1.5", m, "visibilitytimeout", "1.5")
	w.ok(w.do("POST", "/edges/messages?visibilitytimeout=%200%20", m, nil), 201, "put, visibility with spaces")

	// Text: 64 KiB of UTF-8 exactly, then one byte more.
	exact := strings.Repeat("é", queue.MaxMessageBytes/2)
	w.ok(w.do("POST", "/edges/messages?messagettl=-1", messageBody(exact), nil), 201, "put 64 KiB")
	w.fails(w.do("POST", "/edges/messages", messageBody(exact+"x"), nil), 413, "RequestBodyTooLarge", "put 64 KiB + 1",
		"<MaxLimit>65536</MaxLimit>")
	// Escaped as XML, 64 KiB of text is a larger body, still accepted.
	lt := strings.Repeat("&lt;", queue.MaxMessageBytes)
	w.ok(w.do("POST", "/edges/messages", messageBody(lt), nil), 201, "put 64 KiB of escaped text")
	// A body past the server's limit is refused before it is read.
	w.fails(w.do("POST", "/edges/messages", messageBody(strings.Repeat("x", maxBody)), nil), 413, "RequestBodyTooLarge", "body past 1 MiB")

	// Get: numofmessages 1 … 32, visibilitytimeout 1 … 7 days.
	w.ok(w.do("GET", "/edges/messages?numofmessages=32&visibilitytimeout=604800", "", nil), 200, "get 32 for 7 days")
	w.ok(w.do("GET", "/edges/messages?numofmessages=1&visibilitytimeout=1", "", nil), 200, "get 1 for 1 s")
	for _, v := range []string{"0", "33", "-5", "1048576", "9999999999"} {
		outOf("/edges/messages?numofmessages="+v, "", "numofmessages", v, "1", "32")
		outOf("/edges/messages?peekonly=true&numofmessages="+v, "", "numofmessages", v, "1", "32")
	}
	w.ok(w.do("GET", "/edges/messages?peekonly=true&numofmessages=32", "", nil), 200, "peek 32")
	outOf("/edges/messages?visibilitytimeout=0", "", "visibilitytimeout", "0", "1", "604800")
	outOf("/edges/messages?visibilitytimeout=604801", "", "visibilitytimeout", "604801", "1", "604800")
	invalid("GET", "/edges/messages?numofmessages=x", "", "numofmessages", "x")
	invalid("GET", "/edges/messages?peekonly=true&numofmessages=x", "", "numofmessages", "x")
	invalid("GET", "/edges/messages?visibilitytimeout=x", "", "visibilitytimeout", "x")

	// Update: visibilitytimeout 0 … 7 days; the text limit applies to a new text.
	id, receipt := w.put("edges", "u")
	upd := func(vt, body string) reply {
		return w.do("PUT", "/edges/messages/"+id+"?popreceipt="+url.QueryEscape(receipt)+"&visibilitytimeout="+vt, body, nil)
	}
	w.fails(upd("604801", ""), 400, "OutOfRangeQueryParameterValue", "update for 7 days + 1 s", "<MaximumAllowed>604800</MaximumAllowed>")
	w.fails(upd("-1", ""), 400, "OutOfRangeQueryParameterValue", "update for -1 s")
	w.fails(upd("x", ""), 400, "InvalidQueryParameterValue", "update for x s")
	w.fails(upd("0", messageBody(exact+"x")), 413, "RequestBodyTooLarge", "update with 64 KiB + 1")
	w.fails(upd("0", "<QueueMessage>"), 400, "InvalidXmlDocument", "update with a broken body")
	r := w.ok(upd("604800", messageBody(exact)), 204, "update with 64 KiB for 7 days")
	receipt = r.header.Get("x-ms-popreceipt")
	w.ok(upd("0", ""), 204, "update for 0 s")
	w.fails(w.do("DELETE", "/edges/messages/"+id+"?popreceipt=not-a-receipt", "", nil), 400, "InvalidQueryParameterValue", "malformed receipt")
}

func TestRouting(t *testing.T) {
	w := newWire(t)
	w.createQueue("routes")
	for _, tc := range []struct {
		method, target string
		status         int
		code           string
	}{
		{"GET", "?comp=list", 200, ""},
		{"GET", "/?COMP=list", 200, ""},                                    // names are case-insensitive
		{"GET", "/?comp=%6Cist", 200, ""},                                  // and percent-decoded
		{"GET", "/?comp=list&comp=acl", 200, ""},                           // the first value counts
		{"GET", "/?comp=list&&prefix=r", 200, ""},                          // an empty pair is skipped
		{"GET", "/?comp=list;prefix=r", 400, "InvalidQueryParameterValue"}, // no ';' separators
		{"GET", "/?comp=list&%zz=1", 400, "InvalidQueryParameterValue"},
		{"GET", "/?comp=list&x=%zz", 400, "InvalidQueryParameterValue"},
		{"PUT", "/?comp=list", 405, "UnsupportedHttpVerb"},
		{"GET", "/?comp=bogus", 400, "InvalidQueryParameterValue"},
		{"GET", "/?restype=service", 400, "InvalidQueryParameterValue"},
		{"GET", "/?restype=service&comp=properties", 200, ""},
		{"DELETE", "/?restype=service&comp=properties", 405, "UnsupportedHttpVerb"},
		{"POST", "/?restype=service&comp=stats", 405, "UnsupportedHttpVerb"},
		{"PUT", "/?restype=account&comp=properties", 405, "UnsupportedHttpVerb"},
		{"GET", "/routes?comp=bogus", 400, "InvalidQueryParameterValue"},
		{"GET", "/routes", 405, "UnsupportedHttpVerb"},
		{"POST", "/routes", 405, "UnsupportedHttpVerb"},
		{"DELETE", "/routes?comp=metadata", 405, "UnsupportedHttpVerb"},
		{"DELETE", "/routes?comp=acl", 405, "UnsupportedHttpVerb"},
		{"GET", "/routes?comp=acl", 200, ""},
		{"HEAD", "/routes?comp=acl", 200, ""},
		{"GET", "/routes/", 405, "UnsupportedHttpVerb"}, // a trailing slash names the queue
		{"PUT", "/routes/messages", 405, "UnsupportedHttpVerb"},
		{"GET", "/routes/messages/", 200, ""},
		{"GET", "/routes/messages/some-id", 405, "UnsupportedHttpVerb"},
		{"POST", "/routes/messages/some-id", 405, "UnsupportedHttpVerb"},
		{"GET", "/routes/other", 400, "InvalidUri"},
		{"GET", "/routes/messages/id/more", 400, "InvalidUri"},
		{"GET", "/routes/messages//", 400, "InvalidUri"},
		{"GET", "/rou%zztes?comp=metadata", 400, "InvalidUri"},
		{"GET", "/r%6Futes?comp=metadata", 200, ""},
		{"PUT", "/ab", 400, "OutOfRangeInput"},
		{"PUT", "/" + strings.Repeat("a", 64), 400, "OutOfRangeInput"},
		{"PUT", "/Routes", 400, "InvalidResourceName"},
		{"PUT", "/a--b", 400, "InvalidResourceName"},
		{"GET", "/nosuch?comp=acl", 404, "QueueNotFound"},
	} {
		r := w.do(tc.method, tc.target, "", nil)
		if tc.code == "" {
			if r.status != tc.status {
				t.Errorf("%s %s: %d %s %s, want %d", tc.method, tc.target, r.status, r.code(), r.body, tc.status)
			}
			continue
		}
		w.fails(r, tc.status, tc.code, tc.method+" "+tc.target)
	}
	w.ok(w.do("PUT", "/"+strings.Repeat("a", 63), "", nil), 201, "name of 63 characters")
	w.ok(w.do("PUT", "/abc", "", nil), 201, "name of 3 characters")

	r := w.ok(w.do("GET", "?restype=account&comp=properties", "", nil), 200, "account info")
	if r.header.Get("x-ms-sku-name") != "Standard_RAGRS" || r.header.Get("x-ms-account-kind") != "StorageV2" {
		t.Errorf("account info headers: %v", r.header)
	}
	w.ok(w.do("HEAD", "/?restype=account&comp=properties", "", nil), 200, "account info, HEAD")
	r = w.send(w.requestTo("GET", w.base+"/"+account+"-secondary?restype=service&comp=stats", "", nil), true)
	if r.status != 200 || !strings.Contains(r.body, "<GeoReplication>") {
		t.Errorf("stats on the secondary: %d %s", r.status, r.body)
	}
}

// The read-only secondary answers reads and refuses every write.
func TestSecondaryRefusesWrites(t *testing.T) {
	w := newWire(t)
	w.createQueue("sec")
	id, receipt := w.put("sec", "m")
	second := func(method, target, body string) reply {
		return w.send(w.requestTo(method, w.base+"/"+account+"-secondary"+target, body, nil), true)
	}
	for _, tc := range []struct{ method, target, body string }{
		{"GET", "?comp=list", ""},
		{"GET", "?restype=service&comp=properties", ""},
		{"GET", "?restype=account&comp=properties", ""},
		{"GET", "/sec?comp=metadata", ""},
		{"HEAD", "/sec?comp=metadata", ""},
		{"GET", "/sec?comp=acl", ""},
		{"GET", "/sec/messages?peekonly=true", ""},
	} {
		if r := second(tc.method, tc.target, tc.body); r.status != 200 {
			t.Errorf("%s %s on the secondary: %d %s %s", tc.method, tc.target, r.status, r.code(), r.body)
		}
	}
	for _, tc := range []struct{ method, target, body string }{
		{"PUT", "?restype=service&comp=properties", "<StorageServiceProperties/>"},
		{"PUT", "/sec2", ""},
		{"DELETE", "/sec", ""},
		{"PUT", "/sec?comp=metadata", ""},
		{"PUT", "/sec?comp=acl", ""},
		{"POST", "/sec/messages", messageBody("x")},
		{"GET", "/sec/messages", ""},
		{"DELETE", "/sec/messages", ""},
		{"PUT", "/sec/messages/" + id + "?popreceipt=" + url.QueryEscape(receipt) + "&visibilitytimeout=0", ""},
		{"DELETE", "/sec/messages/" + id + "?popreceipt=" + url.QueryEscape(receipt), ""},
	} {
		w.fails(second(tc.method, tc.target, tc.body), 403, "InsufficientAccountPermissions", tc.method+" "+tc.target+" on the secondary")
	}
	// Nothing changed on the primary.
	r := w.ok(w.do("GET", "/sec/messages?peekonly=true", "", nil), 200, "peek")
	if !strings.Contains(r.body, "<MessageText>m</MessageText>") {
		t.Errorf("message gone after refused writes: %s", r.body)
	}
}

// Service properties: the body limit at its edge, and CORS preflight.
func TestServicePropertiesAndPreflight(t *testing.T) {
	w := newWire(t)
	doc := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>http://example.com</AllowedOrigins>` +
		`<AllowedMethods>GET,PUT</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>x-ms-*</ExposedHeaders>` +
		`<AllowedHeaders>x-ms-*</AllowedHeaders></CorsRule></Cors></StorageServiceProperties>`
	w.ok(w.do("PUT", "?restype=service&comp=properties", doc, nil), 202, "set properties")
	r := w.ok(w.do("GET", "?restype=service&comp=properties", "", nil), 200, "get properties")
	if !strings.Contains(r.body, "<AllowedOrigins>http://example.com</AllowedOrigins>") {
		t.Errorf("properties: %s", r.body)
	}
	padded := doc + strings.Repeat(" ", edge.MaxPropertiesBody-len(doc))
	w.ok(w.do("PUT", "?restype=service&comp=properties", padded, nil), 202, "properties body at the limit")
	w.fails(w.do("PUT", "?restype=service&comp=properties", padded+" ", nil), 413, "RequestBodyTooLarge", "properties body past the limit")

	pre := func(origin, method string) reply {
		req := w.request("OPTIONS", "/anyqueue/messages", "", map[string]string{"Origin": origin, "Access-Control-Request-Method": method})
		return w.send(req, false)
	}
	if r := pre("http://example.com", "PUT"); r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "http://example.com" {
		t.Errorf("preflight: %d %v %s", r.status, r.header, r.body)
	}
	if r := pre("http://other.example", "PUT"); r.status != 403 {
		t.Errorf("preflight from another origin: %d %s", r.status, r.body)
	}
}

// The ACL body limit at its edge; the stored policies work for a service SAS at once.
func TestACLAndStoredPolicy(t *testing.T) {
	w := newWire(t)
	w.createQueue("aclq")
	w.put("aclq", "m")
	r := w.ok(w.do("GET", "/aclq?comp=acl", "", nil), 200, "empty ACL")
	if !strings.HasSuffix(r.body, "<SignedIdentifiers />") {
		t.Errorf("empty ACL: %s", r.body)
	}
	acl := `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>peek</Id><AccessPolicy>` +
		`<Expiry>2099-01-01T00:00:00.0000000Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	w.ok(w.do("PUT", "/aclq?comp=acl", acl, nil), 204, "set ACL")
	r = w.ok(w.do("GET", "/aclq?comp=acl", "", nil), 200, "get ACL")
	if !strings.Contains(r.body, "<Id>peek</Id>") || !strings.Contains(r.body, "<Permission>r</Permission>") {
		t.Errorf("ACL: %s", r.body)
	}
	padded := acl + strings.Repeat(" ", 64<<10-len(acl))
	w.ok(w.do("PUT", "/aclq?comp=acl", padded, nil), 204, "ACL body of 64 KiB")
	w.fails(w.do("PUT", "/aclq?comp=acl", padded+" ", nil), 413, "RequestBodyTooLarge", "ACL body past 64 KiB", "<MaxLimit>65536</MaxLimit>")
	w.fails(w.do("PUT", "/aclq?comp=acl", "<SignedIdentifiers><SignedIdentifier><Id>x</Id><AccessPolicy><Permission>z</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>", nil),
		400, "InvalidXmlDocument", "ACL with a bad permission")
	w.fails(w.do("PUT", "/nosuch?comp=acl", acl, nil), 404, "QueueNotFound", "set ACL of a missing queue")

	withSAS := func(target, si, perms string) reply {
		s := auth.SAS{Kind: auth.ServiceSAS, Service: auth.ServiceQueue, ResourceName: "aclq", Version: "2021-02-12",
			Identifier: si, Permissions: perms}
		if si == "" {
			s.Expiry = time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")
		}
		s.Sign(account, auth.DevAccount().Keys[0])
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		return w.send(w.request("GET", target+sep+s.Query().Encode(), "", nil), false)
	}
	w.ok(withSAS("/aclq/messages?peekonly=true", "peek", ""), 200, "peek with the stored policy")
	w.fails(withSAS("/aclq/messages", "peek", ""), 403, "AuthorizationPermissionMismatch", "get with a read-only stored policy")
	w.fails(withSAS("/aclq/messages?peekonly=true", "other", ""), 403, "AuthenticationFailed", "unknown policy")
	// Direct permissions: peek needs r, get needs p.
	w.ok(withSAS("/aclq/messages?peekonly=true", "", "r"), 200, "peek with sp=r")
	w.fails(withSAS("/aclq/messages?peekonly=true", "", "aup"), 403, "AuthorizationPermissionMismatch", "peek with sp=aup")
	w.ok(withSAS("/aclq/messages", "", "p"), 200, "get with sp=p")
	w.fails(withSAS("/aclq/messages", "", "rau"), 403, "AuthorizationPermissionMismatch", "get with sp=rau")
	w.ok(withSAS("/aclq?comp=metadata", "", "r"), 200, "metadata with sp=r")
	w.fails(withSAS("/aclq?comp=metadata", "", "aup"), 403, "AuthorizationPermissionMismatch", "metadata with sp=aup")
	// Cleared, the policy no longer exists.
	w.ok(w.do("PUT", "/aclq?comp=acl", "", nil), 204, "clear ACL")
	w.fails(withSAS("/aclq/messages?peekonly=true", "peek", ""), 403, "AuthenticationFailed", "cleared policy")
}

// Every request reaches the partition layer with its kind, under its queue.
func TestPartitionLayerSeesQueueRequests(t *testing.T) {
	w := newWire(t)
	w.createQueue("partq")
	id, receipt := w.put("partq", "a")
	w.put("partq", strings.Repeat("b", 3000))
	w.ok(w.do("GET", "/partq/messages?peekonly=true", "", nil), 200, "peek")
	w.ok(w.do("GET", "/partq?comp=metadata", "", nil), 200, "metadata")
	r := w.ok(w.do("PUT", "/partq/messages/"+id+"?popreceipt="+url.QueryEscape(receipt)+"&visibilitytimeout=0", messageBody("c"), nil), 204, "update")
	w.ok(w.do("GET", "/partq/messages?numofmessages=2", "", nil), 200, "get")
	w.fails(w.do("DELETE", "/partq/messages/"+id+"?popreceipt="+url.QueryEscape(r.header.Get("x-ms-popreceipt")), "", nil), 404, "MessageNotFound", "delete with the update's receipt")
	w.ok(w.do("DELETE", "/partq/messages", "", nil), 204, "clear")
	w.ok(w.do("GET", "?comp=list", "", nil), 200, "list")
	var view *partition.TableView
	snap := w.parts.Snapshot(time.Now(), 10)
	for i, tv := range snap.Tables {
		if tv.Name == "" {
			t.Errorf("a service-level request was counted under a queue: %+v", tv)
		}
		if tv.Service == "queue" && tv.Name == "partq" {
			view = &snap.Tables[i]
		}
	}
	if view == nil {
		t.Fatalf("queue not in the partition layer's snapshot: %+v", snap.Tables)
	}
	want := map[string]uint64{"insert": 2, "point-read": 1, "update": 1, "dequeue": 1, "delete": 2, "other": 2}
	for k, n := range want {
		if view.Kinds[k] != n {
			t.Errorf("requests of kind %s: %d, want %d (all: %v)", k, view.Kinds[k], n, view.Kinds)
		}
	}
	// Deleting the queue forgets it.
	w.ok(w.do("DELETE", "/partq", "", nil), 204, "delete queue")
	for _, tv := range w.parts.Snapshot(time.Now(), 10).Tables {
		if tv.Name == "partq" {
			t.Errorf("deleted queue still tracked: %+v", tv)
		}
	}
}

// A message weighs one unit per KiB begun, at least one.
func TestMessageUnits(t *testing.T) {
	for _, tc := range []struct{ n, units int }{{0, 1}, {1, 1}, {1024, 1}, {1025, 2}, {2048, 2}, {65536, 64}} {
		if got := messageUnits(strings.Repeat("x", tc.n)); got != tc.units {
			t.Errorf("%d bytes: %d units, want %d", tc.n, got, tc.units)
		}
	}
}

// The per-request log line names the resource: the service, a queue, its messages, a message.
func TestRequestLogNamesResource(t *testing.T) {
	w := newWire(t)
	w.createQueue("logq")
	id, receipt := w.put("logq", "m")
	w.ok(w.do("GET", "?comp=list", "", nil), 200, "list")
	w.ok(w.do("DELETE", "/logq/messages/"+id+"?popreceipt="+url.QueryEscape(receipt), "", nil), 204, "delete")
	got := map[string]string{}
	for _, m := range w.log.Records(t) {
		if op, ok := m["operation"].(string); ok {
			got[op] = fmt.Sprint(m["resource"])
		}
	}
	for op, res := range map[string]string{"CreateQueue": "logq", "PutMessage": "logq/messages", "ListQueues": "service",
		"DeleteMessage": "logq/messages/" + id} {
		if got[op] != res {
			t.Errorf("%s logged resource %q, want %q (all: %v)", op, got[op], res, got)
		}
	}
}
