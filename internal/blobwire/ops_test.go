package blobwire

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
)

// Append Block: the offset and count it answers, its position and size conditions at their
// edges, and the headers it refuses.
func TestAppendBlockAnswers(t *testing.T) {
	ts := newTestServer(t)
	ts.container("app")
	ts.ok(ts.do("PUT", "/app/log", "", "x-ms-blob-type", "AppendBlob"), 201, "create")
	r := ts.ok(ts.do("PUT", "/app/log?comp=appendblock", "12345"), 201, "append")
	if r.hdr("x-ms-blob-append-offset") != "0" || r.hdr("x-ms-blob-committed-block-count") != "1" || r.hdr("Etag") == "" ||
		r.hdr("x-ms-content-crc64") != b64crc("12345") || r.hdr("x-ms-request-server-encrypted") != "true" {
		t.Errorf("append: %v", r.h)
	}
	r = ts.ok(ts.do("PUT", "/app/log?comp=appendblock", "678", "x-ms-blob-condition-appendpos", "5", "x-ms-blob-condition-maxsize", "8", "Content-MD5", b64md5("678")), 201, "append at 5, up to 8")
	if r.hdr("x-ms-blob-append-offset") != "5" || r.hdr("x-ms-blob-committed-block-count") != "2" || r.hdr("Content-Md5") != b64md5("678") {
		t.Errorf("second append: %v", r.h)
	}
	ts.fails(ts.do("PUT", "/app/log?comp=appendblock", "9", "x-ms-blob-condition-appendpos", "7"), 412, "AppendPositionConditionNotMet", "append at 7 of 8")
	ts.fails(ts.do("PUT", "/app/log?comp=appendblock", "9", "x-ms-blob-condition-maxsize", "8"), 412, "MaxBlobSizeConditionNotMet", "append past maxsize")
	ts.ok(ts.do("PUT", "/app/log?comp=appendblock", "9", "x-ms-blob-condition-appendpos", "8", "x-ms-blob-condition-maxsize", "9"), 201, "append at 8 up to 9")
	ts.ok(ts.do("PUT", "/app/empty", "", "x-ms-blob-type", "AppendBlob"), 201, "create an empty one")
	ts.ok(ts.do("PUT", "/app/empty?comp=appendblock", "", "x-ms-blob-condition-appendpos", "0", "x-ms-blob-condition-maxsize", "0", "If-Match", "*"), 201, "empty append with zero conditions")
	for _, hv := range []h{
		{"x-ms-blob-condition-appendpos", "-1"}, {"x-ms-blob-condition-appendpos", "x"},
		{"x-ms-blob-condition-maxsize", "-1"}, {"x-ms-blob-condition-maxsize", "1e3"},
		{"If-Unmodified-Since", "never"}, {"Content-MD5", "x"},
	} {
		ts.fails(ts.do("PUT", "/app/log?comp=appendblock", "z", hv...), 400, "InvalidHeaderValue", strings.Join(hv, " "))
	}
	ts.fails(ts.do("PUT", "/app/log?comp=appendblock", "z", "If-Match", `"0x1"`), 412, "ConditionNotMet", "append, If-Match")
	ts.fails(ts.do("PUT", "/app/none?comp=appendblock", "z"), 404, "BlobNotFound", "append to a missing blob")
	ts.putBlob("/app/block", "x")
	ts.fails(ts.do("PUT", "/app/block?comp=appendblock", "z"), 409, "InvalidBlobType", "append to a block blob")
	ts.fails(ts.do("PUT", "/app/log?comp=appendblock&snapshot=2026-01-01T00:00:00Z", "z"), 400, "InvalidQueryParameterValue", "append to a snapshot")
	if r := ts.ok(ts.do("GET", "/app/log", ""), 200, "read"); r.body != "123456789" || r.hdr("x-ms-blob-committed-block-count") != "3" {
		t.Errorf("append blob: %s %v", r, r.h)
	}
}

// Put Page and Get Page Ranges: page writes need both ends of a range, clear takes no body,
// sequence number conditions, and the ranges listed in offset order.
func TestPageAnswers(t *testing.T) {
	ts := newTestServer(t)
	ts.container("pgs")
	ts.ok(ts.do("PUT", "/pgs/p", "", "x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "4096", "x-ms-blob-sequence-number", "3"), 201, "create")
	page := strings.Repeat("p", 512)
	r := ts.ok(ts.do("PUT", "/pgs/p?comp=page", page, "x-ms-range", "bytes=0-511", "x-ms-page-write", "update"), 201, "put page")
	if r.hdr("x-ms-blob-sequence-number") != "3" || r.hdr("Etag") == "" || r.hdr("x-ms-content-crc64") != b64crc(page) {
		t.Errorf("put page: %v", r.h)
	}
	ts.ok(ts.do("PUT", "/pgs/p?comp=page", page+page, "Range", "bytes=1024-2047", "x-ms-page-write", "update", "x-ms-if-sequence-number-le", "3", "x-ms-if-sequence-number-lt", "4", "x-ms-if-sequence-number-eq", "3"), 201, "put pages, conditions hold")
	for _, c := range []struct {
		hv   h
		code string
	}{
		{h{"x-ms-if-sequence-number-le", "2"}, "SequenceNumberConditionNotMet"},
		{h{"x-ms-if-sequence-number-lt", "3"}, "SequenceNumberConditionNotMet"},
		{h{"x-ms-if-sequence-number-eq", "4"}, "SequenceNumberConditionNotMet"},
	} {
		ts.fails(ts.do("PUT", "/pgs/p?comp=page", page, append(h{"x-ms-range", "bytes=0-511", "x-ms-page-write", "update"}, c.hv...)...), 412, c.code, strings.Join(c.hv, " "))
	}
	for _, c := range []struct {
		hv     h
		status int
		code   string
	}{
		{h{"x-ms-range", "bytes=0-"}, 416, "InvalidPageRange"},
		{h{"x-ms-range", "bytes=-512"}, 416, "InvalidPageRange"},
		{h{}, 416, "InvalidPageRange"},
		{h{"x-ms-range", "bytes=x"}, 416, "InvalidPageRange"},
		{h{"x-ms-range", "bytes=0-511"}, 400, "MissingRequiredHeader"},
		{h{"x-ms-range", "bytes=0-511", "x-ms-page-write", "write"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-range", "bytes=0-511", "x-ms-page-write", "clear"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-range", "bytes=0-511", "x-ms-page-write", "update", "x-ms-if-sequence-number-le", "-1"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-range", "bytes=0-511", "x-ms-page-write", "update", "If-Match", `"0x1"`}, 412, "ConditionNotMet"},
		{h{"x-ms-range", "bytes=0-511", "x-ms-page-write", "update", "If-Modified-Since", "x"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-range", "bytes=0-511", "x-ms-page-write", "update", "Content-MD5", "x"}, 400, "InvalidHeaderValue"},
	} {
		ts.fails(ts.do("PUT", "/pgs/p?comp=page", page, c.hv...), c.status, c.code, strings.Join(c.hv, " "))
	}
	r = ts.ok(ts.do("PUT", "/pgs/p?comp=page", "", "x-ms-range", "bytes=1024-1535", "x-ms-page-write", "clear"), 201, "clear")
	if r.h.Get("x-ms-content-crc64") != "" || r.h.Get("Content-Md5") != "" || r.hdr("x-ms-blob-sequence-number") != "3" {
		t.Errorf("clear: %v", r.h)
	}
	pages := func(q string, hv ...string) string {
		t.Helper()
		r := ts.ok(ts.do("GET", "/pgs/p?comp=pagelist"+q, "", hv...), 200, "page ranges"+q)
		if r.hdr("x-ms-blob-content-length") != "4096" || r.hdr("Content-Type") != "application/xml" || r.hdr("Etag") == "" {
			t.Errorf("page ranges %s: %v", q, r.h)
		}
		return strings.TrimSuffix(strings.TrimPrefix(r.body, `<?xml version="1.0" encoding="utf-8"?><PageList>`), "</PageList>")
	}
	const written = "<PageRange><Start>0</Start><End>511</End></PageRange><PageRange><Start>1536</Start><End>2047</End></PageRange>"
	if got := pages(""); got != written {
		t.Errorf("page ranges: %s", got)
	}
	if got := pages("", "x-ms-range", "bytes=1024-"); got != "<PageRange><Start>1536</Start><End>2047</End></PageRange>" {
		t.Errorf("page ranges from 1024: %s", got)
	}
	if got := pages("", "Range", "bytes=0-1023"); got != "<PageRange><Start>0</Start><End>511</End></PageRange>" {
		t.Errorf("page ranges to 1023: %s", got)
	}
	// A range ends where it says: exactly a written range, and a cleared one between two.
	if got := pages("", "x-ms-range", "bytes=1536-2047"); got != "<PageRange><Start>1536</Start><End>2047</End></PageRange>" {
		t.Errorf("page ranges 1536-2047: %s", got)
	}
	if got := pages("", "x-ms-range", "bytes=512-1023"); got != "" {
		t.Errorf("page ranges 512-1023: %s", got)
	}
	ts.fails(ts.do("GET", "/pgs/p?comp=pagelist", "", "x-ms-range", "bytes=-512"), 416, "InvalidPageRange", "page ranges, suffix range")
	ts.fails(ts.do("GET", "/pgs/p?comp=pagelist", "", "x-ms-range", "bytes=9-1"), 416, "InvalidPageRange", "page ranges, bad range")
	ts.fails(ts.do("GET", "/pgs/p?comp=pagelist", "", "If-Match", `"0x1"`), 412, "ConditionNotMet", "page ranges, If-Match")
	ts.fails(ts.do("GET", "/pgs/p?comp=pagelist", "", "If-Unmodified-Since", "x"), 400, "InvalidHeaderValue", "page ranges, bad date")
	ts.fails(ts.do("GET", "/pgs/p?comp=pagelist&snapshot=x", ""), 400, "InvalidQueryParameterValue", "page ranges, bad snapshot")
	ts.fails(ts.do("GET", "/pgs/none?comp=pagelist", ""), 404, "BlobNotFound", "page ranges of a missing blob")
	ts.putBlob("/pgs/block", "x")
	ts.fails(ts.do("GET", "/pgs/block?comp=pagelist", ""), 409, "InvalidBlobType", "page ranges of a block blob")

	// Differences against a snapshot: cleared and written ranges interleaved by offset.
	snap := ts.ok(ts.do("PUT", "/pgs/p?comp=snapshot", ""), 201, "snapshot").hdr("x-ms-snapshot")
	ts.ok(ts.do("PUT", "/pgs/p?comp=page", "", "x-ms-range", "bytes=0-511", "x-ms-page-write", "clear"), 201, "clear 0")
	ts.ok(ts.do("PUT", "/pgs/p?comp=page", page, "x-ms-range", "bytes=1024-1535", "x-ms-page-write", "update"), 201, "write 1024")
	ts.ok(ts.do("PUT", "/pgs/p?comp=page", "", "x-ms-range", "bytes=1536-2047", "x-ms-page-write", "clear"), 201, "clear 1536")
	ts.ok(ts.do("PUT", "/pgs/p?comp=page", page, "x-ms-range", "bytes=3072-3583", "x-ms-page-write", "update"), 201, "write 3072")
	want := "<ClearRange><Start>0</Start><End>511</End></ClearRange><PageRange><Start>1024</Start><End>1535</End></PageRange>" +
		"<ClearRange><Start>1536</Start><End>2047</End></ClearRange><PageRange><Start>3072</Start><End>3583</End></PageRange>"
	if got := pages("&prevsnapshot=" + url.QueryEscape(snap)); got != want {
		t.Errorf("diff:\n got %s\nwant %s", got, want)
	}
	snap2 := ts.ok(ts.do("PUT", "/pgs/p?comp=snapshot", ""), 201, "second snapshot").hdr("x-ms-snapshot")
	if r := ts.ok(ts.do("GET", "/pgs/p?comp=pagelist&snapshot="+url.QueryEscape(snap2)+"&prevsnapshot="+url.QueryEscape(snap), ""), 200, "diff of snapshots"); !strings.Contains(r.body, want) {
		t.Errorf("diff of snapshots: %s", r.body)
	}
	ts.fails(ts.do("GET", "/pgs/p?comp=pagelist&snapshot="+url.QueryEscape(snap)+"&prevsnapshot="+url.QueryEscape(snap), ""), 400, "PreviousSnapshotCannotBeNewer", "prevsnapshot equal to snapshot")
	ts.fails(ts.do("GET", "/pgs/p?comp=pagelist&snapshot="+url.QueryEscape(snap)+"&prevsnapshot="+url.QueryEscape(snap2), ""), 400, "PreviousSnapshotCannotBeNewer", "prevsnapshot newer than snapshot")
	ts.fails(ts.do("GET", "/pgs/p?comp=pagelist&prevsnapshot=2020-01-01T00:00:00.0000000Z", ""), 409, "PreviousSnapshotNotFound", "missing prevsnapshot")
	ts.fails(ts.do("GET", "/pgs/p?comp=pagelist&prevsnapshot=x", ""), 400, "InvalidQueryParameterValue", "bad prevsnapshot")
}

// Set Blob Properties replaces the content properties, except when it only resizes a page
// blob or changes its sequence number; each page header is checked.
func TestSetBlobProperties(t *testing.T) {
	ts := newTestServer(t)
	ts.container("sps")
	ts.putBlob("/sps/b", "x", "x-ms-blob-content-type", "text/a", "x-ms-blob-cache-control", "no-cache")
	r := ts.ok(ts.do("PUT", "/sps/b?comp=properties", "", "x-ms-blob-content-type", "text/b"), 200, "set properties")
	if r.hdr("Etag") == "" || r.h.Get("x-ms-blob-sequence-number") != "" {
		t.Errorf("set properties: %v", r.h)
	}
	if g := ts.ok(ts.do("HEAD", "/sps/b", ""), 200, "HEAD"); g.hdr("Content-Type") != "text/b" || g.h.Get("Cache-Control") != "" {
		t.Errorf("properties not replaced: %v", g.h)
	}
	ts.fails(ts.do("PUT", "/sps/b?comp=properties", "", "x-ms-blob-content-md5", "x"), 400, "InvalidHeaderValue", "bad MD5")
	ts.fails(ts.do("PUT", "/sps/b?comp=properties", "", "If-Match", `"0x1"`), 412, "ConditionNotMet", "If-Match")
	ts.fails(ts.do("PUT", "/sps/b?comp=properties", "", "If-Unmodified-Since", "x"), 400, "InvalidHeaderValue", "bad date")
	ts.fails(ts.do("PUT", "/sps/b?comp=properties&snapshot=2026-01-01T00:00:00Z", ""), 400, "InvalidQueryParameterValue", "on a snapshot")

	ts.ok(ts.do("PUT", "/sps/p", "", "x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "1024", "x-ms-blob-content-type", "text/p"), 201, "page blob")
	seq := func(what string, want string, hv ...string) {
		t.Helper()
		r := ts.ok(ts.do("PUT", "/sps/p?comp=properties", "", hv...), 200, what)
		if r.hdr("x-ms-blob-sequence-number") != want {
			t.Errorf("%s: sequence number %q, want %s", what, r.hdr("x-ms-blob-sequence-number"), want)
		}
	}
	seq("update to 5", "5", "x-ms-sequence-number-action", "update", "x-ms-blob-sequence-number", "5")
	seq("max with 3", "5", "x-ms-sequence-number-action", "MAX", "x-ms-blob-sequence-number", "3")
	seq("max with 0", "5", "x-ms-sequence-number-action", "max", "x-ms-blob-sequence-number", "0")
	seq("increment", "6", "x-ms-sequence-number-action", "increment")
	seq("resize to 512", "6", "x-ms-blob-content-length", "512")
	seq("resize to 0", "6", "x-ms-blob-content-length", "0")
	if g := ts.ok(ts.do("HEAD", "/sps/p", ""), 200, "HEAD page"); g.hdr("Content-Type") != "text/p" || g.hdr("Content-Length") != "0" {
		t.Errorf("page blob after resize and sequence numbers: %v", g.h)
	}
	seq("update to 0 with a content type", "0", "x-ms-sequence-number-action", "update", "x-ms-blob-sequence-number", "0", "x-ms-blob-content-type", "text/q")
	if g := ts.ok(ts.do("HEAD", "/sps/p", ""), 200, "HEAD page"); g.hdr("Content-Type") != "text/q" {
		t.Errorf("content type with a sequence number: %v", g.h)
	}
	for _, c := range []struct {
		hv   h
		code string
	}{
		{h{"x-ms-blob-content-length", "-1"}, "InvalidHeaderValue"},
		{h{"x-ms-blob-content-length", "big"}, "InvalidHeaderValue"},
		{h{"x-ms-blob-sequence-number", "1"}, "MissingRequiredHeader"},
		{h{"x-ms-blob-sequence-number", "0"}, "MissingRequiredHeader"},
		{h{"x-ms-sequence-number-action", "update"}, "MissingRequiredHeader"},
		{h{"x-ms-sequence-number-action", "max"}, "MissingRequiredHeader"},
		{h{"x-ms-sequence-number-action", "increment", "x-ms-blob-sequence-number", "0"}, "InvalidHeaderValue"},
		{h{"x-ms-sequence-number-action", "decrement"}, "InvalidHeaderValue"},
		{h{"x-ms-sequence-number-action", "update", "x-ms-blob-sequence-number", "-2"}, "InvalidHeaderValue"},
	} {
		ts.fails(ts.do("PUT", "/sps/p?comp=properties", "", c.hv...), 400, c.code, strings.Join(c.hv, " "))
	}
}

// Set Blob Metadata, Set Blob Tier, Snapshot Blob and Delete Blob answer with their headers.
func TestBlobWrites(t *testing.T) {
	ts := newTestServer(t)
	ts.container("wrs")
	etag := ts.putBlob("/wrs/b", "x", "x-ms-meta-old", "1").hdr("Etag")
	r := ts.ok(ts.do("PUT", "/wrs/b?comp=metadata", "", "x-ms-meta-New", "2"), 200, "set metadata")
	if r.hdr("Etag") == etag || r.hdr("Last-Modified") == "" || r.hdr("x-ms-request-server-encrypted") != "true" {
		t.Errorf("set metadata: %v", r.h)
	}
	r = ts.ok(ts.do("GET", "/wrs/b?comp=metadata", ""), 200, "get metadata")
	if r.hdr("x-ms-meta-New") != "2" || r.h.Get("x-ms-meta-old") != "" || r.hdr("Etag") == "" || r.hdr("Last-Modified") == "" || r.body != "" {
		t.Errorf("get metadata: %v", r.h)
	}
	ts.fails(ts.do("PUT", "/wrs/b?comp=metadata", "", "If-Match", etag), 412, "ConditionNotMet", "metadata, stale If-Match")
	ts.fails(ts.do("PUT", "/wrs/b?comp=metadata", "", "If-Modified-Since", "x"), 400, "InvalidHeaderValue", "metadata, bad date")
	ts.fails(ts.do("PUT", "/wrs/b?comp=metadata&snapshot=2026-01-01T00:00:00Z", ""), 400, "InvalidQueryParameterValue", "metadata on a snapshot")

	ts.ok(ts.do("PUT", "/wrs/b?comp=tier", "", "x-ms-access-tier", "ARCHIVE"), 200, "set tier")
	if g := ts.ok(ts.do("HEAD", "/wrs/b", ""), 200, "HEAD"); g.hdr("x-ms-access-tier") != "Archive" {
		t.Errorf("tier: %q", g.hdr("x-ms-access-tier"))
	}
	ts.fails(ts.do("PUT", "/wrs/b?comp=tier", ""), 400, "MissingRequiredHeader", "tier missing")
	ts.fails(ts.do("PUT", "/wrs/b?comp=tier", "", "x-ms-access-tier", "Frozen"), 400, "InvalidHeaderValue", "unknown tier")
	ts.fails(ts.do("PUT", "/wrs/b?comp=tier", "", "x-ms-access-tier", "Hot", "x-ms-lease-id", leaseA), 412, "LeaseNotPresentWithBlobOperation", "tier with a lease id")
	ts.fails(ts.do("PUT", "/wrs/b?comp=tier&snapshot=2026-01-01T00:00:00Z", "", "x-ms-access-tier", "Hot"), 400, "InvalidQueryParameterValue", "tier of a snapshot")
	ts.fails(ts.do("PUT", "/wrs/none?comp=tier", "", "x-ms-access-tier", "Hot"), 404, "BlobNotFound", "tier of a missing blob")

	r = ts.ok(ts.do("PUT", "/wrs/b?comp=snapshot", "", "x-ms-meta-snap", "yes"), 201, "snapshot")
	snap := r.hdr("x-ms-snapshot")
	if _, err := time.Parse("2006-01-02T15:04:05.0000000Z", snap); err != nil || r.hdr("Etag") == "" || r.hdr("x-ms-request-server-encrypted") != "false" {
		t.Errorf("snapshot: %v", r.h)
	}
	if g := ts.ok(ts.do("GET", "/wrs/b?snapshot="+url.QueryEscape(snap), ""), 200, "read the snapshot"); g.hdr("x-ms-meta-snap") != "yes" || g.h.Get("x-ms-meta-New") != "" || g.hdr("x-ms-snapshot") != snap {
		t.Errorf("snapshot with metadata: %v", g.h)
	}
	r = ts.ok(ts.do("PUT", "/wrs/b?comp=snapshot", ""), 201, "snapshot keeping metadata")
	if g := ts.ok(ts.do("HEAD", "/wrs/b?snapshot="+url.QueryEscape(r.hdr("x-ms-snapshot")), ""), 200, "HEAD the snapshot"); g.hdr("x-ms-meta-New") != "2" {
		t.Errorf("snapshot without metadata: %v", g.h)
	}
	ts.fails(ts.do("PUT", "/wrs/b?comp=snapshot", "", "If-Match", `"0x1"`), 412, "ConditionNotMet", "snapshot, If-Match")
	ts.fails(ts.do("PUT", "/wrs/b?comp=snapshot", "", "If-Modified-Since", "x"), 400, "InvalidHeaderValue", "snapshot, bad date")
	ts.fails(ts.do("PUT", "/wrs/b?comp=snapshot&snapshot="+url.QueryEscape(snap), ""), 400, "InvalidQueryParameterValue", "snapshot of a snapshot")

	ts.fails(ts.do("DELETE", "/wrs/b", ""), 409, "SnapshotsPresent", "delete with snapshots")
	ts.fails(ts.do("DELETE", "/wrs/b", "", "If-Unmodified-Since", "x"), 400, "InvalidHeaderValue", "delete, bad date")
	ts.fails(ts.do("DELETE", "/wrs/b?snapshot=x", ""), 400, "InvalidQueryParameterValue", "delete, bad snapshot")
	r = ts.ok(ts.do("DELETE", "/wrs/b?snapshot="+url.QueryEscape(snap), ""), 202, "delete a snapshot")
	if r.hdr("x-ms-delete-type-permanent") != "true" {
		t.Errorf("delete: %v", r.h)
	}
	ts.ok(ts.do("DELETE", "/wrs/b", "", "x-ms-delete-snapshots", "include"), 202, "delete with snapshots")
	ts.fails(ts.do("GET", "/wrs/b", ""), 404, "BlobNotFound", "deleted")
}

// Blob leases: statuses and headers, and the lease rules of writes.
func TestBlobLease(t *testing.T) {
	ts := newTestServer(t)
	ts.container("bls")
	ts.putBlob("/bls/b", "x")
	lease := func(hv ...string) reply { return ts.do("PUT", "/bls/b?comp=lease", "", hv...) }
	ts.fails(lease("x-ms-lease-action", "acquire", "x-ms-lease-duration", "10"), 400, "InvalidHeaderValue", "acquire for 10 s")
	ts.fails(lease(), 400, "MissingRequiredHeader", "no action")
	ts.fails(lease("x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1", "If-Match", `"0x1"`), 412, "ConditionNotMet", "acquire, If-Match")
	ts.fails(lease("x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1", "If-Modified-Since", "x"), 400, "InvalidHeaderValue", "acquire, bad date")
	ts.fails(ts.do("PUT", "/bls/b?comp=lease&snapshot=2026-01-01T00:00:00Z", "", "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1"), 400, "InvalidQueryParameterValue", "lease a snapshot")
	r := ts.ok(lease("x-ms-lease-action", "acquire", "x-ms-lease-duration", "15", "x-ms-proposed-lease-id", leaseA), 201, "acquire")
	if r.hdr("x-ms-lease-id") != leaseA || r.hdr("Etag") == "" {
		t.Errorf("acquire: %v", r.h)
	}
	g := ts.ok(ts.do("HEAD", "/bls/b", ""), 200, "HEAD leased")
	if g.hdr("x-ms-lease-state") != "leased" || g.hdr("x-ms-lease-status") != "locked" || g.hdr("x-ms-lease-duration") != "fixed" {
		t.Errorf("leased blob: %v", g.h)
	}
	ts.fails(ts.do("PUT", "/bls/b", "y", "x-ms-blob-type", "BlockBlob"), 412, "LeaseIdMissing", "write without the lease id")
	ts.fails(ts.do("PUT", "/bls/b?comp=block&blockid=QUFB", "y", "x-ms-lease-id", leaseB), 412, "LeaseIdMismatchWithBlobOperation", "block with another id")
	ts.ok(ts.do("PUT", "/bls/b?comp=block&blockid=QUFB", "y", "x-ms-lease-id", leaseA), 201, "block with the lease id")
	ts.fails(ts.do("PUT", "/bls/b?comp=tier", "", "x-ms-access-tier", "Cool"), 412, "LeaseIdMissing", "tier without the lease id")
	ts.ok(ts.do("PUT", "/bls/b?comp=tier", "", "x-ms-access-tier", "Cool", "x-ms-lease-id", leaseA), 200, "tier with the lease id")
	ts.fails(ts.do("GET", "/bls/b", "", "x-ms-lease-id", leaseB), 412, "LeaseIdMismatchWithBlobOperation", "read with another id")
	ts.ok(ts.do("GET", "/bls/b", "", "x-ms-lease-id", leaseA), 200, "read with the lease id")
	r = ts.ok(lease("x-ms-lease-action", "break", "x-ms-lease-break-period", "0"), 202, "break")
	if r.hdr("x-ms-lease-time") != "0" || r.h.Get("x-ms-lease-id") != "" {
		t.Errorf("break: %v", r.h)
	}
	r = ts.ok(lease("x-ms-lease-action", "release", "x-ms-lease-id", leaseA), 200, "release")
	if r.h.Get("x-ms-lease-id") != "" || r.hdr("Etag") == "" {
		t.Errorf("release: %v", r.h)
	}
}

// Copy Blob: sources in this account, path or host style, with or without a snapshot; the
// copy's headers on the destination; sources refused; Abort Copy.
func TestCopyBlob(t *testing.T) {
	ts := newTestServer(t)
	ts.container("cps")
	ts.putBlob("/cps/src", "source", "x-ms-meta-m", "src", "x-ms-blob-content-type", "text/src")
	host := strings.TrimPrefix(strings.TrimSuffix(ts.base, "/"+devAccount), "http://")
	port := host[strings.LastIndexByte(host, ':'):]
	for _, src := range []string{
		ts.base + "/cps/src",
		"http://localhost" + port + "/" + devAccount + "/cps/src",
		"https://" + devAccount + ".blob.core.windows.net/cps/src",
		"http://" + devAccount + "-secondary.blob.localhost" + port + "/cps/src",
		"http://[::1]" + port + "/" + devAccount + "/cps/%73rc",
		"http://192.168.0.9" + port + "/" + devAccount + "/cps/src", // any IP address: path style
	} {
		r := ts.do("PUT", "/cps/dst", "", "x-ms-copy-source", src, "x-ms-meta-d", "1", "x-ms-tags", "c=1", "x-ms-access-tier", "cool")
		if r.code != 202 || r.hdr("x-ms-copy-status") != "success" || len(r.hdr("x-ms-copy-id")) != 36 || r.hdr("Etag") == "" {
			t.Errorf("copy from %s: %s %v", src, r, r.h)
			continue
		}
		g := ts.ok(ts.do("GET", "/cps/dst", ""), 200, "read the copy")
		if g.body != "source" || g.hdr("x-ms-meta-d") != "1" || g.h.Get("x-ms-meta-m") != "" || g.hdr("Content-Type") != "text/src" ||
			g.hdr("x-ms-copy-id") != r.hdr("x-ms-copy-id") || g.hdr("x-ms-copy-source") != src || g.hdr("x-ms-copy-status") != "success" ||
			g.hdr("x-ms-copy-progress") != "6/6" || g.hdr("x-ms-copy-completion-time") == "" || g.hdr("x-ms-access-tier") != "Cool" || g.hdr("x-ms-tag-count") != "1" {
			t.Errorf("copy from %s: %v", src, g.h)
		}
	}
	// Without metadata in the request the source's is kept.
	ts.ok(ts.do("PUT", "/cps/dst2", "", "x-ms-copy-source", ts.base+"/cps/src"), 202, "copy keeping metadata")
	if g := ts.ok(ts.do("HEAD", "/cps/dst2", ""), 200, "HEAD the copy"); g.hdr("x-ms-meta-m") != "src" {
		t.Errorf("copy without metadata: %v", g.h)
	}
	snap := ts.ok(ts.do("PUT", "/cps/src?comp=snapshot", ""), 201, "snapshot").hdr("x-ms-snapshot")
	ts.putBlob("/cps/src", "changed")
	ts.ok(ts.do("PUT", "/cps/dst3", "", "x-ms-copy-source", ts.base+"/cps/src?snapshot="+url.QueryEscape(snap)), 202, "copy from a snapshot")
	if g := ts.ok(ts.do("GET", "/cps/dst3", ""), 200, "read"); g.body != "source" {
		t.Errorf("copy of a snapshot: %q", g.body)
	}
	for _, c := range []struct {
		src    string
		hv     h
		status int
		code   string
	}{
		{"/cps/src", nil, 400, "InvalidHeaderValue"},
		{"http://[::1", nil, 400, "InvalidHeaderValue"},
		{"http://127.0.0.1" + port + "/otheraccount/cps/src", nil, 404, "CannotVerifyCopySource"},
		{"https://otheraccount.blob.core.windows.net/cps/src", nil, 404, "CannotVerifyCopySource"},
		{"http://127.0.0.1" + port + "/" + devAccount + "/cps", nil, 404, "CannotVerifyCopySource"},
		{ts.base + "/cps/src?snapshot=x", nil, 400, "InvalidQueryParameterValue"},
		{ts.base + "/cps/src", h{"x-ms-tags", "=1"}, 400, "EmptyTagName"},
		{ts.base + "/cps/src", h{"x-ms-access-tier", "x"}, 400, "InvalidHeaderValue"},
		{ts.base + "/cps/src", h{"If-Modified-Since", "x"}, 400, "InvalidHeaderValue"},
		{ts.base + "/cps/src", h{"x-ms-source-if-modified-since", "x"}, 400, "InvalidHeaderValue"},
		{ts.base + "/cps/src", h{"x-ms-source-if-match", `"0x1"`}, 412, "SourceConditionNotMet"},
		{ts.base + "/cps/src", h{"If-None-Match", "*"}, 409, "BlobAlreadyExists"},
		{ts.base + "/cps/none", nil, 404, "CannotVerifyCopySource"},
	} {
		ts.fails(ts.do("PUT", "/cps/dst", "", append(h{"x-ms-copy-source", c.src}, c.hv...)...), c.status, c.code, "copy from "+c.src+" "+strings.Join(c.hv, " "))
	}
	ts.fails(ts.do("PUT", "/cps/dst?snapshot="+url.QueryEscape(snap), "", "x-ms-copy-source", ts.base+"/cps/src"), 400, "InvalidQueryParameterValue", "copy onto a snapshot")
	ts.fails(ts.do("PUT", "/cps/dst?comp=copy&copyid=x", ""), 400, "InvalidHeaderValue", "abort without the action")
	ts.fails(ts.do("PUT", "/cps/dst?comp=copy&copyid=x", "", "x-ms-copy-action", "stop"), 400, "InvalidHeaderValue", "abort, another action")
	ts.fails(ts.do("PUT", "/cps/dst?comp=copy&copyid=x", "", "x-ms-copy-action", "ABORT"), 409, "NoPendingCopyOperation", "abort a finished copy")
	ts.fails(ts.do("PUT", "/cps/none?comp=copy&copyid=x", "", "x-ms-copy-action", "abort"), 404, "BlobNotFound", "abort on a missing blob")
	ts.fails(ts.do("PUT", "/cps/dst?comp=copy&copyid=x&snapshot="+url.QueryEscape(snap), "", "x-ms-copy-action", "abort"), 400, "InvalidQueryParameterValue", "abort on a snapshot")
}

// blobSAS is a blob service SAS for resource ("container" or "container/blob") signed with
// the development key.
func blobSAS(resource, sr, perms string, edit func(*auth.SAS)) string {
	s := auth.SAS{Kind: auth.ServiceSAS, Service: auth.ServiceBlob, Version: "2021-12-02", Permissions: perms, Resource: sr,
		ResourceName: resource, Expiry: time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")}
	if edit != nil {
		edit(&s)
	}
	s.Sign(devAccount, auth.DevAccount().Keys[0])
	return s.Query().Encode()
}

// Anonymous requests: reads of blobs in a public container, listing and properties only when
// the whole container is public; anything else is 404 ResourceNotFound. A SAS names its
// resource and its permissions, and its response header overrides apply to Get Blob.
func TestAnonymousAndSAS(t *testing.T) {
	ts := newTestServer(t)
	ts.container("pubc", "x-ms-blob-public-access", "container")
	ts.container("pubb", "x-ms-blob-public-access", "blob")
	ts.container("priv")
	for _, c := range []string{"pubc", "pubb", "priv"} {
		ts.putBlob("/"+c+"/b", "data", "x-ms-blob-content-type", "text/plain")
	}
	for _, c := range []struct {
		method, target string
		want           int
	}{
		{"GET", "/pubc/b", 200},
		{"HEAD", "/pubb/b", 200},
		{"GET", "/pubb/b", 200},
		{"GET", "/pubc?restype=container&comp=list", 200},
		{"GET", "/pubc?restype=container", 200},
		{"GET", "/pubb?restype=container&comp=list", 404},
		{"GET", "/pubb?restype=container", 404},
		{"GET", "/priv/b", 404},
		{"GET", "/priv?restype=container", 404},
		{"GET", "/pubc/b?comp=metadata", 200},
		{"GET", "/pubc?restype=container&comp=acl", 404},
		{"PUT", "/pubc/b?comp=metadata", 404},
		{"DELETE", "/pubc/b", 404},
		{"GET", "/none/b", 404},
		{"GET", "/?comp=list", 404},
	} {
		r := ts.anon(c.method, c.target)
		if r.code != c.want || (c.want == 404 && r.errCode() != "ResourceNotFound") {
			t.Errorf("anonymous %s %s: %s, want %d", c.method, c.target, r, c.want)
		}
	}

	read := blobSAS("priv/b", "b", "r", func(s *auth.SAS) {
		s.CacheControl, s.ContentDisposition, s.ContentEncoding, s.ContentLanguage, s.ContentType = "max-age=1", "attachment", "gzip", "fr", "text/x-sas"
	})
	r := ts.anon("GET", "/priv/b?"+read)
	if r.code != 200 || r.body != "data" {
		t.Fatalf("SAS read: %s", r)
	}
	for k, v := range map[string]string{"Cache-Control": "max-age=1", "Content-Disposition": "attachment", "Content-Encoding": "gzip", "Content-Language": "fr", "Content-Type": "text/x-sas"} {
		if r.hdr(k) != v {
			t.Errorf("SAS override %s = %q, want %q", k, r.hdr(k), v)
		}
	}
	// Without a SAS the same query parameters override nothing.
	if r := ts.do("GET", "/priv/b?rsct=text/x-sas", ""); r.code != 200 || r.hdr("Content-Type") != "text/plain" {
		t.Errorf("rsct without a SAS: %s %v", r, r.h)
	}
	ts.fails(ts.anon("PUT", "/priv/b?comp=metadata&"+read), 403, "AuthorizationPermissionMismatch", "SAS without w")
	ts.fails(ts.anon("GET", "/priv/other?"+read), 403, "AuthenticationFailed", "blob SAS on another blob")
	cont := blobSAS("priv", "c", "rl", nil)
	ts.ok(ts.anon("GET", "/priv/b?"+cont), 200, "container SAS on a blob")
	ts.ok(ts.anon("GET", "/priv?restype=container&comp=list&"+cont), 200, "container SAS listing")
	// A stored access policy names the permissions.
	acl := `<SignedIdentifiers><SignedIdentifier><Id>pol</Id><AccessPolicy><Expiry>2099-01-01T00:00:00Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	ts.ok(ts.do("PUT", "/priv?restype=container&comp=acl", acl), 200, "set ACL")
	pol := blobSAS("priv/b", "b", "", func(s *auth.SAS) { s.Identifier, s.Expiry = "pol", "" })
	ts.ok(ts.anon("GET", "/priv/b?"+pol), 200, "SAS with a stored policy")
	other := blobSAS("priv/b", "b", "", func(s *auth.SAS) { s.Identifier, s.Expiry = "nope", "" })
	ts.fails(ts.anon("GET", "/priv/b?"+other), 403, "AuthenticationFailed", "SAS naming a missing policy")
	missing := blobSAS("gone/b", "b", "", func(s *auth.SAS) { s.Identifier, s.Expiry = "pol", "" })
	ts.fails(ts.anon("GET", "/gone/b?"+missing), 403, "AuthenticationFailed", "SAS policy of a missing container")
}

// Set and Get Blob Tags: the body (bounded at 64 KiB, checked against its MD5), the
// x-ms-blob-if-* conditions Get/Set Blob Tags take instead of the plain ones, and Find Blobs.
func TestBlobTags(t *testing.T) {
	ts := newTestServer(t)
	ts.container("tgs")
	etag := ts.putBlob("/tgs/b", "x").hdr("Etag")
	set := `<Tags><TagSet><Tag><Key>b</Key><Value>2</Value></Tag><Tag><Key>a</Key><Value>1 + 2</Value></Tag></TagSet></Tags>`
	r := ts.ok(ts.do("PUT", "/tgs/b?comp=tags", set, "Content-MD5", b64md5(set)), 204, "set tags")
	if r.body != "" {
		t.Errorf("set tags: body %q", r.body)
	}
	r = ts.ok(ts.do("GET", "/tgs/b?comp=tags", ""), 200, "get tags")
	if r.body != `<?xml version="1.0" encoding="utf-8"?><Tags><TagSet><Tag><Key>a</Key><Value>1 + 2</Value></Tag><Tag><Key>b</Key><Value>2</Value></Tag></TagSet></Tags>` || r.hdr("Content-Type") != "application/xml" {
		t.Errorf("get tags: %s %v", r.body, r.h)
	}
	// Tags do not change the ETag.
	if g := ts.ok(ts.do("HEAD", "/tgs/b", ""), 200, "HEAD"); g.hdr("Etag") != etag || g.hdr("x-ms-tag-count") != "2" {
		t.Errorf("after tags: %v", g.h)
	}
	for _, c := range []struct {
		method string
		hv     h
		status int
		code   string
	}{
		{"GET", h{"x-ms-blob-if-match", `"0x1"`}, 412, "ConditionNotMet"},
		{"GET", h{"x-ms-blob-if-match", etag, "If-Match", `"0x1"`}, 200, ""},
		{"GET", h{"If-Match", `"0x1"`}, 412, "ConditionNotMet"},
		{"GET", h{"x-ms-blob-if-none-match", etag}, 304, "ConditionNotMet"},
		{"GET", h{"x-ms-blob-if-modified-since", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}, 304, "ConditionNotMet"},
		{"GET", h{"x-ms-blob-if-unmodified-since", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)}, 412, "ConditionNotMet"},
		{"GET", h{"x-ms-blob-if-unmodified-since", "x"}, 400, "InvalidHeaderValue"},
		{"GET", h{"If-Unmodified-Since", "x"}, 400, "InvalidHeaderValue"},
		{"GET", h{"x-ms-if-tags", `"a"='1 + 2'`}, 200, ""},
		{"GET", h{"x-ms-if-tags", `"b"='3'`}, 412, "ConditionNotMet"},
		{"GET", h{"x-ms-lease-id", leaseA}, 412, "LeaseNotPresentWithBlobOperation"},
		{"PUT", h{"x-ms-blob-if-match", `"0x1"`}, 412, "ConditionNotMet"},
		{"PUT", h{"x-ms-blob-if-match", etag, "x-ms-if-tags", `"b"='2'`}, 204, ""},
		{"PUT", h{"Content-MD5", b64md5("x")}, 400, "Md5Mismatch"},
		{"PUT", h{"Content-MD5", "x"}, 400, "InvalidHeaderValue"},
	} {
		r := ts.do(c.method, "/tgs/b?comp=tags", map[string]string{"GET": "", "PUT": set}[c.method], c.hv...)
		if r.code != c.status || r.errCode() != c.code {
			t.Errorf("%s tags %q: %s, want %d %s", c.method, c.hv, r, c.status, c.code)
		}
	}
	ts.fails(ts.do("PUT", "/tgs/b?comp=tags", "<Tags>"), 400, "InvalidXmlDocument", "bad tags body")
	ts.fails(ts.do("PUT", "/tgs/b?comp=tags", "<Tags><TagSet><Tag><Key>a</Key></Tag><Tag><Key>a</Key></Tag></TagSet></Tags>"), 400, "DuplicateTagNames", "duplicate tags")
	ts.fails(ts.do("PUT", "/tgs/b?comp=tags&snapshot=x", set), 400, "InvalidQueryParameterValue", "tags, bad snapshot")
	ts.fails(ts.do("GET", "/tgs/b?comp=tags&snapshot=x", ""), 400, "InvalidQueryParameterValue", "get tags, bad snapshot")
	ts.fails(ts.do("GET", "/tgs/none?comp=tags", ""), 404, "BlobNotFound", "tags of a missing blob")
	atLimit := set[:len(set)-len("</Tags>")] + strings.Repeat(" ", 64<<10-len(set)) + "</Tags>"
	ts.ok(ts.do("PUT", "/tgs/b?comp=tags", atLimit), 204, "tags body of 64 KiB")
	ts.fails(ts.do("PUT", "/tgs/b?comp=tags", atLimit+" "), 413, "RequestBodyTooLarge", "tags body of 64 KiB + 1")

	// Find Blobs by Tags, in the account and in one container.
	ts.container("tgs2")
	ts.putBlob("/tgs2/c", "x", "x-ms-tags", "b=2")
	r = ts.ok(ts.do("GET", "/?comp=blobs&where="+url.QueryEscape(`"b"='2'`), ""), 200, "find in the account")
	if !strings.HasPrefix(r.body, `<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="`+ts.base+`/"><Where>&#34;b&#34;=&#39;2&#39;</Where><Blobs><Blob><Name>b</Name><ContainerName>tgs</ContainerName><Tags><TagSet>`) ||
		!strings.Contains(r.body, `<Blob><Name>c</Name><ContainerName>tgs2</ContainerName><Tags><TagSet><Tag><Key>b</Key><Value>2</Value></Tag></TagSet></Tags></Blob></Blobs><NextMarker /></EnumerationResults>`) {
		t.Errorf("find in the account: %s", r.body)
	}
	r = ts.ok(ts.do("GET", "/tgs2?restype=container&comp=blobs&maxresults=1&where="+url.QueryEscape(`"b"='2'`), ""), 200, "find in a container")
	if !strings.Contains(r.body, `" ContainerName="tgs2"><Where>&#34;b&#34;=&#39;2&#39;</Where><MaxResults>1</MaxResults><Blobs><Blob><Name>c</Name>`) {
		t.Errorf("find in a container: %s", r.body)
	}
	ts.fails(ts.do("GET", "/?comp=blobs&where="+url.QueryEscape(`"b"=`), ""), 400, "InvalidQueryParameterValue", "find, bad expression")
	ts.fails(ts.do("GET", "/?comp=blobs&maxresults=0&where="+url.QueryEscape(`"b"='2'`), ""), 400, "OutOfRangeQueryParameterValue", "find, maxresults 0")
	r = ts.ok(ts.do("GET", "/?comp=blobs&maxresults=1&where="+url.QueryEscape(`"b"='2'`), ""), 200, "find, first page")
	if !strings.Contains(r.body, "<NextMarker>") || strings.Contains(r.body, "<NextMarker />") {
		t.Errorf("find, first page: %s", r.body)
	}
}
