package blobwire

import (
	"regexp"
	"strings"
	"testing"
)

// varying blanks what differs from run to run in a listing (times, ETags, copy ids, the
// port, snapshot times), so that the rest can be compared exactly.
var varying = regexp.MustCompile(`[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT|0x[0-9A-F]{15}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|127\.0\.0\.1:\d+|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z`)

func blank(s string) string {
	return varying.ReplaceAllStringFunc(s, func(m string) string {
		switch {
		case strings.HasSuffix(m, "GMT"):
			return "DATE"
		case strings.HasPrefix(m, "0x"):
			return "ETAG"
		case strings.HasPrefix(m, "127."):
			return "HOST"
		case strings.HasSuffix(m, "Z"):
			return "SNAP"
		}
		return "ID"
	})
}

const xmlDecl = `<?xml version="1.0" encoding="utf-8"?>`

// containerXML is a container's entry in List Containers, before its metadata.
func containerXML(name, lease string) string {
	return `<Container><Name>` + name + `</Name><Properties><Last-Modified>DATE</Last-Modified><Etag>&#34;ETAG&#34;</Etag>` + lease +
		`<DefaultEncryptionScope>$account-encryption-key</DefaultEncryptionScope><DenyEncryptionScopeOverride>false</DenyEncryptionScopeOverride>` +
		`<HasImmutabilityPolicy>false</HasImmutabilityPolicy><HasLegalHold>false</HasLegalHold></Properties>`
}

const unleased = `<LeaseStatus>unlocked</LeaseStatus><LeaseState>available</LeaseState>`

// List Containers: what each parameter echoes, the properties of a leased and of a public
// container, metadata only when asked for, pages, and the parameters it refuses.
func TestListContainersAnswers(t *testing.T) {
	ts := newTestServer(t)
	ts.container("lca", "x-ms-meta-m", "1", "x-ms-blob-public-access", "container")
	ts.container("lcb")
	ts.ok(ts.do("PUT", "/lcb?restype=container&comp=lease", "", "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1", "x-ms-proposed-lease-id", leaseA), 201, "lease")
	ts.container("lcc")
	ts.container("other")
	head := xmlDecl + `<EnumerationResults ServiceEndpoint="http://HOST/devstoreaccount1/">`
	a := containerXML("lca", unleased+`<PublicAccess>container</PublicAccess>`)
	b := containerXML("lcb", `<LeaseStatus>locked</LeaseStatus><LeaseState>leased</LeaseState><LeaseDuration>infinite</LeaseDuration>`)
	c := containerXML("lcc", unleased)
	o := containerXML("other", unleased)
	for _, x := range []struct{ q, want string }{
		{"", head + `<Containers>` + a + `</Container>` + b + `</Container>` + c + `</Container>` + o + `</Container></Containers><NextMarker /></EnumerationResults>`},
		{"&include=", head + `<Containers>` + a + `</Container>` + b + `</Container>` + c + `</Container>` + o + `</Container></Containers><NextMarker /></EnumerationResults>`},
		{"&prefix=lc&maxresults=2&include=metadata", head + `<Prefix>lc</Prefix><MaxResults>2</MaxResults><Containers>` + a + `<Metadata><M>1</M></Metadata></Container>` + b + `<Metadata></Metadata></Container></Containers><NextMarker>lcc</NextMarker></EnumerationResults>`},
		{"&prefix=lc&marker=lcc&include=system,deleted", head + `<Prefix>lc</Prefix><Marker>lcc</Marker><Containers>` + c + `</Container></Containers><NextMarker /></EnumerationResults>`},
		{"&maxresults=1", head + `<MaxResults>1</MaxResults><Containers>` + a + `</Container></Containers><NextMarker>lcb</NextMarker></EnumerationResults>`},
		{"&maxresults=5001&prefix=o", head + `<Prefix>o</Prefix><MaxResults>5000</MaxResults><Containers>` + o + `</Container></Containers><NextMarker /></EnumerationResults>`},
	} {
		r := ts.ok(ts.do("GET", "/?comp=list"+x.q, ""), 200, "list containers "+x.q)
		if got := blank(r.body); got != x.want || r.hdr("Content-Type") != "application/xml" {
			t.Errorf("list containers %s:\n got %s\nwant %s", x.q, got, x.want)
		}
	}
	for _, q := range []string{"maxresults=0", "maxresults=-1", "maxresults=x"} {
		ts.fails(ts.do("GET", "/?comp=list&"+q, ""), 400, "OutOfRangeQueryParameterValue", "list containers "+q)
	}
	ts.fails(ts.do("GET", "/?comp=list&include=metadata,snapshots", ""), 400, "InvalidQueryParameterValue", "list containers, unknown include")
}

// blobXML is a blob's entry in List Blobs up to its lease, from its Content-Length on.
func blobXML(name, snap, length, typ, md5, tier, more string) string {
	s := `<Blob><Name>` + name + `</Name>`
	if snap != "" {
		s += `<Snapshot>SNAP</Snapshot>`
	}
	s += `<Properties><Creation-Time>DATE</Creation-Time><Last-Modified>DATE</Last-Modified><Etag>ETAG</Etag><Content-Length>` + length +
		`</Content-Length><Content-Type>application/octet-stream</Content-Type><Content-Encoding /><Content-Language /><Content-CRC64 />` + md5 +
		`<Cache-Control /><Content-Disposition /><BlobType>` + typ + `</BlobType>` + tier + more
	return s
}

// List Blobs: each kind of blob's properties, what each include adds, a hierarchical page,
// and the parameters it echoes and refuses.
func TestListBlobsAnswers(t *testing.T) {
	ts := newTestServer(t)
	ts.container("lbs")
	ts.putBlob("/lbs/a/1", "one", "x-ms-blob-content-type", "text/a", "x-ms-blob-content-encoding", "gzip", "x-ms-blob-content-language", "en",
		"x-ms-blob-cache-control", "no-cache", "x-ms-blob-content-disposition", "inline", "x-ms-meta-m", "1", "x-ms-tags", "t=1")
	ts.putBlob("/lbs/b", "bee", "x-ms-access-tier", "Cool")
	ts.ok(ts.do("PUT", "/lbs/b?comp=snapshot", ""), 201, "snapshot")
	ts.ok(ts.do("PUT", "/lbs/c", "", "x-ms-blob-type", "AppendBlob"), 201, "append blob")
	ts.ok(ts.do("PUT", "/lbs/d", "", "x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "512"), 201, "page blob")
	ts.putBlob("/lbs/e", "e")
	ts.ok(ts.do("PUT", "/lbs/e?comp=lease", "", "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1", "x-ms-proposed-lease-id", leaseA), 201, "lease")
	ts.ok(ts.do("PUT", "/lbs/f", "", "x-ms-copy-source", ts.base+"/lbs/b"), 202, "copy")
	ts.ok(ts.do("PUT", "/lbs/u?comp=block&blockid=QUFB", "x"), 201, "block")

	md5Bee, md5E := `<Content-MD5>`+b64md5("bee")+`</Content-MD5>`, `<Content-MD5>`+b64md5("e")+`</Content-MD5>`
	const (
		hot      = `<AccessTier>Hot</AccessTier><AccessTierInferred>true</AccessTierInferred>`
		cool     = `<AccessTier>Cool</AccessTier>`
		end      = `<ServerEncrypted>true</ServerEncrypted></Properties>`
		leasedIn = `<LeaseStatus>locked</LeaseStatus><LeaseState>leased</LeaseState><LeaseDuration>infinite</LeaseDuration>`
		copied   = `<CopyId>ID</CopyId><CopyStatus>success</CopyStatus><CopySource>http://HOST/devstoreaccount1/lbs/b</CopySource><CopyProgress>3/3</CopyProgress><CopyCompletionTime>DATE</CopyCompletionTime>`
	)
	a1 := `<Blob><Name>a/1</Name><Properties><Creation-Time>DATE</Creation-Time><Last-Modified>DATE</Last-Modified><Etag>ETAG</Etag><Content-Length>3</Content-Length>` +
		`<Content-Type>text/a</Content-Type><Content-Encoding>gzip</Content-Encoding><Content-Language>en</Content-Language><Content-CRC64 />` +
		`<Content-MD5>` + b64md5("one") + `</Content-MD5><Cache-Control>no-cache</Cache-Control><Content-Disposition>inline</Content-Disposition>` +
		`<BlobType>BlockBlob</BlobType>` + hot + unleased
	b := blobXML("b", "", "3", "BlockBlob", md5Bee, cool, unleased)
	bSnap := blobXML("b", "snap", "3", "BlockBlob", md5Bee, cool, unleased)
	c := blobXML("c", "", "0", "AppendBlob", `<Content-MD5 />`, "", unleased)
	d := blobXML("d", "", "512", "PageBlob", `<Content-MD5 />`, "", unleased)
	e := blobXML("e", "", "1", "BlockBlob", md5E, hot, leasedIn)
	f := blobXML("f", "", "3", "BlockBlob", md5Bee, hot, unleased)
	u := `<Blob><Name>u</Name><Properties><Content-Length>0</Content-Length><Content-Type /><Content-Encoding /><Content-Language /><Content-CRC64 /><Content-MD5 />` +
		`<Cache-Control /><Content-Disposition /><BlobType>BlockBlob</BlobType>` + hot + unleased
	head := xmlDecl + `<EnumerationResults ServiceEndpoint="http://HOST/devstoreaccount1/" ContainerName="lbs">`
	for _, x := range []struct{ q, want string }{
		{"", head + `<Blobs>` + a1 + end + `</Blob>` + b + end + `</Blob>` + c + end + `</Blob>` + d + end + `</Blob>` + e + end + `</Blob>` + f + end + `</Blob></Blobs><NextMarker /></EnumerationResults>`},
		{"&include=metadata,snapshots,uncommittedblobs,copy,tags",
			head + `<Blobs>` + a1 + end[:len(end)-len("</Properties>")] + `<TagCount>1</TagCount></Properties><Metadata><M>1</M></Metadata><Tags><TagSet><Tag><Key>t</Key><Value>1</Value></Tag></TagSet></Tags></Blob>` +
				bSnap + end + `<Metadata></Metadata></Blob>` + b + end + `<Metadata></Metadata></Blob>` + c + end + `<Metadata></Metadata></Blob>` +
				d + end + `<Metadata></Metadata></Blob>` + e + end + `<Metadata></Metadata></Blob>` + f + copied + end + `<Metadata></Metadata></Blob>` +
				u + end + `<Metadata></Metadata></Blob></Blobs><NextMarker /></EnumerationResults>`},
		{"&include=" + urlEscape("deleted, versions,immutabilitypolicy,legalhold,deletedwithversions,permissions,"),
			head + `<Blobs>` + a1 + end + `</Blob>` + b + end + `</Blob>` + c + end + `</Blob>` + d + end + `</Blob>` + e + end + `</Blob>` + f + end + `</Blob></Blobs><NextMarker /></EnumerationResults>`},
		{"&delimiter=/&maxresults=2&prefix=",
			head + `<Prefix></Prefix><MaxResults>2</MaxResults><Delimiter>/</Delimiter><Blobs><BlobPrefix><Name>a/</Name></BlobPrefix>` + b + end + `</Blob></Blobs><NextMarker>YwAC</NextMarker></EnumerationResults>`},
		{"&marker=YwAC&maxresults=1",
			head + `<Marker>YwAC</Marker><MaxResults>1</MaxResults><Blobs>` + c + end + `</Blob></Blobs><NextMarker>ZAAC</NextMarker></EnumerationResults>`},
	} {
		r := ts.ok(ts.do("GET", "/lbs?restype=container&comp=list"+x.q, ""), 200, "list blobs "+x.q)
		if got := blank(r.body); got != x.want || r.hdr("Content-Type") != "application/xml" {
			t.Errorf("list blobs %s:\n got %s\nwant %s", x.q, got, x.want)
		}
	}
	for _, c := range []struct{ q, status, code string }{
		{"&maxresults=0", "400", "OutOfRangeQueryParameterValue"},
		{"&include=bogus", "400", "InvalidQueryParameterValue"},
		{"&marker=%21%21", "400", "InvalidQueryParameterValue"},
	} {
		r := ts.do("GET", "/lbs?restype=container&comp=list"+c.q, "")
		ts.fails(r, map[string]int{"400": 400}[c.status], c.code, "list blobs "+c.q)
	}
	ts.fails(ts.do("GET", "/none?restype=container&comp=list", ""), 404, "ContainerNotFound", "list blobs of a missing container")
}
