package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
)

// blobAccountSAS is an account SAS query string allowing everything, for raw requests.
func blobAccountSAS(t testing.TB) string {
	t.Helper()
	cred, _ := azblob.NewSharedKeyCredential(devAccount, devKey)
	q, err := sas.AccountSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
		Permissions:   to.Ptr(sas.AccountPermissions{Read: true, Write: true, Add: true, Create: true, Delete: true, List: true, Tag: true, FilterByTags: true}).String(),
		ResourceTypes: to.Ptr(sas.AccountResourceTypes{Service: true, Container: true, Object: true}).String()}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	return q.Encode()
}

// rawBlob sends a request authorised by an account SAS; path may carry a query.
func rawBlob(t testing.TB, ts *testServer, method, path, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	req, err := http.NewRequest(method, ts.blobEndpoint()+path+sep+blobAccountSAS(t), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2021-12-02")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return send(t, req)
}

func tagsMap(ts []*blob.Tags) map[string]string {
	m := map[string]string{}
	for _, t := range ts {
		m[*t.Key] = *t.Value
	}
	return m
}

// Tags through the SDK: set on upload (Put Blob, Put Block List, Copy), read back, counted on
// HEAD and in listings, replaced by Set Blob Tags without touching the ETag, survive a restart.
func TestBlobTags(t *testing.T) {
	dir := t.TempDir()
	ts := startServerAt(t, dir)
	ctx := context.Background()
	c := blobClient(t, ts)
	if _, err := c.CreateContainer(ctx, "tags", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("tags")
	want := map[string]string{"project": "contoso", "Date": "2020-05-01", "path": "a/b c+d=e:f_g-h.i"}
	if _, err := c.UploadBuffer(ctx, "tags", "one", []byte("1"), &azblob.UploadBufferOptions{Tags: want}); err != nil {
		t.Fatal(err)
	}
	bc := cc.NewBlobClient("one")
	got, err := bc.GetTags(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := tagsMap(got.BlobTagSet); len(m) != 3 || m["path"] != want["path"] || m["Date"] != "2020-05-01" {
		t.Errorf("tags after upload: %v", m)
	}
	if *got.BlobTagSet[0].Key != "Date" || *got.BlobTagSet[2].Key != "project" {
		t.Errorf("tags not in key order: %s, %s", *got.BlobTagSet[0].Key, *got.BlobTagSet[2].Key)
	}
	props, err := bc.GetProperties(ctx, nil)
	if err != nil || props.TagCount == nil || *props.TagCount != 3 {
		t.Fatalf("x-ms-tag-count: %v %v", props.TagCount, err)
	}
	// A body that does not match its Content-MD5 is refused, and the tags stay.
	_, err = bc.SetTags(ctx, map[string]string{"k": "v"}, &blob.SetTagsOptions{TransactionalContentMD5: []byte("0123456789abcdef")})
	if !bloberror.HasCode(err, bloberror.MD5Mismatch) {
		t.Errorf("Set Blob Tags with a wrong Content-MD5: %v", err)
	}
	if _, err := bc.SetTags(ctx, map[string]string{"k": "v"}, nil); err != nil {
		t.Fatal(err)
	}
	after, _ := bc.GetProperties(ctx, nil)
	if *after.ETag != *props.ETag {
		t.Errorf("Set Blob Tags changed the ETag")
	}
	if got, _ := bc.GetTags(ctx, nil); len(got.BlobTagSet) != 1 || *got.BlobTagSet[0].Value != "v" {
		t.Errorf("tags not replaced: %v", tagsMap(got.BlobTagSet))
	}
	// Put Block List and Copy take x-ms-tags too; a Put Blob without it clears them.
	bb := cc.NewBlockBlobClient("two")
	if _, err := bb.StageBlock(ctx, "YmxvY2sx", streamOf([]byte("staged")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.CommitBlockList(ctx, []string{"YmxvY2sx"}, &blockblob.CommitBlockListOptions{Tags: map[string]string{"k": "w"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := cc.NewBlobClient("two").GetTags(ctx, nil); len(got.BlobTagSet) != 1 || *got.BlobTagSet[0].Value != "w" {
		t.Errorf("tags after Put Block List: %v", tagsMap(got.BlobTagSet))
	}
	if _, err := cc.NewBlobClient("three").StartCopyFromURL(ctx, bc.URL(), &blob.StartCopyFromURLOptions{BlobTags: map[string]string{"copied": "yes"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := cc.NewBlobClient("three").GetTags(ctx, nil); len(got.BlobTagSet) != 1 || *got.BlobTagSet[0].Key != "copied" {
		t.Errorf("tags after copy: %v", tagsMap(got.BlobTagSet))
	}
	if _, err := c.UploadBuffer(ctx, "tags", "two", []byte("again"), nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := cc.NewBlobClient("two").GetTags(ctx, nil); len(got.BlobTagSet) != 0 {
		t.Errorf("Put Blob kept old tags: %v", tagsMap(got.BlobTagSet))
	}
	// Listing with include=tags.
	p, err := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Tags: true}}).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int32{}
	for _, it := range p.Segment.BlobItems {
		if it.Properties.TagCount != nil {
			counts[*it.Name] = *it.Properties.TagCount
			if it.BlobTags == nil || len(it.BlobTags.BlobTagSet) != int(*it.Properties.TagCount) {
				t.Errorf("%s: TagCount %d but tags %v", *it.Name, *it.Properties.TagCount, it.BlobTags)
			}
		}
	}
	if len(counts) != 2 || counts["one"] != 1 || counts["three"] != 1 {
		t.Errorf("listed tag counts %v", counts)
	}
	// Durable: the tags are there after a restart.
	ts.stop(t)
	ts = startServerAt(t, dir)
	c = blobClient(t, ts)
	if got, err := c.ServiceClient().NewContainerClient("tags").NewBlobClient("one").GetTags(ctx, nil); err != nil || len(got.BlobTagSet) != 1 {
		t.Errorf("tags after restart: %v %v", got, err)
	}
}

// Bad tags get Azure's codes; duplicate keys and bad XML are sent raw (the SDK cannot).
func TestBlobTagsErrors(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	if _, err := c.CreateContainer(ctx, "tagerr", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "tagerr", "b", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	bc := c.ServiceClient().NewContainerClient("tagerr").NewBlobClient("b")
	eleven := map[string]string{}
	for i := 0; i < 11; i++ {
		eleven[string(rune('a'+i))] = "v"
	}
	for _, tc := range []struct {
		tags map[string]string
		code bloberror.Code
	}{
		{eleven, "TagsTooLarge"},
		{map[string]string{"": "v"}, "EmptyTagName"},
		{map[string]string{strings.Repeat("k", 129): "v"}, "TagsTooLarge"},
		{map[string]string{"k": strings.Repeat("v", 257)}, "TagsTooLarge"},
		{map[string]string{"k!": "v"}, "InvalidTag"},
		{map[string]string{"k": "é"}, "InvalidTag"},
	} {
		_, err := bc.SetTags(ctx, tc.tags, nil)
		if !bloberror.HasCode(err, tc.code) {
			t.Errorf("Set Blob Tags %.40v: %v, want %s", tc.tags, err, tc.code)
		}
		_, err = c.UploadBuffer(ctx, "tagerr", "new", []byte("x"), &azblob.UploadBufferOptions{Tags: tc.tags})
		if !bloberror.HasCode(err, tc.code) {
			t.Errorf("Put Blob with x-ms-tags %.40v: %v, want %s", tc.tags, err, tc.code)
		}
	}
	// Limits are inclusive: 10 tags, 128-character keys and 256-character values are fine.
	ten := map[string]string{strings.Repeat("k", 128): strings.Repeat("v", 256)}
	for i := 0; i < 9; i++ {
		ten[string(rune('a'+i))] = ""
	}
	if _, err := bc.SetTags(ctx, ten, nil); err != nil {
		t.Errorf("ten tags at the limits: %v", err)
	}
	dup := `<?xml version="1.0" encoding="utf-8"?><Tags><TagSet><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>a</Key><Value>2</Value></Tag></TagSet></Tags>`
	for _, tc := range []struct {
		body, code string
	}{
		{dup, "DuplicateTagNames"},
		{`<Tags><TagSet><Tag><Key>a</Key>`, "InvalidXmlDocument"},
		{`<Other/>`, "InvalidXmlDocument"},
	} {
		status, h, _ := rawBlob(t, ts, "PUT", "/tagerr/b?comp=tags", tc.body, "Content-Type", "application/xml")
		if status != 400 || h.Get("x-ms-error-code") != tc.code {
			t.Errorf("Set Blob Tags %.40q: %d %s, want 400 %s", tc.body, status, h.Get("x-ms-error-code"), tc.code)
		}
	}
	if status, h, _ := rawBlob(t, ts, "PUT", "/tagerr/b", "x", "x-ms-blob-type", "BlockBlob", "x-ms-tags", "a=1&a=2"); status != 400 || h.Get("x-ms-error-code") != "DuplicateTagNames" {
		t.Errorf("x-ms-tags with a duplicate: %d %s", status, h.Get("x-ms-error-code"))
	}
	if _, err := c.ServiceClient().NewContainerClient("tagerr").NewBlobClient("missing").SetTags(ctx, map[string]string{"a": "b"}, nil); !bloberror.HasCode(err, bloberror.BlobNotFound) {
		t.Errorf("tags of a missing blob: %v", err)
	}
}

// x-ms-if-tags: reads and writes proceed only when the blob's tags satisfy the expression.
func TestBlobIfTags(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	if _, err := c.CreateContainer(ctx, "iftags", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "iftags", "b", []byte("data"), &azblob.UploadBufferOptions{Tags: map[string]string{"state": "ready", "n": "5"}}); err != nil {
		t.Fatal(err)
	}
	bc := c.ServiceClient().NewContainerClient("iftags").NewBlobClient("b")
	cond := func(expr string) *blob.AccessConditions {
		return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfTags: to.Ptr(expr)}}
	}
	if _, err := bc.DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: cond(`"state" = 'ready' AND n >= '5'`)}); err != nil {
		t.Errorf("read with a true x-ms-if-tags: %v", err)
	}
	if _, err := bc.DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: cond(`"state" = 'done' OR n > '5'`)}); !bloberror.HasCode(err, bloberror.ConditionNotMet) {
		t.Errorf("read with a false x-ms-if-tags: %v", err)
	}
	if _, err := bc.SetMetadata(ctx, map[string]*string{"a": to.Ptr("b")}, &blob.SetMetadataOptions{AccessConditions: cond(`state <> 'ready'`)}); !bloberror.HasCode(err, bloberror.ConditionNotMet) {
		t.Errorf("write with a false x-ms-if-tags: %v", err)
	}
	if _, err := bc.Delete(ctx, &blob.DeleteOptions{AccessConditions: cond(`(state = 'ready')`)}); err != nil {
		t.Errorf("delete with a true x-ms-if-tags: %v", err)
	}
	if _, err := c.UploadBuffer(ctx, "iftags", "b", []byte("data"), &azblob.UploadBufferOptions{AccessConditions: cond(`a = 'b'`)}); !bloberror.HasCode(err, bloberror.ConditionNotMet) {
		t.Errorf("create with x-ms-if-tags: %v", err)
	}
	status, h, _ := rawBlob(t, ts, "HEAD", "/iftags/missing", "", "x-ms-if-tags", `state = ready`)
	if status != 400 || h.Get("x-ms-error-code") != "InvalidHeaderValue" {
		t.Errorf("bad x-ms-if-tags: %d %s", status, h.Get("x-ms-error-code"))
	}
}

// Find Blobs by Tags in the account and in a container, with paging and @container.
func TestBlobFindByTags(t *testing.T) { findByTagsChecks(t, startServer(t)) }

// The in-memory engine keeps tags, sequence numbers and page diffs as the others do.
func TestBlobTagsAndPagesInMemory(t *testing.T) {
	ts := startServerConfig(t, config.Config{Host: "127.0.0.1", InMemory: true, Accounts: []auth.Account{auth.DevAccount()}})
	findByTagsChecks(t, ts)
	pageDiffChecks(t, ts)
}

func findByTagsChecks(t *testing.T, ts *testServer) {
	ctx := context.Background()
	c := blobClient(t, ts)
	for _, name := range []string{"finda", "findb"} {
		if _, err := c.CreateContainer(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
		for i, b := range []string{"x1", "x2", "x3"} {
			tags := map[string]string{"kind": "log", "day": "2020-05-0" + string(rune('1'+i))}
			if _, err := c.UploadBuffer(ctx, name, b, []byte(b), &azblob.UploadBufferOptions{Tags: tags}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.UploadBuffer(ctx, name, "untagged", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	svc := c.ServiceClient()
	r, err := svc.FilterBlobs(ctx, `"kind" = 'log' AND "day" >= '2020-05-02'`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range r.Blobs {
		names = append(names, *b.ContainerName+"/"+*b.Name)
		if m := tagsMap(b.Tags.BlobTagSet); len(m) != 2 || m["kind"] != "log" {
			t.Errorf("%s: returned tags %v", *b.Name, m)
		}
	}
	if strings.Join(names, ",") != "finda/x2,finda/x3,findb/x2,findb/x3" {
		t.Errorf("found %v", names)
	}
	if r, err := svc.FilterBlobs(ctx, `kind = 'log' AND @container = 'findb' AND day < '2020-05-02'`, nil); err != nil || len(r.Blobs) != 1 || *r.Blobs[0].ContainerName != "findb" {
		t.Errorf("find with @container: %v %v", r.Blobs, err)
	}
	// Paging: two at a time across both containers, every match once.
	var paged []string
	opts := &service.FilterBlobsOptions{MaxResults: to.Ptr[int32](2)}
	for {
		r, err := svc.FilterBlobs(ctx, `kind = 'log'`, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range r.Blobs {
			paged = append(paged, *b.ContainerName+"/"+*b.Name)
		}
		if r.NextMarker == nil || *r.NextMarker == "" {
			break
		}
		opts.Marker = r.NextMarker
	}
	if strings.Join(paged, ",") != "finda/x1,finda/x2,finda/x3,findb/x1,findb/x2,findb/x3" {
		t.Errorf("paged %v", paged)
	}
	cr, err := svc.NewContainerClient("finda").FilterBlobs(ctx, `day < '2020-05-02'`, nil)
	if err != nil || len(cr.Blobs) != 1 || *cr.Blobs[0].Name != "x1" {
		t.Errorf("find in a container: %v %v", cr.Blobs, err)
	}
	for _, bad := range []string{`kind = 'a' OR day = 'b'`, `kind`, `kind = 'a' AND kind = 'b'`, ``} {
		if _, err := svc.FilterBlobs(ctx, bad, nil); !bloberror.HasCode(err, "InvalidQueryParameterValue") {
			t.Errorf("where %q: %v", bad, err)
		}
	}
	if _, err := svc.NewContainerClient("nocontainer").FilterBlobs(ctx, `a = 'b'`, nil); !bloberror.HasCode(err, bloberror.ContainerNotFound) {
		t.Errorf("find in a missing container: %v", err)
	}
}

// SAS: tags need t, Find Blobs by Tags needs f.
func TestBlobTagsSAS(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := blobClient(t, ts)
	if _, err := c.CreateContainer(ctx, "tagsas", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "tagsas", "b", []byte("x"), &azblob.UploadBufferOptions{Tags: map[string]string{"a": "1"}}); err != nil {
		t.Fatal(err)
	}
	cred, _ := azblob.NewSharedKeyCredential(devAccount, devKey)
	exp := time.Now().Add(time.Hour).UTC()
	blobWith := func(p sas.BlobPermissions) *blob.Client {
		q, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: p.String(), ContainerName: "tagsas", BlobName: "b"}.SignWithSharedKey(cred)
		if err != nil {
			t.Fatal(err)
		}
		bc, _ := blob.NewClientWithNoCredential(ts.blobEndpoint()+"/tagsas/b?"+q.Encode(), nil)
		return bc
	}
	if _, err := blobWith(sas.BlobPermissions{Read: true, Write: true}).GetTags(ctx, nil); !bloberror.HasCode(err, bloberror.AuthorizationPermissionMismatch) {
		t.Errorf("get tags without t: %v", err)
	}
	if _, err := blobWith(sas.BlobPermissions{Read: true, Write: true}).SetTags(ctx, map[string]string{"a": "2"}, nil); !bloberror.HasCode(err, bloberror.AuthorizationPermissionMismatch) {
		t.Errorf("set tags without t: %v", err)
	}
	tagOnly := blobWith(sas.BlobPermissions{Tag: true})
	if _, err := tagOnly.SetTags(ctx, map[string]string{"a": "2"}, nil); err != nil {
		t.Errorf("set tags with t: %v", err)
	}
	if r, err := tagOnly.GetTags(ctx, nil); err != nil || len(r.BlobTagSet) != 1 || *r.BlobTagSet[0].Value != "2" {
		t.Errorf("get tags with t: %v %v", r, err)
	}
	containerWith := func(p sas.ContainerPermissions) *container.Client {
		q, _ := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: p.String(), ContainerName: "tagsas"}.SignWithSharedKey(cred)
		cc, _ := container.NewClientWithNoCredential(ts.blobEndpoint()+"/tagsas?"+q.Encode(), nil)
		return cc
	}
	if _, err := containerWith(sas.ContainerPermissions{Read: true, List: true}).FilterBlobs(ctx, `a = '2'`, nil); !bloberror.HasCode(err, bloberror.AuthorizationPermissionMismatch) {
		t.Errorf("find without f: %v", err)
	}
	if r, err := containerWith(sas.ContainerPermissions{FilterByTags: true}).FilterBlobs(ctx, `a = '2'`, nil); err != nil || len(r.Blobs) != 1 {
		t.Errorf("find with f: %v %v", r, err)
	}
	status, _, body := rawBlob(t, ts, "GET", "/?comp=blobs&where="+strings.ReplaceAll(`a='2'`, "'", "%27"), "")
	if status != 200 || !strings.Contains(body, "<Name>b</Name><ContainerName>tagsas</ContainerName>") {
		t.Errorf("find with an account SAS: %d %s", status, body)
	}
}
