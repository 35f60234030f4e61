package blobwire

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/edge"
	"github.com/tablo/tablo/internal/partition"
)

// An error answered before a request's body was read closes the connection once the answer
// is sent (the client may still be sending a body the server will not read); a body of at
// most 8 KiB, read whole with the headers, leaves the connection open for the next request.
func TestRefusedBodyClosesConnection(t *testing.T) {
	ts := newTestServer(t)
	ts.container("conn")
	for _, c := range []struct {
		n     int
		close bool
	}{{0, false}, {8 << 10, false}, {8<<10 + 1, true}, {64 << 10, true}} {
		body := strings.Repeat("x", c.n)
		r := ts.do("PUT", "/conn/b", body, "x-ms-blob-type", "BlockBlob", "x-ms-access-tier", "Tepid")
		ts.fails(r, 400, "InvalidHeaderValue", fmt.Sprintf("bad tier, body of %d bytes", c.n))
		if r.close != c.close {
			t.Errorf("refused body of %d bytes: connection closed %v, want %v", c.n, r.close, c.close)
		}
		r = ts.do("PUT", "/conn/b", body, "x-ms-blob-type", "BlockBlob")
		if r.code != 201 || r.close {
			t.Errorf("accepted body of %d bytes: %s, connection closed %v", c.n, r, r.close)
		}
	}
	if r := ts.head("PUT", "/nosuch/b", 100<<20, "x-ms-blob-type", "BlockBlob"); r.code != 404 || !r.close {
		t.Errorf("refused body of 100 MiB, not sent: %s, connection closed %v", r, r.close)
	}
}

// Every Blob request reports to the partition layer under its container with the kind of
// operation it is: writes of a whole blob are inserts, other blob writes updates, reads
// point reads (each one entity read), listings scans (a prefix: a range of names), and
// container requests "other"; deleting the container forgets it.
func TestPartitionLayerSeesBlobRequests(t *testing.T) {
	ts := newTestServer(t)
	ts.container("partc")                                                                                         // other
	ts.putBlob("/partc/a", "x")                                                                                   // insert
	ts.ok(ts.do("PUT", "/partc/a?comp=block&blockid=QUFB", "y"), 201, "block")                                    // update
	ts.ok(ts.do("PUT", "/partc/a?comp=blocklist", "<BlockList><Latest>QUFB</Latest></BlockList>"), 201, "commit") // insert
	ts.ok(ts.do("PUT", "/partc/c", "", "x-ms-copy-source", ts.base+"/partc/a"), 202, "copy")                      // insert
	ts.ok(ts.do("PUT", "/partc/a?comp=metadata", "", "x-ms-meta-m", "1"), 200, "metadata")                        // update
	ts.ok(ts.do("GET", "/partc/a", ""), 200, "get")                                                               // point read
	ts.ok(ts.do("HEAD", "/partc/a", ""), 200, "head")                                                             // point read
	ts.ok(ts.do("GET", "/partc/a?comp=blocklist", ""), 200, "block list")                                         // point read
	ts.ok(ts.do("DELETE", "/partc/c", ""), 202, "delete")                                                         // delete
	ts.ok(ts.do("GET", "/partc?restype=container&comp=list", ""), 200, "list")                                    // table scan
	ts.ok(ts.do("GET", "/partc?restype=container&comp=list&prefix=a", ""), 200, "list a")                         // partition range
	ts.ok(ts.do("GET", "/partc?restype=container&comp=list&prefix=b", ""), 200, "list b")                         // partition range
	ts.ok(ts.do("GET", "/partc?restype=container", ""), 200, "properties")                                        // other
	ts.ok(ts.do("GET", "/?comp=list", ""), 200, "list containers")                                                // no container
	ts.container("partw")
	ts.putBlob("/partw/a", "x")

	views := map[string]partition.TableView{}
	// Rates cover complete ticks: look from the next one.
	for _, tv := range ts.parts.Snapshot(time.Now().Add(ts.parts.Options().Tick), 10).Tables {
		if tv.Name == "" {
			t.Errorf("an account-level request was counted under a container: %+v", tv)
		}
		if tv.Service == "blob" {
			views[tv.Name] = tv
		}
	}
	view, ok := views["partc"]
	if !ok {
		t.Fatalf("container not in the partition layer's snapshot: %+v", views)
	}
	want := map[string]uint64{"insert": 3, "update": 2, "point-read": 3, "delete": 1, "table-scan": 1, "partition-range": 2, "other": 2}
	for k, n := range want {
		if view.Kinds[k] != n {
			t.Errorf("requests of kind %s: %d, want %d (all: %v)", k, view.Kinds[k], n, view.Kinds)
		}
	}
	if view.Rates.ReadEntities <= 0 {
		t.Errorf("reads of partc counted no entity read: %+v", view.Rates)
	}
	if w := views["partw"]; w.Rates.ReadEntities != 0 {
		t.Errorf("writes of partw counted entities read: %+v", w.Rates)
	}
	ts.ok(ts.do("DELETE", "/partc?restype=container", ""), 202, "delete container")
	for _, tv := range ts.parts.Snapshot(time.Now(), 10).Tables {
		if tv.Name == "partc" {
			t.Errorf("deleted container still tracked: %+v", tv)
		}
	}
}

// The per-request log line names the resource: the service, a container, a blob.
func TestRequestLogNamesResource(t *testing.T) {
	ts := newTestServer(t)
	ts.container("logc")
	ts.putBlob("/logc/dir/b", "x")
	ts.ok(ts.do("GET", "/?comp=list", ""), 200, "list")
	got := map[string]string{}
	for _, m := range ts.log.Records(t) {
		if op, ok := m["operation"].(string); ok {
			got[op] = fmt.Sprint(m["resource"])
		}
	}
	for op, res := range map[string]string{"CreateContainer": "logc", "WriteBlob": "logc/dir/b", "ListContainers": "service"} {
		if got[op] != res {
			t.Errorf("%s logged resource %q, want %q (all: %v)", op, got[op], res, got)
		}
	}
}

// Request dates are judged by the server's clock (Options.Now): with a clock an hour ahead,
// a request dated by the real clock is refused, one dated by the server's accepted.
func TestServerClockJudgesRequestDates(t *testing.T) {
	ahead := func() time.Time { return time.Now().Add(time.Hour) }
	ts := newTestServerWith(t, func(o *Options) { o.Now = ahead })
	ts.fails(ts.do("GET", "/?comp=list", ""), 403, "AuthenticationFailed", "request dated by the real clock")
	ts.ok(ts.do("GET", "/?comp=list", "", "x-ms-date", ahead().UTC().Format(http.TimeFormat)), 200, "request dated by the server's clock")
}

// Service properties round-trip, their body is bounded, and the CORS rules they hold answer
// preflight requests (which carry no credentials) and mark answers to allowed origins.
func TestServicePropertiesAndCORS(t *testing.T) {
	ts := newTestServer(t)
	doc := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>http://example.com</AllowedOrigins>` +
		`<AllowedMethods>GET,PUT</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>x-ms-*</ExposedHeaders>` +
		`<AllowedHeaders>x-ms-*</AllowedHeaders></CorsRule></Cors></StorageServiceProperties>`
	ts.ok(ts.do("PUT", "/?restype=service&comp=properties", doc), 202, "set properties")
	if r := ts.ok(ts.do("GET", "/?restype=service&comp=properties", ""), 200, "get properties"); !strings.Contains(r.body, "<AllowedOrigins>http://example.com</AllowedOrigins>") {
		t.Errorf("properties: %s", r.body)
	}
	padded := doc + strings.Repeat(" ", edge.MaxPropertiesBody-len(doc))
	ts.ok(ts.do("PUT", "/?restype=service&comp=properties", padded), 202, "properties body at the limit")
	ts.fails(ts.do("PUT", "/?restype=service&comp=properties", padded+" "), 413, "RequestBodyTooLarge", "properties body past the limit")
	ts.fails(ts.do("PUT", "/?restype=service&comp=properties", padded+" ", "Transfer-Encoding", "chunked"), 413, "RequestBodyTooLarge", "chunked properties body past the limit")

	ts.container("cors")
	ts.putBlob("/cors/b", "x")
	if r := ts.anon("OPTIONS", "/cors/b", "Origin", "http://example.com", "Access-Control-Request-Method", "PUT"); r.code != 200 ||
		r.hdr("Access-Control-Allow-Origin") != "http://example.com" || r.hdr("Access-Control-Max-Age") != "60" {
		t.Errorf("preflight: %s %v", r, r.h)
	}
	ts.fails(ts.anon("OPTIONS", "/cors/b", "Origin", "http://other.example", "Access-Control-Request-Method", "PUT"), 403, "CorsPreflightFailure", "preflight from another origin")
	if r := ts.ok(ts.do("GET", "/cors/b", "", "Origin", "http://example.com"), 200, "read from an allowed origin"); r.hdr("Access-Control-Allow-Origin") != "http://example.com" {
		t.Errorf("read from an allowed origin: %v", r.h)
	}
	if r := ts.ok(ts.do("GET", "/cors/b", "", "Origin", "http://other.example"), 200, "read from another origin"); r.hdr("Access-Control-Allow-Origin") != "" {
		t.Errorf("read from another origin: %v", r.h)
	}
}

// Get Service Stats answers on the secondary endpoint only.
func TestServiceStats(t *testing.T) {
	ts := newTestServer(t)
	sec := *ts
	sec.pathAccount = devAccount + "-secondary"
	r := sec.ok(sec.do("GET", "/?restype=service&comp=stats", ""), 200, "stats on the secondary")
	if !strings.Contains(r.body, "<GeoReplication><Status>live</Status>") || r.hdr("Content-Type") != "application/xml" {
		t.Errorf("stats: %s %v", r.body, r.h)
	}
	ts.fails(ts.do("GET", "/?restype=service&comp=stats", ""), 400, "InvalidQueryParameterValue", "stats on the primary")
}
