package blobwire

import (
	"crypto/md5"
	"encoding/base64"
	"hash/crc64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/blob"
)

func b64md5(s string) string {
	sum := md5.Sum([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

func b64crc(s string) string {
	return base64.StdEncoding.EncodeToString(blob.CRC64Bytes(crc64.Checksum([]byte(s), blob.CRC64Table)))
}

// Put Blob's answer and what it stores: the body's MD5, the CRC-64 echoed when sent, the
// content properties from x-ms-blob-* (Content-Type from the request only for a block
// blob), metadata as sent, tier and tags; and each header it refuses.
func TestPutBlobAnswers(t *testing.T) {
	ts := newTestServer(t)
	ts.container("put")
	r := ts.putBlob("/put/a", "hello", "Content-Type", "text/x-request", "x-ms-meta-Name", "v", "x-ms-blob-cache-control", "no-cache",
		"x-ms-blob-content-encoding", "identity", "x-ms-blob-content-language", "en", "x-ms-blob-content-disposition", "inline",
		"x-ms-content-crc64", b64crc("hello"), "x-ms-access-tier", "cool", "x-ms-tags", "k=v")
	if r.hdr("Content-Md5") != b64md5("hello") || r.hdr("x-ms-content-crc64") != b64crc("hello") || r.hdr("Etag") == "" ||
		r.hdr("Last-Modified") == "" || r.hdr("x-ms-request-server-encrypted") != "true" {
		t.Errorf("put: %v", r.h)
	}
	g := ts.ok(ts.do("HEAD", "/put/a", ""), 200, "HEAD")
	for k, v := range map[string]string{
		"Content-Type": "text/x-request", "x-ms-meta-Name": "v", "Cache-Control": "no-cache", "Content-Encoding": "identity",
		"Content-Language": "en", "Content-Disposition": "inline", "x-ms-access-tier": "Cool", "x-ms-tag-count": "1",
		"Content-Md5": b64md5("hello"), "Content-Length": "5", "Etag": r.hdr("Etag"), "Last-Modified": r.hdr("Last-Modified"),
		"x-ms-blob-type": "BlockBlob", "Accept-Ranges": "bytes", "x-ms-server-encrypted": "true",
	} {
		if got := g.h.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("HEAD: %s = %q, want %q", k, got, v)
		}
	}
	if g.body != "" || g.hdr("x-ms-access-tier-inferred") != "" {
		t.Errorf("HEAD: body %q, tier inferred %q", g.body, g.hdr("x-ms-access-tier-inferred"))
	}
	// x-ms-blob-content-type wins over Content-Type; without a CRC-64 none is echoed.
	r = ts.putBlob("/put/b", "", "Content-Type", "text/x-request", "x-ms-blob-content-type", "text/x-blob", "x-ms-blob-content-md5", b64md5("other"))
	if r.hdr("Content-Md5") != b64md5("other") || r.h.Get("x-ms-content-crc64") != "" {
		t.Errorf("put with x-ms-blob-content-md5: %v", r.h)
	}
	g = ts.ok(ts.do("GET", "/put/b", ""), 200, "get b")
	if g.hdr("Content-Type") != "text/x-blob" || g.hdr("Content-Md5") != b64md5("other") || g.body != "" ||
		g.hdr("x-ms-access-tier") != "Hot" || g.hdr("x-ms-access-tier-inferred") != "true" || g.h.Get("x-ms-tag-count") != "" {
		t.Errorf("get b: %v", g.h)
	}
	// An append blob takes no Content-Type from the request, and answers no Content-MD5.
	r = ts.ok(ts.do("PUT", "/put/ap", "", "x-ms-blob-type", "AppendBlob", "Content-Type", "text/x-request"), 201, "append blob")
	if r.h.Get("Content-Md5") != "" {
		t.Errorf("append blob: Content-MD5 %q", r.hdr("Content-Md5"))
	}
	if g := ts.ok(ts.do("HEAD", "/put/ap", ""), 200, "HEAD append"); g.hdr("Content-Type") == "text/x-request" || g.hdr("x-ms-blob-committed-block-count") != "0" || g.h.Get("x-ms-access-tier") != "" {
		t.Errorf("append blob: %v", g.h)
	}
	for _, c := range []struct {
		hv     h
		status int
		code   string
	}{
		{h{}, 400, "MissingRequiredHeader"},
		{h{"x-ms-blob-type", "Block"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-blob-type", "BlockBlob", "x-ms-blob-content-md5", "AAAA"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-blob-type", "BlockBlob", "Content-MD5", "nope"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-blob-type", "BlockBlob", "x-ms-content-crc64", b64md5("x")}, 400, "InvalidHeaderValue"},
		{h{"x-ms-blob-type", "BlockBlob", "Content-MD5", b64md5("other")}, 400, "Md5Mismatch"},
		{h{"x-ms-blob-type", "BlockBlob", "x-ms-access-tier", "Warm"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-blob-type", "BlockBlob", "x-ms-tags", "a=%zz"}, 400, "InvalidTag"},
		{h{"x-ms-blob-type", "BlockBlob", "If-Unmodified-Since", "then"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-blob-type", "BlockBlob", "If-Modified-Since", "then"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-blob-type", "BlockBlob", "If-None-Match", "*"}, 409, "BlobAlreadyExists"},
		{h{"x-ms-blob-type", "BlockBlob", "If-Match", `"0x1"`}, 412, "ConditionNotMet"},
		{h{"x-ms-blob-type", "BlockBlob", "x-ms-if-tags", `"k"=`}, 400, "InvalidHeaderValue"},
		{h{"x-ms-blob-type", "BlockBlob", "x-ms-if-tags", `"k"='x'`}, 412, "ConditionNotMet"},
		{h{"x-ms-blob-type", "BlockBlob", "x-ms-lease-id", leaseA}, 412, "LeaseNotPresentWithBlobOperation"},
		{h{"x-ms-blob-type", "PageBlob"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "512", "x-ms-blob-sequence-number", "-1"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "512", "x-ms-blob-sequence-number", "x"}, 400, "InvalidHeaderValue"},
	} {
		ts.fails(ts.do("PUT", "/put/a", "hello", c.hv...), c.status, c.code, strings.Join(c.hv, " "))
	}
	ts.fails(ts.do("PUT", "/put/a?snapshot=2026-01-01T00:00:00.0000000Z", "x", "x-ms-blob-type", "BlockBlob"), 400, "InvalidQueryParameterValue", "put to a snapshot")
	ts.fails(ts.do("PUT", "/put/a?snapshot=yesterday", "x", "x-ms-blob-type", "BlockBlob"), 400, "InvalidQueryParameterValue", "put, bad snapshot")
	ts.fails(ts.do("PUT", "/put/a", "hello", "x-ms-blob-type", "BlockBlob", "x-ms-meta-a-b", "1"), 400, "InvalidMetadata", "bad metadata name")
	ts.ok(ts.do("PUT", "/put/a", "hello", "x-ms-blob-type", "BlockBlob", "x-ms-if-tags", `"k"='v'`), 201, "x-ms-if-tags holds")
	// A page blob: its size and sequence number (absent: 0).
	ts.ok(ts.do("PUT", "/put/pg", "", "x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "1024"), 201, "page blob")
	if g := ts.ok(ts.do("HEAD", "/put/pg", ""), 200, "HEAD page"); g.hdr("x-ms-blob-sequence-number") != "0" || g.hdr("Content-Length") != "1024" || g.hdr("x-ms-blob-type") != "PageBlob" {
		t.Errorf("page blob: %v", g.h)
	}
	ts.ok(ts.do("PUT", "/put/pg", "", "x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "512", "x-ms-blob-sequence-number", "7"), 201, "page blob with a sequence number")
	if g := ts.ok(ts.do("HEAD", "/put/pg", ""), 200, "HEAD page"); g.hdr("x-ms-blob-sequence-number") != "7" {
		t.Errorf("page blob: sequence number %q", g.hdr("x-ms-blob-sequence-number"))
	}
}

// Put Block answers the MD5 it was sent, else the body's CRC-64; Put Block List answers the
// MD5 of its own body; Get Block List lists what each blocklisttype asks for.
func TestBlockAnswers(t *testing.T) {
	ts := newTestServer(t)
	ts.container("blk")
	r := ts.ok(ts.do("PUT", "/blk/b?comp=block&blockid=QUFB", "first"), 201, "block without an MD5")
	if r.hdr("x-ms-content-crc64") != b64crc("first") || r.h.Get("Content-Md5") != "" || r.hdr("x-ms-request-server-encrypted") != "true" || r.h.Get("Etag") != "" {
		t.Errorf("block: %v", r.h)
	}
	r = ts.ok(ts.do("PUT", "/blk/b?comp=block&blockid=QkJC", "second", "Content-MD5", b64md5("second")), 201, "block with an MD5")
	if r.hdr("Content-Md5") != b64md5("second") || r.h.Get("x-ms-content-crc64") != "" {
		t.Errorf("block with MD5: %v", r.h)
	}
	ts.fails(ts.do("PUT", "/blk/b?comp=block", "x"), 400, "MissingRequiredQueryParameter", "no block id")
	ts.fails(ts.do("PUT", "/blk/b?comp=block&blockid=QUFB", "x", "Content-MD5", b64md5("y")), 400, "Md5Mismatch", "block, bad MD5")
	ts.fails(ts.do("PUT", "/blk/b?comp=block&blockid=QUFB", "x", "Content-MD5", "short"), 400, "InvalidHeaderValue", "block, MD5 not base64")
	ts.fails(ts.do("PUT", "/blk/b?comp=block&blockid=QUFB&snapshot=2026-01-01T00:00:00Z", "x"), 400, "InvalidQueryParameterValue", "block to a snapshot")

	// Before any commit: the staged blocks, no ETag, length 0.
	r = ts.ok(ts.do("GET", "/blk/b?comp=blocklist&blocklisttype=all", ""), 200, "block list before commit")
	if r.body != `<?xml version="1.0" encoding="utf-8"?><BlockList><CommittedBlocks /><UncommittedBlocks><Block><Name>QUFB</Name><Size>5</Size></Block><Block><Name>QkJC</Name><Size>6</Size></Block></UncommittedBlocks></BlockList>` ||
		r.h.Get("Etag") != "" || r.hdr("x-ms-blob-content-length") != "0" || r.hdr("Content-Type") != "application/xml" {
		t.Errorf("block list before commit: %s %v", r.body, r.h)
	}
	list := `<?xml version="1.0" encoding="utf-8"?><BlockList><Latest>QkJC</Latest><Latest>QUFB</Latest></BlockList>`
	ts.fails(ts.do("PUT", "/blk/b?comp=blocklist", list, "Content-MD5", b64md5("other")), 400, "Md5Mismatch", "block list, bad MD5")
	ts.fails(ts.do("PUT", "/blk/b?comp=blocklist", list, "Content-MD5", "xx"), 400, "InvalidHeaderValue", "block list, MD5 not base64")
	ts.fails(ts.do("PUT", "/blk/b?comp=blocklist", "<BlockList>"), 400, "InvalidXmlDocument", "block list, bad XML")
	ts.fails(ts.do("PUT", "/blk/b?comp=blocklist", list, "x-ms-tags", "=x"), 400, "EmptyTagName", "block list, bad tags")
	ts.fails(ts.do("PUT", "/blk/b?comp=blocklist", list, "x-ms-blob-content-md5", "xx"), 400, "InvalidHeaderValue", "block list, bad blob MD5")
	ts.fails(ts.do("PUT", "/blk/b?comp=blocklist", list, "x-ms-access-tier", "lukewarm"), 400, "InvalidHeaderValue", "block list, bad tier")
	ts.fails(ts.do("PUT", "/blk/b?comp=blocklist", list, "If-Modified-Since", "x"), 400, "InvalidHeaderValue", "block list, bad date")
	ts.fails(ts.do("PUT", "/blk/b?comp=blocklist", `<BlockList><Latest>Q0ND</Latest></BlockList>`), 400, "InvalidBlockList", "block list, unknown block")
	r = ts.ok(ts.do("PUT", "/blk/b?comp=blocklist", list, "Content-MD5", b64md5(list), "x-ms-meta-m", "1", "x-ms-blob-content-type", "text/x-b", "x-ms-access-tier", "Cold", "x-ms-tags", "t=1"), 201, "block list")
	if r.hdr("Content-Md5") != b64md5(list) || r.hdr("Etag") == "" || r.hdr("Last-Modified") == "" || r.hdr("x-ms-request-server-encrypted") != "true" {
		t.Errorf("block list: %v", r.h)
	}
	etag := r.hdr("Etag")
	g := ts.ok(ts.do("GET", "/blk/b", ""), 200, "get committed")
	if g.body != "secondfirst" || g.hdr("x-ms-meta-m") != "1" || g.hdr("Content-Type") != "text/x-b" || g.hdr("x-ms-access-tier") != "Cold" || g.hdr("x-ms-tag-count") != "1" {
		t.Errorf("committed blob: %s %v", g, g.h)
	}
	ts.ok(ts.do("PUT", "/blk/b?comp=block&blockid=Q0ND", "<&>"), 201, "block after commit")
	for _, c := range []struct{ q, want string }{
		{"", `<CommittedBlocks><Block><Name>QkJC</Name><Size>6</Size></Block><Block><Name>QUFB</Name><Size>5</Size></Block></CommittedBlocks>`},
		{"&blocklisttype=committed", `<CommittedBlocks><Block><Name>QkJC</Name><Size>6</Size></Block><Block><Name>QUFB</Name><Size>5</Size></Block></CommittedBlocks>`},
		{"&blocklisttype=uncommitted", `<UncommittedBlocks><Block><Name>Q0ND</Name><Size>3</Size></Block></UncommittedBlocks>`},
		{"&blocklisttype=all", `<CommittedBlocks><Block><Name>QkJC</Name><Size>6</Size></Block><Block><Name>QUFB</Name><Size>5</Size></Block></CommittedBlocks><UncommittedBlocks><Block><Name>Q0ND</Name><Size>3</Size></Block></UncommittedBlocks>`},
	} {
		r := ts.ok(ts.do("GET", "/blk/b?comp=blocklist"+c.q, ""), 200, "block list "+c.q)
		if want := `<?xml version="1.0" encoding="utf-8"?><BlockList>` + c.want + `</BlockList>`; r.body != want {
			t.Errorf("block list %s:\n got %s\nwant %s", c.q, r.body, want)
		}
		if r.hdr("Etag") != etag || r.hdr("Last-Modified") == "" || r.hdr("x-ms-blob-content-length") != "11" {
			t.Errorf("block list %s: %v", c.q, r.h)
		}
	}
	ts.fails(ts.do("GET", "/blk/b?comp=blocklist&blocklisttype=some", ""), 400, "InvalidQueryParameterValue", "bad blocklisttype")
	ts.fails(ts.do("GET", "/blk/b?comp=blocklist", "", "If-Match", `"0x1"`), 412, "ConditionNotMet", "block list, If-Match")
	ts.fails(ts.do("GET", "/blk/b?comp=blocklist", "", "If-Unmodified-Since", "?"), 400, "InvalidHeaderValue", "block list, bad date")
	ts.fails(ts.do("GET", "/blk/b?comp=blocklist&snapshot=x", ""), 400, "InvalidQueryParameterValue", "block list, bad snapshot")
	ts.fails(ts.do("GET", "/blk/none?comp=blocklist", ""), 404, "BlobNotFound", "block list of a missing blob")
}

// Get Blob's ranges at their edges: the last byte, one past it, an end past the blob, the
// forms Azure ignores; the range checksums up to 4 MiB exactly; x-ms-range over Range.
func TestGetBlobRanges(t *testing.T) {
	ts := newTestServer(t)
	ts.container("rng")
	ts.putBlob("/rng/b", "0123456789")
	md5All := b64md5("0123456789")
	for _, c := range []struct {
		hv      h
		status  int
		body    string
		crange  string
		md5     string // Content-MD5
		blobMD5 string // x-ms-blob-content-md5
	}{
		{h{}, 200, "0123456789", "", md5All, ""},
		{h{"x-ms-range", "bytes=0-9"}, 206, "0123456789", "bytes 0-9/10", "", md5All},
		{h{"x-ms-range", "bytes=9-9"}, 206, "9", "bytes 9-9/10", "", md5All},
		{h{"x-ms-range", "bytes=0-0"}, 206, "0", "bytes 0-0/10", "", md5All},
		{h{"x-ms-range", "bytes=9-"}, 206, "9", "bytes 9-9/10", "", md5All},
		{h{"x-ms-range", "bytes=2-8"}, 206, "2345678", "bytes 2-8/10", "", md5All},
		{h{"x-ms-range", "bytes=3-10"}, 206, "3456789", "bytes 3-9/10", "", md5All},
		{h{"x-ms-range", "bytes=0-33554431"}, 206, "0123456789", "bytes 0-9/10", "", md5All},
		{h{"Range", "bytes=1-2"}, 206, "12", "bytes 1-2/10", "", md5All},
		{h{"Range", "bytes=1-2", "x-ms-range", "bytes=4-5"}, 206, "45", "bytes 4-5/10", "", md5All},
		{h{"x-ms-range", "bytes=-3"}, 200, "0123456789", "", md5All, ""},
		{h{"x-ms-range", "bytes=0-1,4-5"}, 200, "0123456789", "", md5All, ""},
		{h{"x-ms-range", "bytes=1-2", "x-ms-range-get-content-md5", "TRUE"}, 206, "12", "bytes 1-2/10", b64md5("12"), md5All},
	} {
		r := ts.do("GET", "/rng/b", "", c.hv...)
		if r.code != c.status || r.body != c.body || r.hdr("Content-Range") != c.crange || r.hdr("Content-Md5") != c.md5 || r.hdr("x-ms-blob-content-md5") != c.blobMD5 {
			t.Errorf("%q: %s range %q md5 %q blob md5 %q", c.hv, r, r.hdr("Content-Range"), r.hdr("Content-Md5"), r.hdr("x-ms-blob-content-md5"))
		}
	}
	r := ts.ok(ts.do("GET", "/rng/b", "", "x-ms-range", "bytes=1-2", "x-ms-range-get-content-crc64", "true"), 206, "range CRC-64")
	if r.hdr("x-ms-content-crc64") != b64crc("12") || r.body != "12" || r.h.Get("Content-Md5") != "" {
		t.Errorf("range CRC-64: %s %v", r, r.h)
	}
	for _, c := range []struct {
		hv     h
		status int
		code   string
	}{
		{h{"x-ms-range", "bytes=10-"}, 416, "InvalidRange"},
		{h{"x-ms-range", "bytes=10-12"}, 416, "InvalidRange"},
		{h{"x-ms-range", "bytes=5-4"}, 416, "InvalidRange"},
		{h{"x-ms-range", "items=0-1"}, 416, "InvalidRange"},
		{h{"x-ms-range-get-content-md5", "true"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-range-get-content-crc64", "true"}, 400, "InvalidHeaderValue"},
		{h{"x-ms-structured-body", "XSM/1.0; properties=crc64"}, 400, "InvalidHeaderValue"},
		{h{"If-Modified-Since", "soon"}, 400, "InvalidHeaderValue"},
	} {
		ts.fails(ts.do("GET", "/rng/b", "", c.hv...), c.status, c.code, strings.Join(c.hv, " "))
	}
	if r := ts.do("GET", "/rng/b", "", "x-ms-range", "bytes=10-"); r.hdr("Content-Range") != "bytes */10" {
		t.Errorf("range past the end: Content-Range %q", r.hdr("Content-Range"))
	}
	// An empty blob: any range is 416; without one, 200 and no body.
	ts.putBlob("/rng/empty", "")
	ts.fails(ts.do("GET", "/rng/empty", "", "x-ms-range", "bytes=0-"), 416, "InvalidRange", "range of an empty blob")
	if r := ts.ok(ts.do("GET", "/rng/empty", ""), 200, "empty blob"); r.body != "" || r.hdr("Content-Length") != "0" {
		t.Errorf("empty blob: %s %v", r, r.h)
	}
	// Checksums of a range up to 4 MiB exactly; one byte more is 400 OutOfRangeInput.
	big := strings.Repeat("abcdefgh", (4<<20)/8+1)
	ts.putBlob("/rng/big", big)
	const last = 4<<20 - 1
	r = ts.ok(ts.do("GET", "/rng/big", "", "x-ms-range", "bytes=0-4194303", "x-ms-range-get-content-md5", "true"), 206, "MD5 of 4 MiB")
	if r.hdr("Content-Md5") != b64md5(big[:last+1]) || len(r.body) != last+1 {
		t.Errorf("MD5 of 4 MiB: %q, %d bytes", r.hdr("Content-Md5"), len(r.body))
	}
	ts.fails(ts.do("GET", "/rng/big", "", "x-ms-range", "bytes=0-4194304", "x-ms-range-get-content-md5", "true"), 400, "OutOfRangeInput", "MD5 of 4 MiB + 1")
	ts.fails(ts.do("GET", "/rng/big", "", "x-ms-range", "bytes=0-4194304", "x-ms-range-get-content-crc64", "true"), 400, "OutOfRangeInput", "CRC-64 of 4 MiB + 1")
	// A block blob committed from blocks has no stored MD5: no MD5 header on any read.
	ts.ok(ts.do("PUT", "/rng/blocks?comp=block&blockid=QUFB", "abc"), 201, "block")
	ts.ok(ts.do("PUT", "/rng/blocks?comp=blocklist", "<BlockList><Latest>QUFB</Latest></BlockList>"), 201, "commit")
	for _, hv := range []h{{}, {"x-ms-range", "bytes=0-1"}} {
		r := ts.ok(ts.do("GET", "/rng/blocks", "", hv...), 200+6*len(hv)/2, "read of a blob without an MD5")
		if _, ok := r.h["Content-Md5"]; ok {
			t.Errorf("%q: Content-MD5 %q", hv, r.hdr("Content-Md5"))
		}
		if _, ok := r.h["X-Ms-Blob-Content-Md5"]; ok {
			t.Errorf("%q: x-ms-blob-content-md5 %q", hv, r.hdr("x-ms-blob-content-md5"))
		}
	}
	if r := ts.ok(ts.do("HEAD", "/rng/blocks", ""), 200, "HEAD without an MD5"); r.h.Get("Content-Md5") != "" {
		t.Errorf("HEAD: Content-MD5 %q", r.hdr("Content-Md5"))
	}
}

// Conditional reads: 304 (no body, the error code in x-ms-error-code) for If-None-Match and
// If-Modified-Since, 412 for If-Match and If-Unmodified-Since; errors on HEAD have no body.
func TestConditionalReads(t *testing.T) {
	ts := newTestServer(t)
	ts.container("cond")
	etag := ts.putBlob("/cond/b", "data").hdr("Etag")
	past, future := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	for _, method := range []string{"GET", "HEAD"} {
		for _, c := range []struct {
			hv     h
			status int
		}{
			{h{"If-Match", etag}, 200},
			{h{"If-Match", `"0x1", ` + etag}, 200},
			{h{"If-Match", "*"}, 200},
			{h{"If-Match", `"0x1"`}, 412},
			{h{"If-None-Match", etag}, 304},
			{h{"If-None-Match", "*"}, 304},
			{h{"If-None-Match", `"0x1"`}, 200},
			{h{"If-Modified-Since", past}, 200},
			{h{"If-Modified-Since", future}, 304},
			{h{"If-Unmodified-Since", future}, 200},
			{h{"If-Unmodified-Since", past}, 412},
		} {
			r := ts.do(method, "/cond/b", "", c.hv...)
			if r.code != c.status {
				t.Errorf("%s %q: %s, want %d", method, c.hv, r, c.status)
			}
			if c.status == 304 && (r.body != "" || r.errCode() != "ConditionNotMet" || r.h.Get("Content-Type") != "") {
				t.Errorf("%s %q: 304 with %q %v", method, c.hv, r.body, r.h)
			}
			if c.status == 412 && (r.errCode() != "ConditionNotMet" || (method == "HEAD") != (r.body == "") || (method == "HEAD") != (r.h.Get("Content-Type") == "")) {
				t.Errorf("%s %q: 412 with %q %v", method, c.hv, r.body, r.h)
			}
		}
	}
	// Last-Modified is the time of the write, to the second: a client revalidating with it
	// as If-Modified-Since gets 304, with it as If-Unmodified-Since the blob.
	lm := ts.ok(ts.do("HEAD", "/cond/b", ""), 200, "HEAD").hdr("Last-Modified")
	if m, err := http.ParseTime(lm); err != nil || time.Since(m) > time.Hour || time.Until(m) > time.Hour {
		t.Errorf("Last-Modified %q", lm)
	}
	ts.ok(ts.do("GET", "/cond/b", "", "If-Modified-Since", lm), 304, "If-Modified-Since its Last-Modified")
	ts.ok(ts.do("GET", "/cond/b", "", "If-Unmodified-Since", lm), 200, "If-Unmodified-Since its Last-Modified")
	ts.fails(ts.do("GET", "/cond/b", "", "x-ms-lease-id", leaseA), 412, "LeaseNotPresentWithBlobOperation", "read with a lease id, no lease")
	ts.fails(ts.do("GET", "/cond/b?comp=metadata", "", "If-Match", `"0x1"`), 412, "ConditionNotMet", "metadata, If-Match")
	ts.fails(ts.do("GET", "/cond/b?comp=metadata", "", "If-Match", `"0x1"`, "If-Modified-Since", "?"), 400, "InvalidHeaderValue", "metadata, bad date")
	ts.fails(ts.do("GET", "/cond/none?comp=metadata", ""), 404, "BlobNotFound", "metadata of a missing blob")
	ts.fails(ts.do("GET", "/cond/b?comp=metadata&snapshot=?", ""), 400, "InvalidQueryParameterValue", "metadata, bad snapshot")
	ts.fails(ts.do("GET", "/cond/b?snapshot=2026-13-01T00:00:00Z", ""), 400, "InvalidQueryParameterValue", "get, bad snapshot")
}

// Bodies of unknown length (chunked) are read to their end by Put Blob, Put Block and
// Append Block.
func TestChunkedBodies(t *testing.T) {
	ts := newTestServer(t)
	ts.container("chk")
	chunked := []string{"Transfer-Encoding", "chunked"}
	ts.putBlob("/chk/b", "hello, chunked world", chunked...)
	ts.ok(ts.do("PUT", "/chk/k?comp=block&blockid=QUFB", "a chunked block", chunked...), 201, "chunked block")
	ts.ok(ts.do("PUT", "/chk/k?comp=blocklist", "<BlockList><Latest>QUFB</Latest></BlockList>"), 201, "commit")
	ts.ok(ts.do("PUT", "/chk/a", "", "x-ms-blob-type", "AppendBlob"), 201, "append blob")
	ts.ok(ts.do("PUT", "/chk/a?comp=appendblock", "a chunked append", chunked...), 201, "chunked append")
	for path, want := range map[string]string{"/chk/b": "hello, chunked world", "/chk/k": "a chunked block", "/chk/a": "a chunked append"} {
		if r := ts.ok(ts.do("GET", path, ""), 200, "read "+path); r.body != want {
			t.Errorf("%s: %q, want %q", path, r.body, want)
		}
	}
}
