package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/query"
	"github.com/tablo/tablo/internal/server"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/table"
)

// These tests drive the Table service's handlers as cmd/tablo wires them (a durable Pebble
// engine, the partition layer, the development account) with signed requests that go
// through fasthttp's parser and writer, and check what a client sees: status, Azure error
// code, headers and body. The end-to-end tests (e2e/) cover the same surface through the
// SDKs; these let the package's own tests judge it (mutation testing, docs/testing.md).

// testServer is a Table server over a fresh store, with its partition layer.
type testServer struct {
	t     *testing.T
	h     *server.Server
	parts *partition.Layer
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	svc := table.New(db, table.Options{})
	t.Cleanup(func() {
		svc.Close()
		db.Close()
	})
	parts := partition.New(partition.Options{})
	h := server.New(server.Options{Service: svc, Accounts: []auth.Account{auth.DevAccount()}, Partitions: parts})
	return &testServer{t: t, h: h, parts: parts}
}

// do sends a request signed with the account key (Shared Key Lite).
func (ts *testServer) do(method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, signed(method, path, body, hdr))
	return rec
}

// sas sends an unsigned request whose only credential is token.
func (ts *testServer) sas(method, path, token, body string, hdr map[string]string) *httptest.ResponseRecorder {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	r := httptest.NewRequest(method, "http://127.0.0.1:10002"+path+sep+token, strings.NewReader(body))
	r.Header.Set("x-ms-version", "2019-02-02")
	r.Header.Set("Accept", "application/json;odata=nometadata")
	r.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, r)
	return rec
}

// ok fails the test unless rec has status want.
func (ts *testServer) ok(rec *httptest.ResponseRecorder, want int, what string) *httptest.ResponseRecorder {
	ts.t.Helper()
	if rec.Code != want {
		ts.t.Fatalf("%s: %d %s %s, want %d", what, rec.Code, rec.Header().Get("x-ms-error-code"), rec.Body, want)
	}
	return rec
}

// fails fails the test unless rec is Azure's error answer status/code, in the header and body.
func (ts *testServer) fails(rec *httptest.ResponseRecorder, status int, code, what string) {
	ts.t.Helper()
	if rec.Code != status || rec.Header().Get("x-ms-error-code") != code || !strings.Contains(rec.Body.String(), code) {
		ts.t.Errorf("%s: %d %s %s, want %d %s", what, rec.Code, rec.Header().Get("x-ms-error-code"), rec.Body, status, code)
	}
}

func (ts *testServer) createTable(name string) {
	ts.t.Helper()
	ts.ok(ts.do("POST", "/devstoreaccount1/Tables", `{"TableName":"`+name+`"}`, nil), 201, "create table "+name)
}

// decode decodes a JSON body into a map.
func decode(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	return m
}

// names lists the value of key in each object of a query answer's "value".
func names(t *testing.T, rec *httptest.ResponseRecorder, key string) string {
	t.Helper()
	var out []string
	for _, v := range decode(t, rec)["value"].([]any) {
		out = append(out, fmt.Sprint(v.(map[string]any)[key]))
	}
	return strings.Join(out, ",")
}

const base = "http://127.0.0.1:10002/devstoreaccount1"

func TestCreateTableAnswers(t *testing.T) {
	ts := newTestServer(t)
	rec := ts.ok(ts.do("POST", "/devstoreaccount1/Tables", `{"TableName":"Minimal"}`, nil), 201, "create")
	if got := rec.Header().Get("Location"); got != base+"/Tables('Minimal')" {
		t.Errorf("Location %q", got)
	}
	if got := rec.Header().Get("Content-Type"); got != "application/json;odata=minimalmetadata;streaming=true;charset=utf-8" {
		t.Errorf("Content-Type %q", got)
	}
	if got := rec.Body.String(); got != `{"odata.metadata":"`+base+`/$metadata#Tables/@Element","TableName":"Minimal"}` {
		t.Errorf("minimal body %s", got)
	}
	if rec.Header().Get("Preference-Applied") != "" {
		t.Errorf("Preference-Applied without Prefer: %q", rec.Header().Get("Preference-Applied"))
	}

	rec = ts.ok(ts.do("POST", "/devstoreaccount1/Tables", `{"TableName":"Full"}`, map[string]string{
		"Accept": "application/json;odata=fullmetadata", "Prefer": "return-content"}), 201, "create full")
	want := `{"odata.metadata":"` + base + `/$metadata#Tables/@Element","odata.type":"devstoreaccount1.Tables","odata.id":"` +
		base + `/Tables('Full')","odata.editLink":"Tables('Full')","TableName":"Full"}`
	if got := rec.Body.String(); got != want {
		t.Errorf("full body\n got %s\nwant %s", got, want)
	}
	if rec.Header().Get("Preference-Applied") != "return-content" {
		t.Errorf("Preference-Applied %q", rec.Header().Get("Preference-Applied"))
	}

	rec = ts.ok(ts.do("POST", "/devstoreaccount1/Tables", "\xef\xbb\xbf"+`{"TableName":"None"}`, map[string]string{
		"Accept": "application/json;odata=nometadata"}), 201, "create with a BOM")
	if got := rec.Body.String(); got != `{"TableName":"None"}` {
		t.Errorf("nometadata body %s", got)
	}

	rec = ts.ok(ts.do("POST", "/devstoreaccount1/Tables", `{"TableName":"Quiet"}`, map[string]string{"Prefer": "return-no-content"}), 204, "create no content")
	if rec.Body.Len() != 0 || rec.Header().Get("Preference-Applied") != "return-no-content" ||
		rec.Header().Get("DataServiceId") != base+"/Tables('Quiet')" || rec.Header().Get("Content-Type") != "" {
		t.Errorf("204 create: %v %q", rec.Header(), rec.Body)
	}

	ts.fails(ts.do("POST", "/devstoreaccount1/Tables", `{"TableName":"Minimal"}`, nil), 409, "TableAlreadyExists", "duplicate")
	ts.fails(ts.do("POST", "/devstoreaccount1/Tables", `{"TableName":`, nil), 400, "InvalidInput", "broken JSON")
	ts.fails(ts.do("POST", "/devstoreaccount1/Tables", `{"Name":"x"}`, nil), 400, "InvalidInput", "no TableName")
	ts.fails(ts.do("POST", "/devstoreaccount1/Tables", `<entry/>`, map[string]string{"Content-Type": "application/atom+xml; charset=utf-8"}), 415, "AtomFormatNotSupported", "Atom")
	ts.fails(ts.do("POST", "/devstoreaccount1/Tables", `<entry/>`, map[string]string{"Content-Type": " Application/XML "}), 415, "AtomFormatNotSupported", "XML")
}

func TestQueryTablesPages(t *testing.T) {
	ts := newTestServer(t)
	for _, n := range []string{"alpha", "beta", "gamma"} {
		ts.createTable(n)
	}
	rec := ts.ok(ts.do("GET", "/devstoreaccount1/Tables", "", nil), 200, "list")
	if got := rec.Body.String(); got != `{"odata.metadata":"`+base+`/$metadata#Tables","value":[{"TableName":"alpha"},{"TableName":"beta"},{"TableName":"gamma"}]}` {
		t.Errorf("list %s", got)
	}
	if rec.Header().Get("x-ms-continuation-NextTableName") != "" {
		t.Errorf("continuation on the last page")
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/Tables?$top=2", "", map[string]string{"Accept": "application/json;odata=nometadata"}), 200, "top 2")
	next := rec.Header().Get("x-ms-continuation-NextTableName")
	if got := rec.Body.String(); got != `{"value":[{"TableName":"alpha"},{"TableName":"beta"}]}` || next == "" {
		t.Fatalf("first page %s, next %q", got, next)
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/Tables?$top=2&NextTableName="+url.QueryEscape(next), "", nil), 200, "page 2")
	if got := names(t, rec, "TableName"); got != "gamma" {
		t.Errorf("second page %s", got)
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/Tables()?$top=0", "", nil), 200, "top 0")
	if got := names(t, rec, "TableName"); got != "" || rec.Header().Get("x-ms-continuation-NextTableName") != "" {
		t.Errorf("$top=0: %s", rec.Body)
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/Tables?$filter="+url.QueryEscape("TableName eq 'beta'")+"&$select=TableName", "", nil), 200, "filter")
	if got := names(t, rec, "TableName"); got != "beta" {
		t.Errorf("filtered %s", got)
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/Tables?$top=1", "", map[string]string{"Accept": "application/json;odata=fullmetadata"}), 200, "full")
	if got := rec.Body.String(); !strings.Contains(got, `"odata.id":"`+base+`/Tables('alpha')","odata.editLink":"Tables('alpha')","TableName":"alpha"`) {
		t.Errorf("full list %s", got)
	}
	ts.fails(ts.do("GET", "/devstoreaccount1/Tables?$filter="+url.QueryEscape("TableName eq"), "", nil), 400, "InvalidInput", "bad filter")
	ts.fails(ts.do("GET", "/devstoreaccount1/Tables?$top=x", "", nil), 400, "InvalidInput", "bad top")
	ts.fails(ts.do("GET", "/devstoreaccount1/Tables?$select="+url.QueryEscape("a,1b"), "", nil), 400, "InvalidInput", "bad select")
	ts.fails(ts.do("GET", "/devstoreaccount1/Tables?NextTableName=%21%21", "", nil), 400, "InvalidInput", "bad continuation")

	rec = ts.ok(ts.do("GET", "/devstoreaccount1/Tables('beta')", "", nil), 200, "get table")
	if got := rec.Body.String(); got != `{"odata.metadata":"`+base+`/$metadata#Tables/@Element","TableName":"beta"}` {
		t.Errorf("get table %s", got)
	}
	rec = ts.ok(ts.do("DELETE", "/devstoreaccount1/Tables('beta')", "", nil), 204, "delete table")
	if rec.Body.Len() != 0 {
		t.Errorf("delete body %q", rec.Body)
	}
	ts.fails(ts.do("GET", "/devstoreaccount1/Tables('beta')", "", nil), 404, "ResourceNotFound", "get deleted table")
	ts.fails(ts.do("DELETE", "/devstoreaccount1/Tables('beta')", "", nil), 404, "ResourceNotFound", "delete deleted table")
}

func TestEntityAnswers(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("ent")
	loc := base + "/ent(PartitionKey='p',RowKey='r')"
	rec := ts.ok(ts.do("POST", "/devstoreaccount1/ent", `{"PartitionKey":"p","RowKey":"r","A":1}`, nil), 201, "insert")
	etag := rec.Header().Get("ETag")
	if !strings.HasPrefix(etag, `W/"datetime'`) || rec.Header().Get("Location") != loc {
		t.Errorf("insert: ETag %q Location %q", etag, rec.Header().Get("Location"))
	}
	m := decode(t, rec)
	if m["odata.metadata"] != base+"/$metadata#ent/@Element" || m["A"] != 1.0 || m["RowKey"] != "r" || m["odata.etag"] != etag {
		t.Errorf("insert body %s", rec.Body)
	}
	rec = ts.ok(ts.do("POST", "/devstoreaccount1/ent", `{"PartitionKey":"p","RowKey":"quiet"}`, map[string]string{"Prefer": "return-no-content"}), 204, "insert no content")
	if rec.Header().Get("Preference-Applied") != "return-no-content" || rec.Header().Get("DataServiceId") != base+"/ent(PartitionKey='p',RowKey='quiet')" || rec.Body.Len() != 0 {
		t.Errorf("insert 204: %v %q", rec.Header(), rec.Body)
	}
	rec = ts.ok(ts.do("POST", "/devstoreaccount1/ent", `{"PartitionKey":"p","RowKey":"loud"}`, map[string]string{"Prefer": "return-content", "Accept": "application/json;odata=nometadata"}), 201, "insert content")
	if rec.Header().Get("Preference-Applied") != "return-content" || strings.Contains(rec.Body.String(), "odata.") {
		t.Errorf("insert return-content: %v %s", rec.Header(), rec.Body)
	}
	ts.fails(ts.do("POST", "/devstoreaccount1/ent", `{"PartitionKey":"p","RowKey":"r"}`, nil), 409, "EntityAlreadyExists", "insert twice")
	ts.fails(ts.do("POST", "/devstoreaccount1/ent", ` `, nil), 400, "PropertiesNeedValue", "insert without body")
	ts.fails(ts.do("POST", "/devstoreaccount1/ent", `{"PartitionKey":"p"}`, nil), 400, "PropertiesNeedValue", "insert without RowKey")
	ts.fails(ts.do("POST", "/devstoreaccount1/ent", `{"RowKey":"p"}`, nil), 400, "PropertiesNeedValue", "insert without PartitionKey")
	ts.fails(ts.do("POST", "/devstoreaccount1/nosuch", `{"PartitionKey":"p","RowKey":"r"}`, nil), 404, "TableNotFound", "insert into a missing table")
	ts.fails(ts.do("POST", "/devstoreaccount1/ent", `<entry/>`, map[string]string{"Content-Type": "application/atom+xml"}), 415, "AtomFormatNotSupported", "Atom insert")

	// Reads: the ETag of the write, metadata levels, $select.
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", "", nil), 200, "get")
	if rec.Header().Get("ETag") != etag || decode(t, rec)["odata.metadata"] != base+"/$metadata#ent/@Element" {
		t.Errorf("get: ETag %q body %s", rec.Header().Get("ETag"), rec.Body)
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')?$select=A", "", nil), 200, "get select")
	if m := decode(t, rec); m["odata.metadata"] != base+"/$metadata#ent/@Element&$select=A" || m["A"] != 1.0 || m["RowKey"] != nil {
		t.Errorf("get $select: %s", rec.Body)
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')?$format=application/json;odata=fullmetadata", "", nil), 200, "get full")
	if m := decode(t, rec); m["odata.id"] != loc || m["odata.editLink"] != "ent(PartitionKey='p',RowKey='r')" || m["odata.type"] != "devstoreaccount1.ent" {
		t.Errorf("get full: %s", rec.Body)
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", "", map[string]string{"Accept": "application/json;odata=nometadata"}), 200, "get none")
	if strings.Contains(rec.Body.String(), "odata.") {
		t.Errorf("get nometadata: %s", rec.Body)
	}
	ts.fails(ts.do("GET", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')?$select="+url.QueryEscape("A,-"), "", nil), 400, "InvalidInput", "get bad select")
	ts.fails(ts.do("GET", "/devstoreaccount1/ent(PartitionKey='p',RowKey='nope')", "", nil), 404, "ResourceNotFound", "get missing")
	ts.fails(ts.do("GET", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')?$format=xml", "", nil), 400, "InvalidInput", "bad $format")

	// Conditional writes.
	ts.fails(ts.do("PUT", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", `{"B":2}`, map[string]string{"If-Match": `W/"datetime'2000-01-01T00%3A00%3A00Z'"`}), 412, "UpdateConditionNotSatisfied", "replace stale")
	ts.fails(ts.do("PUT", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", `{"B":2}`, map[string]string{"If-Match": "nonsense"}), 400, "InvalidInput", "replace bad ETag")
	ts.fails(ts.do("PUT", "/devstoreaccount1/ent(PartitionKey='p',RowKey='new')", `{"B":2}`, map[string]string{"If-Match": "*"}), 404, "ResourceNotFound", "replace missing")
	ts.fails(ts.do("PUT", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", ``, nil), 400, "InvalidInput", "replace without body")
	rec = ts.ok(ts.do("PUT", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", `{"B":2}`, map[string]string{"If-Match": etag}), 204, "replace")
	etag2 := rec.Header().Get("ETag")
	if etag2 == "" || etag2 == etag || rec.Body.Len() != 0 {
		t.Errorf("replace: ETag %q after %q", etag2, etag)
	}
	ts.ok(ts.do("MERGE", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", `{"C":3}`, map[string]string{"If-Match": "*"}), 204, "merge")
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", "", nil), 200, "get merged")
	if m := decode(t, rec); m["A"] != nil || m["B"] != 2.0 || m["C"] != 3.0 {
		t.Errorf("after replace and merge: %s", rec.Body)
	}
	ts.ok(ts.do("PATCH", "/devstoreaccount1/ent(PartitionKey='p',RowKey='upserted')", `{"D":4}`, nil), 204, "insert-or-merge")
	ts.ok(ts.do("PUT", "/devstoreaccount1/ent(PartitionKey='p',RowKey='replaced')", `{"E":5}`, nil), 204, "insert-or-replace")
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/ent(PartitionKey='p',RowKey='upserted')", "", nil), 200, "get upserted")
	if decode(t, rec)["D"] != 4.0 {
		t.Errorf("insert-or-merge stored %s", rec.Body)
	}

	// Deletes need exactly one If-Match.
	ts.fails(ts.do("DELETE", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", "", nil), 400, "MissingRequiredHeader", "delete without If-Match")
	r := signed("DELETE", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", "", nil)
	r.Header.Add("If-Match", "*")
	r.Header.Add("If-Match", "*")
	rec = httptest.NewRecorder()
	ts.h.ServeHTTP(rec, r)
	ts.fails(rec, 400, "InvalidInput", "delete with two If-Match")
	rec = ts.ok(ts.do("DELETE", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", "", map[string]string{"If-Match": "*"}), 204, "delete")
	if rec.Header().Get("ETag") != "" {
		t.Errorf("delete answered ETag %q", rec.Header().Get("ETag"))
	}
	ts.fails(ts.do("GET", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", "", nil), 404, "ResourceNotFound", "get deleted")
	ts.fails(ts.do("DELETE", "/devstoreaccount1/ent(PartitionKey='p',RowKey='r')", "", map[string]string{"If-Match": "*"}), 404, "ResourceNotFound", "delete deleted")
}

func TestQueryEntitiesPages(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("qry")
	for i := range 5 {
		ts.ok(ts.do("POST", "/devstoreaccount1/qry", fmt.Sprintf(`{"PartitionKey":"p%d","RowKey":"r%d","N":%d}`, i%2, i, i), nil), 201, "insert")
	}
	rec := ts.ok(ts.do("GET", "/devstoreaccount1/qry()", "", nil), 200, "scan")
	if got := names(t, rec, "N"); got != "0,2,4,1,3" {
		t.Errorf("scan order %s", got)
	}
	if m := decode(t, rec); m["odata.metadata"] != base+"/$metadata#qry" {
		t.Errorf("scan metadata %v", m["odata.metadata"])
	}
	plan := rec.Header().Get("x-tablo-query-plan")
	if !strings.Contains(plan, "; scanned=5; returned=5") {
		t.Errorf("plan %q", plan)
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/qry?$filter="+url.QueryEscape("PartitionKey eq 'p1' and N gt 1")+"&$select=N", "", nil), 200, "filter")
	if got := names(t, rec, "N"); got != "3" || decode(t, rec)["odata.metadata"] != base+"/$metadata#qry&$select=N" {
		t.Errorf("filtered %s", rec.Body)
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/qry?$filter="+url.QueryEscape("  "), "", nil), 200, "blank filter")
	if got := names(t, rec, "N"); got != "0,2,4,1,3" {
		t.Errorf("blank filter %s", got)
	}
	// Paging: each continuation resumes after the last entity returned.
	var all []string
	path := "/devstoreaccount1/qry?$top=2"
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		rec = ts.ok(ts.do("GET", path, "", map[string]string{"Accept": "application/json;odata=nometadata"}), 200, "page")
		if strings.Contains(rec.Body.String(), "odata.") {
			t.Errorf("nometadata page %s", rec.Body)
		}
		all = append(all, names(t, rec, "N"))
		npk, nrk := rec.Header().Get("x-ms-continuation-NextPartitionKey"), rec.Header().Get("x-ms-continuation-NextRowKey")
		if npk == "" {
			break
		}
		path = "/devstoreaccount1/qry?$top=2&NextPartitionKey=" + url.QueryEscape(npk) + "&NextRowKey=" + url.QueryEscape(nrk)
	}
	if got := strings.Join(all, "|"); got != "0,2|4,1|3" {
		t.Errorf("pages %s", got)
	}
	// A continuation without NextRowKey starts at the beginning of its partition.
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/qry?NextPartitionKey="+url.QueryEscape(query.EncodeToken("p1")), "", nil), 200, "partition continuation")
	if got := names(t, rec, "N"); got != "1,3" {
		t.Errorf("from p1: %s", got)
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/qry?$top=0", "", nil), 200, "top 0")
	if got := names(t, rec, "N"); got != "" || rec.Header().Get("x-ms-continuation-NextPartitionKey") != "" {
		t.Errorf("$top=0: %s", rec.Body)
	}
	ts.fails(ts.do("GET", "/devstoreaccount1/nosuch?$top=0", "", nil), 404, "TableNotFound", "$top=0 on a missing table")
	ts.fails(ts.do("GET", "/devstoreaccount1/nosuch()", "", nil), 404, "TableNotFound", "query of a missing table")
	ts.fails(ts.do("GET", "/devstoreaccount1/qry?$top=1001", "", nil), 400, "InvalidInput", "top too large")
	ts.fails(ts.do("GET", "/devstoreaccount1/qry?$filter="+url.QueryEscape("N eq"), "", nil), 400, "InvalidInput", "bad filter")
	ts.fails(ts.do("GET", "/devstoreaccount1/qry?$select="+url.QueryEscape("9"), "", nil), 400, "InvalidInput", "bad select")
	ts.fails(ts.do("GET", "/devstoreaccount1/qry?NextPartitionKey=%21%21", "", nil), 400, "InvalidInput", "bad NextPartitionKey")
	ts.fails(ts.do("GET", "/devstoreaccount1/qry?NextPartitionKey="+url.QueryEscape(query.EncodeToken("p1"))+"&NextRowKey=%21%21", "", nil), 400, "InvalidInput", "bad NextRowKey")
}

func TestXHTTPMethod(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("xhm")
	path := "/devstoreaccount1/xhm(PartitionKey='p',RowKey='r')"
	ts.ok(ts.do("POST", path, `{"A":1}`, map[string]string{"X-HTTP-Method": " merge "}), 204, "tunnelled merge")
	ts.ok(ts.do("POST", path, `{"B":2}`, map[string]string{"X-HTTP-Method": "MERGE"}), 204, "tunnelled merge again")
	rec := ts.ok(ts.do("GET", path, "", nil), 200, "get")
	if m := decode(t, rec); m["A"] != 1.0 || m["B"] != 2.0 {
		t.Errorf("after two merges %s", rec.Body)
	}
	ts.ok(ts.do("POST", path, `{"C":3}`, map[string]string{"X-HTTP-Method": "PUT"}), 204, "tunnelled put")
	ts.ok(ts.do("POST", path, ``, map[string]string{"X-HTTP-Method": "DELETE", "If-Match": "*"}), 204, "tunnelled delete")
	ts.fails(ts.do("GET", path, "", nil), 404, "ResourceNotFound", "after tunnelled delete")
	ts.fails(ts.do("PUT", path, `{}`, map[string]string{"X-HTTP-Method": "MERGE"}), 400, "XMethodNotUsingPost", "tunnel over PUT")
	ts.fails(ts.do("POST", path, `{}`, map[string]string{"X-HTTP-Method": "MERGE,PUT"}), 400, "XMethodIncorrectCount", "two methods")
	ts.fails(ts.do("POST", path, `{}`, map[string]string{"X-HTTP-Method": "GET"}), 400, "XMethodIncorrectValue", "tunnelled GET")
	r := signed("POST", path, `{}`, nil)
	r.Header.Add("X-HTTP-Method", "MERGE")
	r.Header.Add("X-HTTP-Method", "MERGE")
	rec = httptest.NewRecorder()
	ts.h.ServeHTTP(rec, r)
	ts.fails(rec, 400, "XMethodIncorrectCount", "two X-HTTP-Method headers")
}

func TestRouteErrors(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("rte")
	for _, tc := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/devstoreaccount1/", 400, "InvalidQueryParameterValue"},
		{"GET", "/devstoreaccount1/?restype=service&comp=nonsense", 400, "InvalidQueryParameterValue"},
		{"DELETE", "/devstoreaccount1/?restype=service&comp=properties", 405, "UnsupportedHttpVerb"},
		{"PUT", "/devstoreaccount1/?restype=service&comp=stats", 405, "UnsupportedHttpVerb"},
		{"PUT", "/devstoreaccount1/Tables", 405, "MethodNotAllowed"},
		{"PUT", "/devstoreaccount1/Tables('rte')", 405, "MethodNotAllowed"},
		{"GET", "/devstoreaccount1/$batch", 405, "MethodNotAllowed"},
		{"DELETE", "/devstoreaccount1/rte?comp=acl", 405, "UnsupportedHttpVerb"},
		{"GET", "/devstoreaccount1/rte?comp=list", 400, "InvalidQueryParameterValue"},
		{"PUT", "/devstoreaccount1/rte", 405, "MethodNotAllowed"},
		{"POST", "/devstoreaccount1/rte(PartitionKey='p',RowKey='r')", 405, "MethodNotAllowed"},
		{"GET", "/devstoreaccount1/rte?$orderby=N", 501, "NotImplemented"},
		{"GET", "/devstoreaccount1/rte?$skip=1", 501, "NotImplemented"},
	} {
		ts.fails(ts.do(tc.method, tc.path, "", nil), tc.status, tc.code, tc.method+" "+tc.path)
	}
	// The secondary endpoint serves reads and refuses writes.
	ts.ok(ts.do("GET", "/devstoreaccount1-secondary/Tables", "", nil), 200, "secondary read")
	for _, w := range []struct{ method, path, body string }{
		{"POST", "/devstoreaccount1-secondary/Tables", `{"TableName":"s"}`},
		{"DELETE", "/devstoreaccount1-secondary/Tables('rte')", ""},
		{"POST", "/devstoreaccount1-secondary/rte", `{"PartitionKey":"p","RowKey":"r"}`},
		{"PUT", "/devstoreaccount1-secondary/rte(PartitionKey='p',RowKey='r')", `{}`},
		{"MERGE", "/devstoreaccount1-secondary/rte(PartitionKey='p',RowKey='r')", `{}`},
		{"DELETE", "/devstoreaccount1-secondary/rte(PartitionKey='p',RowKey='r')", ``},
		{"POST", "/devstoreaccount1-secondary/$batch", ``},
		{"PUT", "/devstoreaccount1-secondary/rte?comp=acl", ``},
		{"PUT", "/devstoreaccount1-secondary/?restype=service&comp=properties", ``},
	} {
		ts.fails(ts.do(w.method, w.path, w.body, map[string]string{"If-Match": "*"}), 403, "InsufficientAccountPermissions", "secondary "+w.method+" "+w.path)
	}
	rec := ts.ok(ts.do("GET", "/devstoreaccount1-secondary/?restype=service&comp=stats", "", nil), 200, "stats")
	if !strings.Contains(rec.Body.String(), "<GeoReplication>") {
		t.Errorf("stats %s", rec.Body)
	}
}

// batchBody is a $batch body (boundary "batch_b") holding one changeset ("cs_c") of the
// given sub-requests, each "METHOD url\r\nheaders\r\n\r\nbody" without the MIME part header.
func batchBody(subs ...string) string {
	var b strings.Builder
	b.WriteString("--batch_b\r\nContent-Type: multipart/mixed; boundary=cs_c\r\n\r\n")
	for _, s := range subs {
		b.WriteString("--cs_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" + s + "\r\n")
	}
	b.WriteString("--cs_c--\r\n--batch_b--\r\n")
	return b.String()
}

// sub is one sub-request of a changeset.
func sub(method, target, hdr, body string) string {
	return method + " " + target + " HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\n" + hdr + "\r\n" + body
}

var batchHeader = map[string]string{"Content-Type": "multipart/mixed; boundary=batch_b"}

// subStatuses lists the status line of each sub-response of a batch answer.
func subStatuses(body string) string {
	var out []string
	for _, line := range strings.Split(body, "\r\n") {
		if strings.HasPrefix(line, "HTTP/1.1 ") {
			out = append(out, strings.TrimPrefix(line, "HTTP/1.1 "))
		}
	}
	return strings.Join(out, ",")
}

func TestBatchAnswers(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("bat")
	ts.ok(ts.do("POST", "/devstoreaccount1/bat", `{"PartitionKey":"p","RowKey":"old","V":1}`, nil), 201, "seed")
	ts.ok(ts.do("POST", "/devstoreaccount1/bat", `{"PartitionKey":"p","RowKey":"gone","V":1}`, nil), 201, "seed")
	body := batchBody(
		sub("POST", base+"/bat", "", `{"PartitionKey":"p","RowKey":"a","V":1}`),
		sub("POST", base+"/bat", "Prefer: return-no-content\r\n", `{"PartitionKey":"p","RowKey":"b","V":2}`),
		sub("POST", base+"/bat?$format=application/json;odata=nometadata", "Prefer: return-content\r\n", `{"PartitionKey":"p","RowKey":"c","V":3}`),
		sub("PUT", base+"/bat(PartitionKey='p',RowKey='old')", "If-Match: *\r\n", `{"V":10}`),
		sub("MERGE", base+"/bat(PartitionKey='p',RowKey='d')", "", `{"V":4}`),
		sub("DELETE", base+"/bat(PartitionKey='p',RowKey='gone')", "If-Match: *\r\n", ``),
		sub("POST", "/devstoreaccount1/bat", "Prefer: return-no-content\r\n", `{"PartitionKey":"p","RowKey":"e","V":5}`),
		sub("POST", "bat", "Prefer: return-no-content\r\n", `{"PartitionKey":"p","RowKey":"f","V":6}`),
	)
	rec := ts.ok(ts.do("POST", "/devstoreaccount1/$batch", body, batchHeader), 202, "batch")
	got := rec.Body.String()
	if s := subStatuses(got); s != "201 Created,204 No Content,201 Created,204 No Content,204 No Content,204 No Content,204 No Content,204 No Content" {
		t.Fatalf("sub-responses %s:\n%s", s, got)
	}
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "multipart/mixed; boundary=batchresponse_") {
		t.Errorf("Content-Type %q", rec.Header().Get("Content-Type"))
	}
	for _, want := range []string{
		"Location: " + base + "/bat(PartitionKey='p',RowKey='a')\r\n",
		`{"odata.metadata":"` + base + `/$metadata#bat/@Element",`,
		"DataServiceId: " + base + "/bat(PartitionKey='p',RowKey='b')\r\n",
		"Preference-Applied: return-content\r\n",
		"Content-Type: application/json;odata=nometadata;streaming=true;charset=utf-8\r\n",
		"DataServiceId: " + base + "/bat(PartitionKey='p',RowKey='e')\r\n",
		"DataServiceId: " + base + "/bat(PartitionKey='p',RowKey='f')\r\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("batch answer lacks %q:\n%s", want, got)
		}
	}
	for _, part := range strings.Split(got, "--changesetresponse_") {
		applied := strings.Contains(part, "Preference-Applied: return-content\r\n")
		if strings.Contains(part, `"RowKey":"a"`) && applied || strings.Contains(part, `"RowKey":"c"`) && !applied {
			t.Errorf("Preference-Applied in the wrong sub-response:\n%s", part)
		}
	}
	// Every written entity shares the one Timestamp, and its ETag is in the answer.
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/bat(PartitionKey='p',RowKey='d')", "", nil), 200, "get d")
	etag := rec.Header().Get("ETag")
	if n := strings.Count(got, "ETag: "+etag+"\r\n"); n != 7 {
		t.Errorf("ETag %s appears %d times, want 7:\n%s", etag, n, got)
	}
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/bat()?$select=V", "", nil), 200, "after batch")
	if got := names(t, rec, "V"); got != "1,2,3,4,5,6,10" {
		t.Errorf("stored %s", got)
	}
	ts.fails(ts.do("GET", "/devstoreaccount1/bat(PartitionKey='p',RowKey='gone')", "", nil), 404, "ResourceNotFound", "deleted in batch")

	// Failures: one sub-response naming the failing operation; nothing written.
	for _, tc := range []struct {
		name   string
		subs   []string
		status string
		code   string
		index  int
	}{
		{"duplicate insert", []string{
			sub("POST", base+"/bat", "", `{"PartitionKey":"p","RowKey":"new1"}`),
			sub("POST", base+"/bat", "", `{"PartitionKey":"p","RowKey":"a"}`)}, "409 Conflict", "EntityAlreadyExists", 1},
		{"two tables", []string{
			sub("POST", base+"/bat", "", `{"PartitionKey":"p","RowKey":"new1"}`),
			sub("POST", base+"/other", "", `{"PartitionKey":"p","RowKey":"new2"}`)}, "400 Bad Request", "InvalidInput", 1},
		{"two partitions", []string{
			sub("POST", base+"/bat", "", `{"PartitionKey":"p","RowKey":"new1"}`),
			sub("POST", base+"/bat", "", `{"PartitionKey":"q","RowKey":"new2"}`)}, "400 Bad Request", "CommandsInBatchActOnDifferentPartitions", 1},
		{"same row twice", []string{
			sub("POST", base+"/bat", "", `{"PartitionKey":"p","RowKey":"new1"}`),
			sub("DELETE", base+"/bat(PartitionKey='p',RowKey='new1')", "If-Match: *\r\n", ``)}, "400 Bad Request", "InvalidDuplicateRow", 1},
		{"partition error before an undecodable operation", []string{
			sub("POST", base+"/bat", "", `{"PartitionKey":"p","RowKey":"new1"}`),
			sub("POST", base+"/bat", "", `{"PartitionKey":"q","RowKey":"new2"}`),
			sub("POST", base+"/bat", "", `{"PartitionKey":`)}, "400 Bad Request", "CommandsInBatchActOnDifferentPartitions", 1},
		{"undecodable body", []string{
			sub("POST", base+"/bat", "", `{"PartitionKey":"p","RowKey":"new1"}`),
			sub("POST", base+"/bat", "", `{"PartitionKey":`)}, "400 Bad Request", "InvalidInput", 1},
		{"missing table", []string{
			sub("POST", base+"/nosuch", "", `{"PartitionKey":"p","RowKey":"new1"}`)}, "404 Not Found", "TableNotFound", 0},
		{"stale ETag", []string{
			sub("POST", base+"/bat", "", `{"PartitionKey":"p","RowKey":"new1"}`),
			sub("PUT", base+"/bat(PartitionKey='p',RowKey='a')", "If-Match: W/\"datetime'2000-01-01T00%3A00%3A00Z'\"\r\n", `{}`)}, "412 Precondition Failed", "UpdateConditionNotSatisfied", 1},
		{"delete without If-Match", []string{
			sub("DELETE", base+"/bat(PartitionKey='p',RowKey='a')", "", ``)}, "400 Bad Request", "MissingRequiredHeader", 0},
		{"table operation in a changeset", []string{
			sub("POST", base+"/Tables", "", `{"TableName":"nope"}`)}, "400 Bad Request", "InvalidInput", 0},
		{"PUT on the entity set", []string{
			sub("PUT", base+"/bat", "", `{}`)}, "400 Bad Request", "InvalidInput", 0},
		{"another account", []string{
			sub("POST", "http://127.0.0.1:10002/otheraccount/bat", "", `{"PartitionKey":"p","RowKey":"new1"}`)}, "400 Bad Request", "InvalidInput", 0},
		{"bad path escape", []string{
			sub("POST", base+"/bat%zz", "", `{"PartitionKey":"p","RowKey":"new1"}`)}, "400 Bad Request", "InvalidUri", 0},
		{"bad resource", []string{
			sub("POST", base+"/b-t", "", `{"PartitionKey":"p","RowKey":"new1"}`)}, "400 Bad Request", "InvalidResourceName", 0},
		{"bad query", []string{
			sub("POST", base+"/bat?a=%zz", "", `{"PartitionKey":"p","RowKey":"new1"}`)}, "400 Bad Request", "InvalidQueryParameterValue", 0},
		{"bad format", []string{
			sub("POST", base+"/bat?$format=xml", "", `{"PartitionKey":"p","RowKey":"new1"}`)}, "400 Bad Request", "InvalidInput", 0},
		{"bad If-Match", []string{
			sub("PUT", base+"/bat(PartitionKey='p',RowKey='a')", "If-Match: nonsense\r\n", `{}`)}, "400 Bad Request", "InvalidInput", 0},
		{"GET in a changeset", []string{
			sub("POST", base+"/bat", "", `{"PartitionKey":"p","RowKey":"new1"}`),
			sub("GET", base+"/bat(PartitionKey='p',RowKey='a')", "", ``)}, "400 Bad Request", "InvalidInput", 1},
	} {
		rec := ts.ok(ts.do("POST", "/devstoreaccount1/$batch", batchBody(tc.subs...), batchHeader), 202, tc.name)
		got := rec.Body.String()
		if s := subStatuses(got); s != tc.status || !strings.Contains(got, `"code":"`+tc.code+`"`) ||
			!strings.Contains(got, fmt.Sprintf(`"value":"%d:`, tc.index)) {
			t.Errorf("%s: %s, want %s %s at %d:\n%s", tc.name, s, tc.status, tc.code, tc.index, got)
		}
	}
	ts.fails(ts.do("GET", "/devstoreaccount1/bat(PartitionKey='p',RowKey='new1')", "", nil), 404, "ResourceNotFound", "written by a failed batch")
	ts.fails(ts.do("POST", "/devstoreaccount1/$batch", "nonsense", map[string]string{"Content-Type": "text/plain"}), 400, "InvalidInput", "not multipart")

	// An empty changeset is answered with an empty changeset.
	rec = ts.ok(ts.do("POST", "/devstoreaccount1/$batch", batchBody(), batchHeader), 202, "empty changeset")
	if !strings.Contains(rec.Body.String(), "Content-Type: multipart/mixed; boundary=changesetresponse_") || subStatuses(rec.Body.String()) != "" {
		t.Errorf("empty changeset: %s", rec.Body)
	}
}

// retrieveBody is a $batch holding one bare GET (the legacy retrieve form).
func retrieveBody(target, accept string) string {
	return "--batch_b\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nGET " + target +
		" HTTP/1.1\r\nAccept: " + accept + "\r\n\r\n--batch_b--\r\n"
}

func TestBatchRetrieve(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("ret")
	rec := ts.ok(ts.do("POST", "/devstoreaccount1/ret", `{"PartitionKey":"p","RowKey":"r","V":7}`, nil), 201, "seed")
	etag := rec.Header().Get("ETag")
	rec = ts.ok(ts.do("POST", "/devstoreaccount1/$batch", retrieveBody(base+"/ret(PartitionKey='p',RowKey='r')", "application/json;odata=minimalmetadata"), batchHeader), 202, "retrieve")
	got := rec.Body.String()
	if subStatuses(got) != "200 OK" || !strings.Contains(got, "ETag: "+etag+"\r\n") ||
		!strings.Contains(got, `{"odata.metadata":"`+base+`/$metadata#ret/@Element",`) || !strings.Contains(got, `"V":7`) ||
		strings.Contains(got, "changesetresponse_") {
		t.Errorf("retrieve answer:\n%s", got)
	}
	rec = ts.ok(ts.do("POST", "/devstoreaccount1/$batch", retrieveBody("/devstoreaccount1/ret(PartitionKey='p',RowKey='r')?$format=application/json;odata=nometadata", "application/json"), batchHeader), 202, "retrieve nometadata")
	if got := rec.Body.String(); subStatuses(got) != "200 OK" || strings.Contains(got, "odata.metadata") ||
		!strings.Contains(got, "Content-Type: application/json;odata=nometadata;streaming=true;charset=utf-8\r\n") {
		t.Errorf("retrieve nometadata:\n%s", got)
	}
	for _, tc := range []struct{ target, status, code string }{
		{base + "/ret(PartitionKey='p',RowKey='nope')", "404 Not Found", "ResourceNotFound"},
		{base + "/ret", "400 Bad Request", "InvalidInput"},
		{"http://127.0.0.1:10002/other/ret(PartitionKey='p',RowKey='r')", "400 Bad Request", "InvalidInput"},
		{base + "/ret%zz", "400 Bad Request", "InvalidUri"},
		{base + "/r-t(PartitionKey='p',RowKey='r')", "400 Bad Request", "InvalidResourceName"},
		{base + "/ret(PartitionKey='p',RowKey='r')?a=%zz", "400 Bad Request", "InvalidQueryParameterValue"},
		{base + "/ret(PartitionKey='p',RowKey='r')?$format=xml", "400 Bad Request", "InvalidInput"},
	} {
		rec := ts.ok(ts.do("POST", "/devstoreaccount1/$batch", retrieveBody(tc.target, "application/json"), batchHeader), 202, "retrieve "+tc.target)
		if got := rec.Body.String(); subStatuses(got) != tc.status || !strings.Contains(got, `"code":"`+tc.code+`"`) {
			t.Errorf("retrieve %s: %s", tc.target, got)
		}
	}
}

// tableSAS is a service SAS for tableName signed with the development key.
func tableSAS(tableName, perms, spk, epk, si string) string {
	s := auth.SAS{Kind: auth.ServiceSAS, Version: "2019-02-02", Permissions: perms, TableName: tableName,
		StartPK: spk, EndPK: epk, Identifier: si}
	if si == "" {
		s.Expiry = time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")
	}
	s.Sign("devstoreaccount1", auth.DevAccount().Keys[0])
	return s.Query().Encode()
}

func TestSASOnEntities(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("sas")
	for _, pk := range []string{"a", "b", "c"} {
		ts.ok(ts.do("POST", "/devstoreaccount1/sas", `{"PartitionKey":"`+pk+`","RowKey":"r"}`, nil), 201, "seed "+pk)
	}
	ranged := tableSAS("sas", "raud", "b", "b", "")
	// A query sees only the range; a point read, insert, update or delete outside it is
	// refused before the entity's existence shows.
	rec := ts.ok(ts.sas("GET", "/devstoreaccount1/sas()", ranged, "", nil), 200, "ranged query")
	if got := names(t, rec, "PartitionKey"); got != "b" {
		t.Errorf("ranged query saw %s", got)
	}
	ts.ok(ts.sas("GET", "/devstoreaccount1/sas(PartitionKey='b',RowKey='r')", ranged, "", nil), 200, "ranged get")
	ts.fails(ts.sas("GET", "/devstoreaccount1/sas(PartitionKey='a',RowKey='missing')", ranged, "", nil), 403, "AuthorizationFailure", "get outside the range")
	ts.fails(ts.sas("POST", "/devstoreaccount1/sas", ranged, `{"PartitionKey":"c","RowKey":"new"}`, nil), 403, "AuthorizationFailure", "insert outside the range")
	ts.fails(ts.sas("PUT", "/devstoreaccount1/sas(PartitionKey='c',RowKey='r')", ranged, `{}`, nil), 403, "AuthorizationFailure", "upsert outside the range")
	ts.fails(ts.sas("DELETE", "/devstoreaccount1/sas(PartitionKey='a',RowKey='r')", ranged, ``, map[string]string{"If-Match": "*"}), 403, "AuthorizationFailure", "delete outside the range")
	ts.ok(ts.sas("POST", "/devstoreaccount1/sas", ranged, `{"PartitionKey":"b","RowKey":"new"}`, nil), 201, "insert in the range")
	rec = ts.ok(ts.sas("GET", "/devstoreaccount1/sas()", tableSAS("sas", "r", "b", "", ""), "", nil), 200, "open-ended range")
	if got := names(t, rec, "PartitionKey"); got != "b,b,c" {
		t.Errorf("range from b saw %s", got)
	}
	rec = ts.ok(ts.sas("GET", "/devstoreaccount1/sas()", tableSAS("sas", "r", "", "a", ""), "", nil), 200, "range up to a")
	if got := names(t, rec, "PartitionKey"); got != "a" {
		t.Errorf("range up to a saw %s", got)
	}
	// Permissions: an update needs u, an upsert a and u, a merge with If-Match u.
	addOnly := tableSAS("sas", "a", "", "", "")
	ts.fails(ts.sas("PUT", "/devstoreaccount1/sas(PartitionKey='a',RowKey='r')", addOnly, `{}`, map[string]string{"If-Match": "*"}), 403, "AuthorizationPermissionMismatch", "update with add only")
	ts.fails(ts.sas("PUT", "/devstoreaccount1/sas(PartitionKey='a',RowKey='r')", tableSAS("sas", "u", "", "", ""), `{}`, nil), 403, "AuthorizationPermissionMismatch", "upsert with update only")
	ts.ok(ts.sas("MERGE", "/devstoreaccount1/sas(PartitionKey='a',RowKey='r')", tableSAS("sas", "u", "", "", ""), `{"M":1}`, map[string]string{"If-Match": "*"}), 204, "merge with update")
	ts.fails(ts.sas("GET", "/devstoreaccount1/sas()", addOnly, "", nil), 403, "AuthorizationPermissionMismatch", "query with add only")
	ts.fails(ts.sas("GET", "/devstoreaccount1/sas()", tableSAS("other", "r", "", "", ""), "", nil), 403, "AuthorizationFailure", "token of another table")
}

func TestSASInBatch(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("sbat")
	ts.ok(ts.do("POST", "/devstoreaccount1/sbat", `{"PartitionKey":"a","RowKey":"r"}`, nil), 201, "seed")
	ts.ok(ts.do("POST", "/devstoreaccount1/sbat", `{"PartitionKey":"b","RowKey":"r"}`, nil), 201, "seed")
	send := func(token, body string) string {
		t.Helper()
		return ts.ok(ts.sas("POST", "/devstoreaccount1/$batch", token, body, batchHeader), 202, "batch").Body.String()
	}
	check := func(what, got, status, code string) {
		t.Helper()
		if subStatuses(got) != status || code != "" && !strings.Contains(got, `"code":"`+code+`"`) {
			t.Errorf("%s:\n%s", what, got)
		}
	}
	insert := sub("POST", base+"/sbat", "Prefer: return-no-content\r\n", `{"PartitionKey":"a","RowKey":"n1"}`)
	update := sub("PUT", base+"/sbat(PartitionKey='a',RowKey='r')", "If-Match: *\r\n", `{}`)
	check("insert with add", send(tableSAS("sbat", "a", "", "", ""), batchBody(insert)), "204 No Content", "")
	check("update with add", send(tableSAS("sbat", "a", "", "", ""), batchBody(update)), "403 Forbidden", "AuthorizationPermissionMismatch")
	check("update outside the range", send(tableSAS("sbat", "au", "b", "b", ""), batchBody(update)), "403 Forbidden", "AuthorizationFailure")
	check("update in the range", send(tableSAS("sbat", "u", "a", "a", ""), batchBody(update)), "204 No Content", "")
	get := func(pk string) string {
		return retrieveBody(base+"/sbat(PartitionKey='"+pk+"',RowKey='r')", "application/json")
	}
	check("retrieve with read", send(tableSAS("sbat", "r", "", "", ""), get("a")), "200 OK", "")
	check("retrieve with add only", send(tableSAS("sbat", "a", "", "", ""), get("a")), "403 Forbidden", "AuthorizationPermissionMismatch")
	check("retrieve outside the range", send(tableSAS("sbat", "r", "a", "a", ""), get("b")), "403 Forbidden", "AuthorizationFailure")
}

const aclXML = `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>readers</Id><AccessPolicy>` +
	`<Start>2020-01-01T00:00:00Z</Start><Expiry>2099-01-01T00:00:00Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`

func TestStoredAccessPolicy(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("pol")
	ts.ok(ts.do("POST", "/devstoreaccount1/pol", `{"PartitionKey":"a","RowKey":"r"}`, nil), 201, "seed")
	rec := ts.ok(ts.do("GET", "/devstoreaccount1/pol?comp=acl", "", nil), 200, "empty ACL")
	if !strings.Contains(rec.Body.String(), "<SignedIdentifiers") || strings.Contains(rec.Body.String(), "<Id>") ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/xml") {
		t.Errorf("empty ACL: %v %s", rec.Header(), rec.Body)
	}
	token := tableSAS("pol", "", "", "", "readers")
	ts.fails(ts.sas("GET", "/devstoreaccount1/pol()", token, "", nil), 403, "AuthenticationFailed", "policy not yet stored")
	ts.ok(ts.do("PUT", "/devstoreaccount1/pol?comp=acl", aclXML, map[string]string{"Content-Type": "application/xml"}), 204, "set ACL")
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/pol?comp=acl", "", nil), 200, "get ACL")
	if !strings.Contains(rec.Body.String(), "<Id>readers</Id>") || !strings.Contains(rec.Body.String(), "<Permission>r</Permission>") {
		t.Errorf("ACL %s", rec.Body)
	}
	rec = ts.ok(ts.sas("GET", "/devstoreaccount1/pol()", token, "", nil), 200, "query through the policy")
	if names(t, rec, "PartitionKey") != "a" {
		t.Errorf("through the policy: %s", rec.Body)
	}
	ts.fails(ts.sas("POST", "/devstoreaccount1/pol", token, `{"PartitionKey":"a","RowKey":"x"}`, nil), 403, "AuthorizationPermissionMismatch", "insert through a read policy")
	ts.fails(ts.sas("GET", "/devstoreaccount1/pol()", tableSAS("pol", "", "", "", "writers"), "", nil), 403, "AuthenticationFailed", "unknown policy")
	// Clearing the policies revokes every token that names one, at once.
	ts.ok(ts.do("PUT", "/devstoreaccount1/pol?comp=acl", ``, nil), 204, "clear ACL")
	ts.fails(ts.sas("GET", "/devstoreaccount1/pol()", token, "", nil), 403, "AuthenticationFailed", "policy removed")
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/pol?comp=acl", "", nil), 200, "cleared ACL")
	if strings.Contains(rec.Body.String(), "<Id>") {
		t.Errorf("cleared ACL %s", rec.Body)
	}
	ts.fails(ts.do("PUT", "/devstoreaccount1/pol?comp=acl", `<SignedIdentifiers><SignedIdentifier>`, nil), 400, "InvalidXmlDocument", "broken ACL")
	ts.fails(ts.do("GET", "/devstoreaccount1/nosuch?comp=acl", "", nil), 404, "TableNotFound", "ACL of a missing table")
	ts.fails(ts.do("PUT", "/devstoreaccount1/nosuch?comp=acl", aclXML, nil), 404, "TableNotFound", "set ACL of a missing table")
}

// tableView is the partition layer's view of one table, as the admin API shows it.
func (ts *testServer) tableView(name string) partition.TableView {
	ts.t.Helper()
	for _, tv := range ts.parts.Snapshot(time.Now(), 10).Tables {
		if tv.Name == name {
			return tv
		}
	}
	ts.t.Fatalf("table %s not in the partition layer's snapshot", name)
	return partition.TableView{}
}

// TestPartitionLayerSeesRequests: every request reaches the partition layer with its kind,
// the span a query plans, and what it returned, as the admin API shows them.
func TestPartitionLayerSeesRequests(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("plr")
	for i := range 6 {
		ts.ok(ts.do("POST", "/devstoreaccount1/plr", fmt.Sprintf(`{"PartitionKey":"p%d","RowKey":"r%d"}`, i%3, i), nil), 201, "insert")
	}
	ts.ok(ts.do("GET", "/devstoreaccount1/plr(PartitionKey='p0',RowKey='r0')", "", nil), 200, "get")
	ts.ok(ts.do("PUT", "/devstoreaccount1/plr(PartitionKey='p0',RowKey='r0')", `{}`, nil), 204, "upsert")
	ts.ok(ts.do("DELETE", "/devstoreaccount1/plr(PartitionKey='p0',RowKey='r0')", ``, map[string]string{"If-Match": "*"}), 204, "delete")
	ts.ok(ts.do("POST", "/devstoreaccount1/$batch", batchBody(sub("POST", base+"/plr", "", `{"PartitionKey":"p0","RowKey":"b"}`)), batchHeader), 202, "batch")
	filters := map[string]string{
		"PartitionKey eq 'p1' and RowKey eq 'r1'":       "row-range",
		"PartitionKey eq 'p1' and RowKey ge 'r'":        "row-range",
		"PartitionKey eq 'p1'":                          "partition",
		"PartitionKey ge 'p1' and PartitionKey lt 'p2'": "partition-range",
		"PartitionKey eq 'p0' or PartitionKey eq 'p2'":  "union",
		"RowKey eq 'r1'":                                "table-scan",
		"PartitionKey eq 'a' and PartitionKey eq 'b'":   "other",
	}
	for f := range filters {
		ts.ok(ts.do("GET", "/devstoreaccount1/plr()?$filter="+url.QueryEscape(f), "", nil), 200, f)
	}
	ts.ok(ts.do("GET", "/devstoreaccount1/plr()", "", nil), 200, "scan")
	ts.ok(ts.do("GET", "/devstoreaccount1/plr?comp=acl", "", nil), 200, "get ACL")
	tv := ts.tableView("plr")
	want := map[string]uint64{"insert": 6, "point-read": 1, "update": 1, "delete": 1, "batch": 1,
		"row-range": 2, "partition": 1, "partition-range": 1, "union": 1, "table-scan": 2, "other": 2}
	for k, n := range want {
		if tv.Kinds[k] != n {
			t.Errorf("requests of kind %s: %d, want %d (all: %v)", k, tv.Kinds[k], n, tv.Kinds)
		}
	}
	// The seven queries over a span returned entities from 1, 1, 1, 1, 2 (p0 or p2), 1 (the
	// RowKey scan) and 3 (the full scan) partitions; the empty plan touches none and is no
	// query: 10 partitions over 7 queries.
	if tv.PartsPerQ != 10.0/7 {
		t.Errorf("partitions returned per query %v, want %v", tv.PartsPerQ, 10.0/7)
	}
	if tv.BytesIn == 0 || tv.BytesOut == 0 {
		t.Errorf("bytes in %d, out %d", tv.BytesIn, tv.BytesOut)
	}
	// The query plan names the range partitions a query touched.
	rec := ts.ok(ts.do("GET", "/devstoreaccount1/plr()?$filter="+url.QueryEscape("PartitionKey eq 'p1'"), "", nil), 200, "plan")
	if plan := rec.Header().Get("x-tablo-query-plan"); !strings.Contains(plan, "; ranges=1 r0@s") || !strings.HasSuffix(plan, "; scanned=2; returned=2") {
		t.Errorf("plan %q", plan)
	}
	// A continuation narrows the span the layer admits (from the next key on).
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/plr()?$top=1&$filter="+url.QueryEscape("PartitionKey ge 'p0'"), "", nil), 200, "page 1")
	npk := rec.Header().Get("x-ms-continuation-NextPartitionKey")
	nrk := rec.Header().Get("x-ms-continuation-NextRowKey")
	rec = ts.ok(ts.do("GET", "/devstoreaccount1/plr()?$top=1&$filter="+url.QueryEscape("PartitionKey ge 'p0'")+"&NextPartitionKey="+url.QueryEscape(npk)+"&NextRowKey="+url.QueryEscape(nrk), "", nil), 200, "page 2")
	if got := names(t, rec, "RowKey"); got != "r3" {
		t.Errorf("second page %s", got)
	}
}

func TestFaultsInjected(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("flt")
	set := func(spec string) {
		t.Helper()
		fs, err := partition.ParseFaults(spec)
		if err != nil {
			t.Fatal(err)
		}
		ts.parts.SetFaults(fs)
	}
	set("fault=busy op=insert every=1")
	ts.fails(ts.do("POST", "/devstoreaccount1/flt", `{"PartitionKey":"p","RowKey":"busy"}`, nil), 503, "ServerBusy", "busy insert")
	set("fault=timeout op=batch every=1")
	ts.fails(ts.do("POST", "/devstoreaccount1/$batch", batchBody(sub("POST", base+"/flt", "", `{"PartitionKey":"p","RowKey":"b"}`)), batchHeader), 500, "OperationTimedOut", "timed-out batch")
	set("fault=busy op=other every=1")
	ts.fails(ts.do("DELETE", "/devstoreaccount1/Tables('flt')", "", nil), 503, "ServerBusy", "busy delete table")
	set("fault=busy op=query every=1")
	ts.fails(ts.do("GET", "/devstoreaccount1/flt()", "", nil), 503, "ServerBusy", "busy query")
	set("fault=busy op=point-read every=1")
	ts.fails(ts.do("GET", "/devstoreaccount1/flt(PartitionKey='p',RowKey='x')", "", nil), 503, "ServerBusy", "busy read")
	set("fault=busy op=update every=1")
	ts.fails(ts.do("PUT", "/devstoreaccount1/flt(PartitionKey='p',RowKey='x')", `{}`, nil), 503, "ServerBusy", "busy upsert")
	set("fault=busy op=delete every=1")
	ts.fails(ts.do("DELETE", "/devstoreaccount1/flt(PartitionKey='p',RowKey='x')", ``, map[string]string{"If-Match": "*"}), 503, "ServerBusy", "busy delete")
	set("")
	ts.fails(ts.do("GET", "/devstoreaccount1/flt(PartitionKey='p',RowKey='busy')", "", nil), 404, "ResourceNotFound", "refused insert not applied")
	ts.fails(ts.do("GET", "/devstoreaccount1/flt(PartitionKey='p',RowKey='b')", "", nil), 404, "ResourceNotFound", "refused batch not applied")

	// After the write: it is applied, and the answer is lost.
	set("fault=internal when=after op=insert every=1")
	ts.fails(ts.do("POST", "/devstoreaccount1/flt", `{"PartitionKey":"p","RowKey":"after"}`, nil), 500, "InternalError", "insert, then a lost answer")
	set("fault=internal when=after op=delete every=1")
	ts.fails(ts.do("DELETE", "/devstoreaccount1/flt(PartitionKey='p',RowKey='nope')", ``, map[string]string{"If-Match": "*"}), 404, "ResourceNotFound", "a failed delete keeps its own answer")
	set("")
	ts.ok(ts.do("GET", "/devstoreaccount1/flt(PartitionKey='p',RowKey='after')", "", nil), 200, "applied before the lost answer")

	// Dropped connections: the client gets no answer at all.
	addr := startHTTP(t, ts.h)
	send := func(r *http.Request) error {
		t.Helper()
		u, _ := url.Parse("http://" + addr + r.URL.RequestURI())
		r.URL, r.Host, r.RequestURI = u, addr, ""
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	set("fault=drop op=point-read every=1")
	if err := send(signed("GET", "/devstoreaccount1/flt(PartitionKey='p',RowKey='after')", "", nil)); err == nil {
		t.Error("dropped read answered")
	}
	set("fault=drop when=after op=insert every=1")
	if err := send(signed("POST", "/devstoreaccount1/flt", `{"PartitionKey":"p","RowKey":"dropped"}`, nil)); err == nil {
		t.Error("dropped insert answered")
	}
	set("")
	ts.ok(ts.do("GET", "/devstoreaccount1/flt(PartitionKey='p',RowKey='dropped')", "", nil), 200, "applied before the drop")
	if err := send(signed("GET", "/devstoreaccount1/flt(PartitionKey='p',RowKey='dropped')", "", nil)); err != nil {
		t.Errorf("read after the faults were cleared: %v", err)
	}
}

func TestServicePropertiesAndPreflight(t *testing.T) {
	ts := newTestServer(t)
	props := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>http://app.example</AllowedOrigins>` +
		`<AllowedMethods>GET,PUT</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>*</ExposedHeaders><AllowedHeaders>*</AllowedHeaders></CorsRule></Cors></StorageServiceProperties>`
	ts.ok(ts.do("PUT", "/devstoreaccount1/?restype=service&comp=properties", props, map[string]string{"Content-Type": "application/xml"}), 202, "set properties")
	rec := ts.ok(ts.do("GET", "/devstoreaccount1/?restype=service&comp=properties", "", nil), 200, "get properties")
	if !strings.Contains(rec.Body.String(), "<AllowedOrigins>http://app.example</AllowedOrigins>") {
		t.Errorf("properties %s", rec.Body)
	}
	r := httptest.NewRequest("OPTIONS", "http://127.0.0.1:10002/devstoreaccount1/Tables", nil)
	r.Header.Set("Origin", "http://app.example")
	r.Header.Set("Access-Control-Request-Method", "PUT")
	rec = httptest.NewRecorder()
	ts.h.ServeHTTP(rec, r)
	if rec.Code != 200 || rec.Header().Get("Access-Control-Allow-Origin") != "http://app.example" {
		t.Errorf("preflight: %d %v", rec.Code, rec.Header())
	}
	r.Header.Set("Origin", "http://evil.example")
	rec = httptest.NewRecorder()
	ts.h.ServeHTTP(rec, r)
	if rec.Code != 403 {
		t.Errorf("preflight of another origin: %d", rec.Code)
	}
	ts.fails(ts.do("PUT", "/devstoreaccount1/?restype=service&comp=properties", strings.Repeat(" ", 1<<20), nil), 413, "RequestBodyTooLarge", "huge properties")
}

// TestBatchSubRequestHeaders: each sub-request's own Accept (none: minimal metadata) and
// Prefer decide its answer; a SAS upsert in a changeset needs add and update.
func TestBatchSubRequestHeaders(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("hdr")
	raw := func(target, hdr, body string) string {
		return "POST " + target + " HTTP/1.1\r\nContent-Type: application/json\r\n" + hdr + "\r\n" + body
	}
	rec := ts.ok(ts.do("POST", "/devstoreaccount1/$batch", batchBody(
		raw(base+"/hdr", "Accept: application/json;odata=nometadata\r\n", `{"PartitionKey":"p","RowKey":"a"}`),
		raw(base+"/hdr", "Accept: application/json;odata=fullmetadata\r\n", `{"PartitionKey":"p","RowKey":"b"}`),
		raw(base+"/hdr", "", `{"PartitionKey":"p","RowKey":"c"}`),
	), batchHeader), 202, "batch")
	got := rec.Body.String()
	for _, want := range []string{
		"Content-Type: application/json;odata=nometadata;streaming=true;charset=utf-8\r\n",
		"Content-Type: application/json;odata=fullmetadata;streaming=true;charset=utf-8\r\n",
		"Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n",
		`"odata.type":"devstoreaccount1.hdr"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %q:\n%s", want, got)
		}
	}
	upsert := sub("PUT", base+"/hdr(PartitionKey='p',RowKey='a')", "", `{}`)
	rec = ts.ok(ts.sas("POST", "/devstoreaccount1/$batch", tableSAS("hdr", "u", "", "", ""), batchBody(upsert), batchHeader), 202, "SAS upsert")
	if got := rec.Body.String(); subStatuses(got) != "403 Forbidden" || !strings.Contains(got, "AuthorizationPermissionMismatch") {
		t.Errorf("upsert with update only:\n%s", got)
	}
}

// TestACLBodyAtLimit: a Set Table ACL body of exactly 64 KiB is read, one byte more is
// RequestBodyTooLarge.
func TestACLBodyAtLimit(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("lim")
	pad := func(n int) string { return aclXML + strings.Repeat(" ", n-len(aclXML)) }
	ts.ok(ts.do("PUT", "/devstoreaccount1/lim?comp=acl", pad(64<<10), nil), 204, "64 KiB ACL")
	ts.fails(ts.do("PUT", "/devstoreaccount1/lim?comp=acl", pad(64<<10+1), nil), 413, "RequestBodyTooLarge", "ACL one byte too large")
}

// TestBatchETagsFollowTimestamps: a changeset's entities share one Timestamp unless an
// entity's stored Timestamp is ahead of it (here: written by a clock an hour ahead, then the
// store's clock floor lost, as when entities are restored without it); each sub-response
// must then carry its own entity's ETag, not the one before it.
func TestBatchETagsFollowTimestamps(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	serve := func(o table.Options) (*testServer, *table.Service) {
		svc := table.New(db, o)
		return &testServer{t: t, h: server.New(server.Options{Service: svc, Accounts: []auth.Account{auth.DevAccount()}})}, svc
	}
	ts, ahead := serve(table.Options{Now: func() time.Time { return time.Now().Add(time.Hour) }})
	ts.createTable("ahead")
	ts.ok(ts.do("POST", "/devstoreaccount1/ahead", `{"PartitionKey":"p","RowKey":"a"}`, nil), 201, "insert ahead")
	ahead.Close()
	if err := db.Update(t.Context(), nil, func(tx store.Txn) error { return tx.Delete(keys.Meta("clock-floor")) }); err != nil {
		t.Fatal(err)
	}
	ts, svc := serve(table.Options{})
	defer svc.Close()
	rec := ts.ok(ts.do("POST", "/devstoreaccount1/$batch", batchBody(
		sub("POST", base+"/ahead", "Prefer: return-no-content\r\n", `{"PartitionKey":"p","RowKey":"b"}`),
		sub("PUT", base+"/ahead(PartitionKey='p',RowKey='a')", "If-Match: *\r\n", `{"V":1}`),
		sub("POST", base+"/ahead", "", `{"PartitionKey":"p","RowKey":"c"}`),
	), batchHeader), 202, "batch")
	var got []string
	for _, line := range strings.Split(rec.Body.String(), "\r\n") {
		if v, ok := strings.CutPrefix(line, "ETag: "); ok {
			got = append(got, v)
		}
	}
	var want []string
	for _, rk := range []string{"b", "a", "c"} {
		want = append(want, ts.ok(ts.do("GET", "/devstoreaccount1/ahead(PartitionKey='p',RowKey='"+rk+"')", "", nil), 200, "get "+rk).Header().Get("ETag"))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || want[0] == want[1] {
		t.Errorf("sub-response ETags %v, want the stored ones %v (a's ahead of the others)", got, want)
	}
}

// TestBatchBodyAtLimit: a $batch body of 4 MiB (Azure's limit) is read, one byte more is
// RequestBodyTooLarge.
func TestBatchBodyAtLimit(t *testing.T) {
	ts := newTestServer(t)
	ts.createTable("big")
	one := batchBody(sub("POST", base+"/big", "Prefer: return-no-content\r\n", `{"PartitionKey":"p","RowKey":"r"}`))
	pad := func(n int) string { return strings.Repeat("x", n-len(one)-2) + "\r\n" + one } // a MIME preamble
	const limit = 4 << 20
	rec := ts.ok(ts.do("POST", "/devstoreaccount1/$batch", pad(limit), batchHeader), 202, "batch at the limit")
	if s := subStatuses(rec.Body.String()); s != "204 No Content" {
		t.Errorf("batch at the limit: %s", rec.Body)
	}
	ts.fails(ts.do("POST", "/devstoreaccount1/$batch", pad(limit+1), batchHeader), 413, "RequestBodyTooLarge", "batch one byte too large")
}

// TestQuerySpanOverSplitTable: over a table the layer has split into range partitions, a
// query admits the ranges of its partition-key span — up to its upper bound when it has one,
// to the end when open — from its continuation on, as the plan's "ranges=" shows.
func TestQuerySpanOverSplitTable(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	svc := table.New(db, table.Options{})
	defer db.Close()
	defer svc.Close()
	parts := partition.New(partition.Options{Emulate: true, PartitionTarget: 1000, ServerCapacity: 400, Servers: 8, Heat: 2 * time.Second, Move: time.Second})
	ts := &testServer{t: t, parts: parts, h: server.New(server.Options{Service: svc, Accounts: []auth.Account{auth.DevAccount()}, Partitions: parts})}
	// Heat the table an hour ago, before any request (the layer's clock is the requests'
	// and only moves forward), so that it is split and every range is back online now.
	start := time.Now().Add(-time.Hour)
	i := 0
	for tick := range 30 {
		now := start.Add(time.Duration(tick) * time.Second)
		for range 1000 {
			op := partition.Op{Service: partition.Table, Account: "devstoreaccount1", Container: "spl", Key: fmt.Sprintf("bucket%02d", i*7%16), Kind: partition.KindInsert, Entities: 1}
			i++
			tk := parts.Admit(&op, now)
			parts.Finish(&tk, partition.Result{Status: 204, Now: now})
		}
	}
	ts.createTable("spl")
	rs := ts.tableView("spl").Ranges
	// touched counts the ranges holding lo up to the one holding hi.
	touched := func(lo, hi string) int {
		n := 0
		for j, r := range rs {
			if r.Low <= hi && (j == len(rs)-1 || rs[j+1].Low > lo) {
				n++
			}
		}
		return n
	}
	bounded := touched("bucket00", "bucket05")
	last := rs[len(rs)-1].Low
	if len(rs) < 3 || bounded >= len(rs) || touched(last, "~") != 1 {
		t.Fatalf("ranges %+v: want at least 3, bucket00..bucket05 not in all of them", rs)
	}
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"$filter=" + url.QueryEscape("PartitionKey ge 'bucket00' and PartitionKey lt 'bucket05'"), bounded},
		{"$filter=" + url.QueryEscape("PartitionKey ge 'bucket00'"), len(rs)},
		{"$filter=" + url.QueryEscape("PartitionKey ge 'bucket00'") + "&NextPartitionKey=" + url.QueryEscape(query.EncodeToken(last)), 1},
	} {
		rec := ts.ok(ts.do("GET", "/devstoreaccount1/spl()?"+tc.query, "", nil), 200, tc.query)
		if plan := rec.Header().Get("x-tablo-query-plan"); !strings.Contains(plan, fmt.Sprintf("; ranges=%d ", tc.want)) {
			t.Errorf("%s: plan %q, want %d ranges of %+v", tc.query, plan, tc.want, rs)
		}
	}
}
