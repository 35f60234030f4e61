package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/tablo/tablo/internal/app"
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
)

// queueEndpoint is the Queue service's URL (path style).
func (ts *testServer) queueEndpoint() string {
	return "http://" + ts.app.ServiceAddr("queue").String() + "/" + devAccount
}

func (ts *testServer) queueConnString() string {
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;QueueEndpoint=%s;",
		devAccount, devKey, ts.endpoint, ts.queueEndpoint())
}

func queueClientOptions() *azqueue.ClientOptions {
	return &azqueue.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}
}

func (ts *testServer) queueService(t testing.TB) *azqueue.ServiceClient {
	t.Helper()
	c, err := azqueue.NewServiceClientFromConnectionString(ts.queueConnString(), queueClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var queueSeq atomic.Int64

func (ts *testServer) newQueue(t testing.TB) (*azqueue.QueueClient, string) {
	t.Helper()
	name := fmt.Sprintf("q%d-%d", time.Now().UnixNano()%1e9, queueSeq.Add(1))
	qc := ts.queueService(t).NewQueueClient(name)
	if _, err := qc.Create(context.Background(), nil); err != nil {
		t.Fatalf("create queue %s: %v", name, err)
	}
	return qc, name
}

func wantQueueError(t testing.TB, err error, code queueerror.Code) {
	t.Helper()
	if !queueerror.HasCode(err, code) {
		t.Fatalf("got %v, want %s", err, code)
	}
}

func TestQueueCreateDeleteMetadata(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	svc := ts.queueService(t)
	qc := svc.NewQueueClient("meta-queue")
	md := map[string]*string{"owner": to.Ptr("go"), "Purpose": to.Ptr("tests")}
	if _, err := qc.Create(ctx, &azqueue.CreateOptions{Metadata: md}); err != nil {
		t.Fatal(err)
	}
	// Same metadata: 204, a success for Go.
	if _, err := qc.Create(ctx, &azqueue.CreateOptions{Metadata: md}); err != nil {
		t.Fatalf("create with the same metadata: %v", err)
	}
	_, err := qc.Create(ctx, &azqueue.CreateOptions{Metadata: map[string]*string{"owner": to.Ptr("other")}})
	wantQueueError(t, err, queueerror.QueueAlreadyExists)

	if _, err := qc.EnqueueMessage(ctx, "one", nil); err != nil {
		t.Fatal(err)
	}
	props, err := qc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if props.ApproximateMessagesCount == nil || *props.ApproximateMessagesCount != 1 || len(props.Metadata) != 2 {
		t.Fatalf("properties: count %v metadata %v", props.ApproximateMessagesCount, props.Metadata)
	}
	if _, err := qc.SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"k": to.Ptr("v")}}); err != nil {
		t.Fatal(err)
	}
	props, _ = qc.GetProperties(ctx, nil)
	if len(props.Metadata) != 1 {
		t.Fatalf("metadata after set: %v", props.Metadata)
	}
	if _, err := qc.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err = qc.GetProperties(ctx, nil)
	wantQueueError(t, err, queueerror.QueueNotFound)
	// Created again, the queue starts empty.
	if _, err := qc.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	peek, err := qc.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil || len(peek.Messages) != 0 {
		t.Fatalf("re-created queue: %v %v", peek.Messages, err)
	}
	_, err = svc.NewQueueClient("Bad_Name").Create(ctx, nil)
	wantQueueError(t, err, queueerror.InvalidResourceName)
	_, err = svc.NewQueueClient("ab").Create(ctx, nil)
	wantQueueError(t, err, queueerror.OutOfRangeInput)
}

func TestQueueMessageLifecycle(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	qc, _ := ts.newQueue(t)
	text := `hello <world> & "friends"`
	put, err := qc.EnqueueMessage(ctx, text, &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(-1))})
	if err != nil {
		t.Fatal(err)
	}
	if len(put.Messages) != 1 || put.Messages[0].ExpirationTime.Year() != 9999 {
		t.Fatalf("put: %+v", put.Messages)
	}
	got, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(5)), VisibilityTimeout: to.Ptr(int32(60))})
	if err != nil || len(got.Messages) != 1 {
		t.Fatal(got, err)
	}
	m := got.Messages[0]
	if *m.MessageText != text || *m.DequeueCount != 1 || *m.MessageID != *put.Messages[0].MessageID {
		t.Fatalf("got %q count %d", *m.MessageText, *m.DequeueCount)
	}
	// Invisible now.
	if again, _ := qc.DequeueMessage(ctx, nil); len(again.Messages) != 0 {
		t.Fatalf("invisible message returned: %+v", again.Messages)
	}
	upd, err := qc.UpdateMessage(ctx, *m.MessageID, *m.PopReceipt, "updated", &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(0))})
	if err != nil || upd.PopReceipt == nil || *upd.PopReceipt == *m.PopReceipt || upd.TimeNextVisible == nil {
		t.Fatal(upd, err)
	}
	// The old receipt is dead.
	_, err = qc.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil)
	wantQueueError(t, err, queueerror.MessageNotFound)
	peek, err := qc.PeekMessage(ctx, nil)
	if err != nil || len(peek.Messages) != 1 || *peek.Messages[0].MessageText != "updated" || *peek.Messages[0].DequeueCount != 1 {
		t.Fatal(peek, err)
	}
	if _, err := qc.DeleteMessage(ctx, *m.MessageID, *upd.PopReceipt, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := qc.EnqueueMessage(ctx, fmt.Sprint(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Single producer: first in, first out.
	got, _ = qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	for i, m := range got.Messages {
		if *m.MessageText != fmt.Sprint(i) {
			t.Fatalf("order: message %d is %q", i, *m.MessageText)
		}
	}
	if _, err := qc.ClearMessages(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if p, _ := qc.GetProperties(ctx, nil); *p.ApproximateMessagesCount != 0 {
		t.Fatalf("count after clear: %d", *p.ApproximateMessagesCount)
	}
	// Limits.
	_, err = qc.EnqueueMessage(ctx, strings.Repeat("x", 64<<10+1), nil)
	wantQueueError(t, err, queueerror.RequestBodyTooLarge)
	if _, err := qc.EnqueueMessage(ctx, strings.Repeat("x", 64<<10), nil); err != nil {
		t.Fatalf("64 KiB message: %v", err)
	}
	_, err = qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(33))})
	wantQueueError(t, err, queueerror.OutOfRangeQueryParameterValue)
	_, err = qc.EnqueueMessage(ctx, "x", &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(10)), VisibilityTimeout: to.Ptr(int32(10))})
	wantQueueError(t, err, queueerror.OutOfRangeQueryParameterValue)
}

func TestQueueListAndServiceProperties(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	svc := ts.queueService(t)
	for _, n := range []string{"golist-a", "golist-b", "golist-c", "other"} {
		if _, err := svc.CreateQueue(ctx, n, &azqueue.CreateOptions{Metadata: map[string]*string{"n": to.Ptr(n)}}); err != nil {
			t.Fatal(err)
		}
	}
	pager := svc.NewListQueuesPager(&azqueue.ListQueuesOptions{Prefix: to.Ptr("golist"), MaxResults: to.Ptr(int32(2)), Include: azqueue.ListQueuesInclude{Metadata: true}})
	var names []string
	pages := 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, q := range page.Queues {
			names = append(names, *q.Name)
			if *q.Metadata["n"] != *q.Name {
				t.Fatalf("metadata of %s: %v", *q.Name, q.Metadata)
			}
		}
	}
	if strings.Join(names, ",") != "golist-a,golist-b,golist-c" || pages != 2 {
		t.Fatalf("listed %v in %d pages", names, pages)
	}
	props, err := svc.GetServiceProperties(ctx, nil)
	if err != nil || props.Logging == nil {
		t.Fatal(props, err)
	}
	cors := []*azqueue.CORSRule{{AllowedOrigins: to.Ptr("https://example.com"), AllowedMethods: to.Ptr("GET,PUT"), AllowedHeaders: to.Ptr("*"), ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr(int32(60))}}
	if _, err := svc.SetProperties(ctx, &azqueue.SetPropertiesOptions{CORS: cors}); err != nil {
		t.Fatal(err)
	}
	props, _ = svc.GetServiceProperties(ctx, nil)
	if len(props.CORS) != 1 || *props.CORS[0].AllowedOrigins != "https://example.com" {
		t.Fatalf("cors: %+v", props.CORS)
	}
	// Preflight against the stored rule; the Table service's rules are its own.
	req, _ := http.NewRequest(http.MethodOptions, ts.queueEndpoint()+"/golist-a/messages", nil)
	req.Header.Set("Origin", "https://example.com")
	req.Header.Set("Access-Control-Request-Method", "PUT")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://example.com" {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	req.URL.Host = strings.TrimPrefix(strings.TrimSuffix(ts.endpoint, "/"+devAccount), "http://")
	req.URL.Path = "/" + devAccount + "/Tables"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("table preflight with only a queue CORS rule: %d", resp.StatusCode)
	}
	// Stats on the secondary.
	sec, err := azqueue.NewServiceClientWithSharedKeyCredential(strings.Replace(ts.queueEndpoint(), devAccount, devAccount+"-secondary", 1), sharedKey(t), queueClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	stats, err := sec.GetStatistics(ctx, nil)
	if err != nil || stats.GeoReplication == nil || *stats.GeoReplication.Status != "live" {
		t.Fatal(stats, err)
	}
}

func sharedKey(t testing.TB) *azqueue.SharedKeyCredential {
	cred, err := azqueue.NewSharedKeyCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

func TestQueueSASAndAnonymous(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	qc, name := ts.newQueue(t)
	if _, err := qc.EnqueueMessage(ctx, "secret", nil); err != nil {
		t.Fatal(err)
	}
	// Anonymous requests are refused.
	anon, _ := azqueue.NewQueueClientWithNoCredential(ts.queueEndpoint()+"/"+name, queueClientOptions())
	_, err := anon.PeekMessage(ctx, nil)
	wantQueueError(t, err, queueerror.AuthenticationFailed)

	cred, err := azqueue.NewSharedKeyCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	// Service SAS with read only: peek works, put does not.
	qp, err := sas.QueueSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
		Permissions: (&sas.QueuePermissions{Read: true}).String(), QueueName: name}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	sq, _ := azqueue.NewQueueClientWithNoCredential(ts.queueEndpoint()+"/"+name+"?"+qp.Encode(), queueClientOptions())
	peek, err := sq.PeekMessage(ctx, nil)
	if err != nil || len(peek.Messages) != 1 {
		t.Fatal(peek, err)
	}
	_, err = sq.EnqueueMessage(ctx, "no", nil)
	wantQueueError(t, err, queueerror.AuthorizationPermissionMismatch)
	// The SAS is for this queue only.
	other, _ := ts.newQueue(t)
	oq, _ := azqueue.NewQueueClientWithNoCredential(other.URL()+"?"+qp.Encode(), queueClientOptions())
	_, err = oq.PeekMessage(ctx, nil)
	wantQueueError(t, err, queueerror.AuthenticationFailed)

	// Stored access policy: the SAS names it with si; changing the policy changes the grant.
	if _, err := qc.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{QueueACL: []*azqueue.SignedIdentifier{{
		ID: to.Ptr("p1"), AccessPolicy: &azqueue.AccessPolicy{Expiry: to.Ptr(time.Now().Add(time.Hour).UTC().Truncate(time.Second)), Permission: to.Ptr("ap")},
	}}}); err != nil {
		t.Fatal(err)
	}
	acl, err := qc.GetAccessPolicy(ctx, nil)
	if err != nil || len(acl.SignedIdentifiers) != 1 || *acl.SignedIdentifiers[0].AccessPolicy.Permission != "ap" {
		t.Fatal(acl, err)
	}
	sp, err := sas.QueueSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, Identifier: "p1", QueueName: name}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	pq, _ := azqueue.NewQueueClientWithNoCredential(ts.queueEndpoint()+"/"+name+"?"+sp.Encode(), queueClientOptions())
	if _, err := pq.EnqueueMessage(ctx, "via policy", nil); err != nil {
		t.Fatal(err)
	}
	got, err := pq.DequeueMessage(ctx, nil)
	if err != nil || len(got.Messages) != 1 {
		t.Fatal(got, err)
	}
	if _, err := pq.DeleteMessage(ctx, *got.Messages[0].MessageID, *got.Messages[0].PopReceipt, nil); err != nil {
		t.Fatal(err)
	}
	_, err = pq.PeekMessage(ctx, nil)
	wantQueueError(t, err, queueerror.AuthorizationPermissionMismatch)

	// Account SAS with ss=q.
	as, err := sas.AccountSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
		Permissions: (&sas.AccountPermissions{Read: true, List: true}).String(), ResourceTypes: (&sas.AccountResourceTypes{Service: true, Container: true, Object: true}).String()}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	asvc, _ := azqueue.NewServiceClientWithNoCredential(ts.queueEndpoint()+"/?"+as.Encode(), queueClientOptions())
	if page, err := asvc.NewListQueuesPager(nil).NextPage(ctx); err != nil || len(page.Queues) != 2 {
		t.Fatal(page, err)
	}
	_, err = asvc.CreateQueue(ctx, "nope", nil)
	wantQueueError(t, err, queueerror.AuthorizationPermissionMismatch)
}

// Errors are XML with x-ms-error-code; a message over 64 KiB names the limit.
func TestQueueErrorWire(t *testing.T) {
	ts := startServer(t)
	_, name := ts.newQueue(t)
	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/" + name + "/messages", "<QueueMessage><MessageText>" + strings.Repeat("a", 64<<10+1) + "</MessageText></QueueMessage>", 413, "RequestBodyTooLarge"},
		{"POST", "/" + name + "/messages", "not xml", 400, "InvalidXmlDocument"},
		{"POST", "/" + name + "/messages?messagettl=0", "<QueueMessage><MessageText>x</MessageText></QueueMessage>", 400, "OutOfRangeQueryParameterValue"},
		{"POST", "/" + name + "/messages?visibilitytimeout=abc", "<QueueMessage><MessageText>x</MessageText></QueueMessage>", 400, "InvalidQueryParameterValue"},
		{"GET", "/nosuchqueue/messages", "", 404, "QueueNotFound"},
		{"DELETE", "/" + name + "/messages/00000000-0000-0000-0000-000000000000", "", 400, "MissingRequiredQueryParameter"},
		{"GET", "/" + name + "?comp=bogus", "", 400, "InvalidQueryParameterValue"},
		{"GET", "/?restype=service&comp=stats", "", 400, "InvalidQueryParameterValue"},
	}
	for _, tc := range cases {
		status, h, body := ts.doQueue(t, tc.method, tc.path, tc.body)
		if status != tc.status || h.Get("x-ms-error-code") != tc.code || !strings.Contains(body, "<Error><Code>"+tc.code+"</Code><Message>") {
			t.Errorf("%s %s: %d %s %s", tc.method, tc.path, status, h.Get("x-ms-error-code"), body)
		}
	}
	if _, _, body := ts.doQueue(t, "POST", cases[0].path, cases[0].body); !strings.Contains(body, "<MaxLimit>65536</MaxLimit>") {
		t.Errorf("no MaxLimit: %s", body)
	}
}

// doQueue sends a request signed with Shared Key in the Blob/Queue flavour.
func (ts *testServer) doQueue(t testing.TB, method, path, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.queueEndpoint()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2021-02-12")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	if body != "" {
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Content-Length", fmt.Sprint(len(body)))
	}
	rawPath, rawQuery := auth.SplitRequestURI(req.URL.RequestURI())
	acct := auth.DevAccount()
	req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKey, auth.RequestInfo{
		Method: method, RawPath: rawPath, RawQuery: rawQuery, Header: auth.HTTPHeader(req.Header),
		Account: devAccount, PathStyle: true, Service: auth.ServiceQueue,
	}, acct.Keys[0]))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// 16 consumers get and delete every message of a queue concurrently through the SDK; each
// message is handed out once.
func TestQueueConcurrentConsumers(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	qc, _ := ts.newQueue(t)
	const total = 2000
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for p := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := p; i < total; i += 8 {
				if _, err := qc.EnqueueMessage(ctx, fmt.Sprint(i), nil); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	var mu sync.Mutex
	seen := map[string]int{}
	var done atomic.Int64
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Load() < total {
				got, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(16)), VisibilityTimeout: to.Ptr(int32(600))})
				if err != nil {
					errc <- err
					return
				}
				for _, m := range got.Messages {
					mu.Lock()
					seen[*m.MessageText]++
					mu.Unlock()
					if _, err := qc.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
						errc <- err
						return
					}
					done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if len(seen) != total {
		t.Fatalf("%d distinct of %d", len(seen), total)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s seen %d times", k, n)
		}
	}
}

// Metadata names keep their case as sent (x-ms-meta-Purpose comes back as Purpose), in the
// response headers and in listings; service URLs work with and without the slash after the
// account, and host-style.
func TestQueueWireShapes(t *testing.T) {
	ts := startServer(t)
	signed := func(method, target string, hdr map[string]string) *http.Request {
		req, err := http.NewRequest(method, ts.queueEndpoint()+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-ms-version", "2024-08-04")
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		for k, v := range hdr {
			req.Header[k] = []string{v} // as written: no canonical case
		}
		rawPath, rawQuery := auth.SplitRequestURI(req.URL.RequestURI())
		acct := auth.DevAccount()
		req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKey, auth.RequestInfo{
			Method: method, RawPath: rawPath, RawQuery: rawQuery, Header: auth.HTTPHeader(req.Header),
			Account: devAccount, PathStyle: true, Service: auth.ServiceQueue,
		}, acct.Keys[0]))
		return req
	}
	rawExchange := func(req *http.Request) string {
		conn, err := net.Dial("tcp", req.URL.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		req.Close = true
		if err := req.Write(conn); err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(conn)
		return string(b)
	}
	resp := rawExchange(signed("PUT", "/casequeue", map[string]string{"x-ms-meta-Purpose": "wire", "x-ms-meta-owner": "me", "Content-Length": "0"}))
	if !strings.HasPrefix(resp, "HTTP/1.1 201") {
		t.Fatalf("create: %s", resp)
	}
	resp = rawExchange(signed("GET", "/casequeue?comp=metadata", nil))
	if !strings.Contains(resp, "\r\nx-ms-meta-Purpose: wire\r\n") || !strings.Contains(resp, "\r\nx-ms-meta-owner: me\r\n") ||
		!strings.Contains(resp, "\r\nx-ms-approximate-messages-count: 0\r\n") {
		t.Fatalf("metadata case lost:\n%s", resp)
	}
	for _, target := range []string{"?comp=list&include=metadata", "/?comp=list&include=metadata"} {
		resp = rawExchange(signed("GET", target, nil))
		if !strings.Contains(resp, "<Metadata><Purpose>wire</Purpose><owner>me</owner></Metadata>") {
			t.Fatalf("list %s:\n%s", target, resp)
		}
	}
	// Host style: {account}.queue.localhost.
	req := signed("GET", "/casequeue?comp=metadata", nil)
	req.Host = devAccount + ".queue.localhost"
	rawPath, rawQuery := auth.SplitRequestURI("/casequeue?comp=metadata")
	acct := auth.DevAccount()
	req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKey, auth.RequestInfo{
		Method: "GET", RawPath: rawPath, RawQuery: rawQuery, Header: auth.HTTPHeader(req.Header),
		Account: devAccount, Service: auth.ServiceQueue,
	}, acct.Keys[0]))
	req.URL.Path = "/casequeue"
	if resp = rawExchange(req); !strings.HasPrefix(resp, "HTTP/1.1 200") {
		t.Fatalf("host style:\n%s", resp)
	}
}

// --services chooses the listeners: a service not started has no port open, and the
// started one serves on its own.
func TestServicesChooseListeners(t *testing.T) {
	cfg, err := config.Load(freePorts("--services", "queue", "--in-memory"), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	if a.ServiceAddr("table") != nil || len(a.Endpoints()) != 1 {
		t.Fatalf("table listener started: %v", a.Endpoints())
	}
	ts := &testServer{app: a}
	qc := ts.queueService(t).NewQueueClient("only-queues")
	if _, err := qc.Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}
