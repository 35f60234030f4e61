package blobwire

import (
	"fmt"
	"strings"
	"testing"
	"time"

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
	want := map[string]uint64{"insert": 3, "update": 2, "point-read": 3, "delete": 1, "table-scan": 1, "partition-range": 1, "other": 2}
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
	for _, m := range ts.log.lines(t) {
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
