package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/internal/entity"
)

// jsonOf encodes a value that always encodes (maps of strings and numbers); it panics
// otherwise, and needs no testing.TB, so goroutines may call it.
func jsonOf(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func getEDM(t *testing.T, tc *aztables.Client, pk, rk string) (aztables.EDMEntity, azcore.ETag) {
	t.Helper()
	resp, err := tc.GetEntity(ctx, pk, rk, nil)
	if err != nil {
		t.Fatalf("get (%q,%q): %v", pk, rk, err)
	}
	var e aztables.EDMEntity
	if err := json.Unmarshal(resp.Value, &e); err != nil {
		t.Fatal(err)
	}
	return e, resp.ETag
}

func TestAllTypesRoundTrip(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	when := time.Date(2024, 5, 1, 10, 20, 30, 123456700, time.UTC)
	props := map[string]any{
		"Str":      "hello ünïcode 😀 \"quoted\" \\ back",
		"Empty":    "",
		"Bool":     true,
		"False":    false,
		"I32":      int32(-2147483648),
		"I32Max":   int32(2147483647),
		"I64":      aztables.EDMInt64(math.MaxInt64),
		"I64Min":   aztables.EDMInt64(math.MinInt64),
		"Dbl":      1.5,
		"DblTiny":  5e-324,
		"DblHuge":  1.7976931348623157e308,
		"DblWhole": 3.0,
		"When":     aztables.EDMDateTime(when),
		"Old":      aztables.EDMDateTime(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)),
		"Bin":      aztables.EDMBinary([]byte{0, 1, 2, 255}),
		"EmptyBin": aztables.EDMBinary([]byte{}),
		"ID":       aztables.EDMGUID("c9da6455-213d-42c9-9a79-3e9149a57833"),
	}
	e := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "r"}, Properties: props}
	if _, err := tc.AddEntity(ctx, mustJSON(t, e), nil); err != nil {
		t.Fatal(err)
	}
	got, _ := getEDM(t, tc, "p", "r")
	for k, want := range props {
		g := got.Properties[k]
		if k == "DblWhole" {
			// Go's SDK sends float64(3) as 3, which is an Int32 on the wire: client behaviour.
			if g != int32(3) {
				t.Errorf("%s: got %#v", k, g)
			}
			continue
		}
		if fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", want) {
			t.Errorf("%s: got %#v want %#v", k, g, want)
		}
	}
	if got.Timestamp == (aztables.EDMDateTime{}) {
		t.Error("no Timestamp")
	}
}

func TestDoubleSpecialValuesAndWireForms(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	body := `{"PartitionKey":"p","RowKey":"d","Nan@odata.type":"Edm.Double","Nan":"NaN","Inf":"Infinity","Inf@odata.type":"Edm.Double","NInf@odata.type":"Edm.Double","NInf":"-Infinity","Whole@odata.type":"Edm.Double","Whole":3,"Neg":-0.0,"Exp":1e21,"Big":"255","Big@odata.type":"Edm.Int64"}`
	tableName := tableNameOf(t, tc)
	status, _, resp := ts.do(t, "POST", "/"+tableName, map[string]string{"Content-Type": "application/json", "Accept": "application/json;odata=minimalmetadata"}, body)
	if status != 201 {
		t.Fatalf("insert: %d %s", status, resp)
	}
	for _, want := range []string{`"Nan@odata.type":"Edm.Double","Nan":"NaN"`, `"Inf@odata.type":"Edm.Double","Inf":"Infinity"`, `"NInf@odata.type":"Edm.Double","NInf":"-Infinity"`, `"Whole":3.0`, `"Big@odata.type":"Edm.Int64","Big":"255"`} {
		if !strings.Contains(resp, want) {
			t.Errorf("response lacks %s: %s", want, resp)
		}
	}
	if strings.Contains(resp, `"Whole@odata.type"`) {
		t.Errorf("finite doubles must not be annotated: %s", resp)
	}
}

func tableNameOf(t *testing.T, tc *aztables.Client) string {
	t.Helper()
	tableNamesMu.Lock()
	defer tableNamesMu.Unlock()
	return tableNames[tc]
}

var (
	tableNamesMu sync.Mutex
	tableNames   = map[*aztables.Client]string{}
)

func TestETagsAndConditions(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	ins, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","A":1,"B":"x"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	etag1 := ins.ETag
	if !strings.HasPrefix(string(etag1), `W/"datetime'`) {
		t.Fatalf("etag %q", etag1)
	}
	// Replace with the right ETag: properties not in the body disappear.
	up, err := tc.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","C":true}`), &aztables.UpdateEntityOptions{IfMatch: &etag1, UpdateMode: aztables.UpdateModeReplace})
	if err != nil {
		t.Fatal(err)
	}
	if up.ETag == etag1 {
		t.Fatal("ETag did not change")
	}
	got, etag2 := getEDM(t, tc, "p", "r")
	if etag2 != up.ETag || len(got.Properties) != 1 || got.Properties["C"] != true {
		t.Fatalf("after replace: %v %v", got.Properties, etag2)
	}
	// Stale ETag → 412 for replace, merge and delete.
	_, err = tc.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), &aztables.UpdateEntityOptions{IfMatch: &etag1, UpdateMode: aztables.UpdateModeReplace})
	wantCode(t, err, 412, "UpdateConditionNotSatisfied")
	_, err = tc.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), &aztables.UpdateEntityOptions{IfMatch: &etag1, UpdateMode: aztables.UpdateModeMerge})
	wantCode(t, err, 412, "UpdateConditionNotSatisfied")
	_, err = tc.DeleteEntity(ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: &etag1})
	wantCode(t, err, 412, "UpdateConditionNotSatisfied")
	// Merge with *: keeps C, adds D.
	star := azcore.ETagAny
	if _, err := tc.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","D":"d"}`), &aztables.UpdateEntityOptions{IfMatch: &star, UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
	got, etag3 := getEDM(t, tc, "p", "r")
	if got.Properties["C"] != true || got.Properties["D"] != "d" || etag3 == etag2 {
		t.Fatalf("after merge: %v", got.Properties)
	}
	// Update of a missing entity → 404, even with *.
	_, err = tc.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"nope"}`), &aztables.UpdateEntityOptions{IfMatch: &star, UpdateMode: aztables.UpdateModeReplace})
	wantCode(t, err, 404, "ResourceNotFound")
	// Malformed If-Match → 400.
	status, h, _ := ts.do(t, "DELETE", "/"+tableNameOf(t, tc)+"(PartitionKey='p',RowKey='r')", map[string]string{"If-Match": "MalformedETag"}, "")
	if status != 400 || h.Get("x-ms-error-code") != "InvalidInput" {
		t.Fatalf("malformed etag: %d %s", status, h.Get("x-ms-error-code"))
	}
	// A Python-style ETag (rebuilt from the Timestamp: raw colons, seven fractional digits)
	// matches by instant; the same form of another instant does not.
	ticks, ok := entity.ParseETag(string(etag3))
	if !ok {
		t.Fatalf("server ETag %q does not parse", etag3)
	}
	pyForm := func(ticks int64) string {
		return `W/"datetime'` + entity.TimeOf(ticks).Format("2006-01-02T15:04:05.0000000Z") + `'"`
	}
	path := "/" + tableNameOf(t, tc) + "(PartitionKey='p',RowKey='r')"
	if py := pyForm(ticks); py == string(etag3) {
		t.Fatalf("the Python form %s is the server's own", py)
	}
	if status, h, _ := ts.do(t, "DELETE", path, map[string]string{"If-Match": pyForm(ticks + 1)}, ""); status != 412 || h.Get("x-ms-error-code") != "UpdateConditionNotSatisfied" {
		t.Fatalf("Python-form ETag of another instant: %d %s", status, h.Get("x-ms-error-code"))
	}
	if status, _, body := ts.do(t, "DELETE", path, map[string]string{"If-Match": pyForm(ticks)}, ""); status != 204 {
		t.Fatalf("Python-form ETag %s of %s: %d %s", pyForm(ticks), etag3, status, body)
	}
	_, err = tc.DeleteEntity(ctx, "p", "r", nil)
	wantCode(t, err, 404, "ResourceNotFound")
}

func TestUpserts(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	// Insert-or-replace creates, then replaces.
	if _, err := tc.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","A":1,"B":2}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","C":3}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatal(err)
	}
	got, _ := getEDM(t, tc, "p", "r")
	if fmt.Sprint(got.Properties) != "map[C:3]" {
		t.Fatalf("after upsert-replace: %v", got.Properties)
	}
	// Insert-or-merge creates and merges.
	if _, err := tc.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"m","A":1}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"m","A":"changed type","B":2}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
	got, _ = getEDM(t, tc, "p", "m")
	if got.Properties["A"] != "changed type" || got.Properties["B"] != int32(2) {
		t.Fatalf("after upsert-merge: %v", got.Properties)
	}
}

func TestSpecialKeys(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	// The Go SDK refuses empty keys client-side and doubles quotes inside body keys (a client
	// bug, spec data-model.md §2), so empty and quoted keys are checked with raw requests below.
	keys := []string{" ", "a b", "100%", "%27", "+plus+", "&amp;", "ünï", "😀", "(paren)", "comma,", "=eq", "quote\"d", "*", ":colon"}
	for i, k := range keys {
		rk := fmt.Sprintf("r%d", i)
		e := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: k, RowKey: k + rk}, Properties: map[string]any{"I": int32(i)}}
		if _, err := tc.AddEntity(ctx, mustJSON(t, e), nil); err != nil {
			t.Fatalf("insert %q: %v", k, err)
		}
		got, _ := getEDM(t, tc, k, k+rk)
		if got.PartitionKey != k || got.RowKey != k+rk || got.Properties["I"] != int32(i) {
			t.Fatalf("get %q: %+v", k, got)
		}
		if _, err := tc.UpsertEntity(ctx, mustJSON(t, e), nil); err != nil {
			t.Fatalf("upsert %q: %v", k, err)
		}
	}
	name := tableNameOf(t, tc)
	if status, _, body := ts.do(t, "POST", "/"+name, map[string]string{"Content-Type": "application/json"}, `{"PartitionKey":"","RowKey":"","V":1}`); status != 201 {
		t.Fatalf("empty keys insert: %d %s", status, body)
	}
	if status, _, body := ts.do(t, "GET", "/"+name+"(PartitionKey='',RowKey='')", nil, ""); status != 200 || !strings.Contains(body, `"PartitionKey":"","RowKey":""`) {
		t.Fatalf("empty keys get: %d %s", status, body)
	}
	// Quotes: doubled inside the URL literal, raw in the body; percent-encoded or not.
	if status, _, body := ts.do(t, "POST", "/"+name, map[string]string{"Content-Type": "application/json"}, `{"PartitionKey":"o'neil","RowKey":"''","V":2}`); status != 201 {
		t.Fatalf("quoted keys insert: %d %s", status, body)
	}
	for _, p := range []string{"(PartitionKey='o''neil',RowKey='''''')", "(PartitionKey='o%27%27neil',RowKey='%27%27%27%27')", "(PartitionKey='o''neil', RowKey='''''')"} {
		if status, _, body := ts.do(t, "GET", "/"+name+p, nil, ""); status != 200 || !strings.Contains(body, `"PartitionKey":"o'neil","RowKey":"''"`) {
			t.Fatalf("quoted keys get %s: %d %s", p, status, body)
		}
	}
	// Forbidden characters in body keys.
	for _, bad := range []string{"a/b", "a\\b", "a#b", "a?b", "a\u0001b", "a\u007fb", "a\u0085b"} {
		e := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: bad, RowKey: "r"}}
		_, err := tc.AddEntity(ctx, mustJSON(t, e), nil)
		wantCode(t, err, 400, "OutOfRangeInput")
	}
	// Key length: 1,024 UTF-16 units accepted, 1,025 rejected.
	long := strings.Repeat("k", 1024)
	if _, err := tc.AddEntity(ctx, mustJSON(t, aztables.Entity{PartitionKey: long, RowKey: "r"}), nil); err != nil {
		t.Fatalf("1024-char key: %v", err)
	}
	_, err := tc.AddEntity(ctx, mustJSON(t, aztables.Entity{PartitionKey: long + "k", RowKey: "r"}), nil)
	wantCode(t, err, 400, "PropertyValueTooLarge")
}

func TestEntityValidationErrors(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	hdr := map[string]string{"Content-Type": "application/json"}
	big := strings.Repeat("x", 32*1024)
	var props252, props253 strings.Builder
	for i := range 253 {
		if i < 252 {
			fmt.Fprintf(&props252, `,"P%d":1`, i)
		}
		fmt.Fprintf(&props253, `,"P%d":1`, i)
	}
	var huge strings.Builder
	for i := range 20 {
		fmt.Fprintf(&huge, `,"S%d":"%s"`, i, big)
	}
	cases := []struct {
		name, body string
		status     int
		code       string
	}{
		{"missing keys", `{"A":1}`, 400, "PropertiesNeedValue"},
		{"null key", `{"PartitionKey":null,"RowKey":"r"}`, 400, "PropertiesNeedValue"},
		{"empty body", ``, 400, "PropertiesNeedValue"},
		{"malformed json", `{"PartitionKey":"p",`, 400, "InvalidInput"},
		{"array value", `{"PartitionKey":"p","RowKey":"r","A":[1]}`, 400, "InvalidInput"},
		{"duplicate", `{"PartitionKey":"p","RowKey":"r","A":1,"A":2}`, 400, "DuplicatePropertiesSpecified"},
		{"bad int64", `{"PartitionKey":"p","RowKey":"r","A":"abc","A@odata.type":"Edm.Int64"}`, 400, "InvalidInput"},
		{"bad guid", `{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Guid","A":"xyz"}`, 400, "InvalidInput"},
		{"bad type", `{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Byte","A":1}`, 400, "InvalidInput"},
		{"int32 overflow", `{"PartitionKey":"p","RowKey":"r","A":3000000000}`, 400, "InvalidInput"},
		{"old datetime", `{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.DateTime","A":"0001-01-01T00:00:00Z"}`, 400, "OutOfRangeInput"},
		{"bad name", `{"PartitionKey":"p","RowKey":"r","a-b":1}`, 400, "PropertyNameInvalid"},
		{"long name", `{"PartitionKey":"p","RowKey":"r","` + strings.Repeat("n", 256) + `":1}`, 400, "PropertyNameTooLong"},
		{"string too large", `{"PartitionKey":"p","RowKey":"r","A":"` + big + `x"}`, 400, "PropertyValueTooLarge"},
		{"too many", `{"PartitionKey":"p","RowKey":"r"` + props253.String() + `}`, 400, "TooManyProperties"},
		{"entity too large", `{"PartitionKey":"p","RowKey":"r"` + huge.String() + `}`, 400, "EntityTooLarge"},
	}
	for _, c := range cases {
		status, h, body := ts.do(t, "POST", "/"+name, hdr, c.body)
		if status != c.status || h.Get("x-ms-error-code") != c.code || !strings.Contains(body, `"code":"`+c.code+`"`) {
			t.Errorf("%s: got %d %s %s", c.name, status, h.Get("x-ms-error-code"), body[:min(len(body), 200)])
		}
	}
	// Nothing was written by any failure; the boundary cases are accepted.
	for _, ok := range []string{`{"PartitionKey":"p","RowKey":"ok1"` + props252.String() + `}`, `{"PartitionKey":"p","RowKey":"ok2","A":"` + big + `"}`} {
		if status, _, body := ts.do(t, "POST", "/"+name, hdr, ok); status != 201 {
			t.Errorf("boundary case: %d %s", status, body[:min(len(body), 200)])
		}
	}
	pager := tc.NewListEntitiesPager(nil)
	n := 0
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(p.Entities)
	}
	if n != 2 {
		t.Fatalf("%d entities stored, want 2", n)
	}
	// A merge that pushes the entity over 252 properties is refused whole.
	status, h, _ := ts.do(t, "MERGE", "/"+name+"(PartitionKey='p',RowKey='ok1')", map[string]string{"Content-Type": "application/json", "If-Match": "*"}, `{"Extra":1}`)
	if status != 400 || h.Get("x-ms-error-code") != "TooManyProperties" {
		t.Fatalf("merge past 252: %d %s", status, h.Get("x-ms-error-code"))
	}
}

func TestTunnelledAndLegacyVerbs(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	path := "/" + name + "(PartitionKey='p',RowKey='r')"
	if status, _, body := ts.do(t, "MERGE", path, map[string]string{"Content-Type": "application/json"}, `{"A":1}`); status != 204 {
		t.Fatalf("MERGE upsert: %d %s", status, body)
	}
	if status, _, body := ts.do(t, "POST", path, map[string]string{"Content-Type": "application/json", "X-HTTP-Method": "MERGE", "If-Match": "*"}, `{"B":2}`); status != 204 {
		t.Fatalf("tunnelled MERGE: %d %s", status, body)
	}
	got, _ := getEDM(t, tc, "p", "r")
	if got.Properties["A"] != int32(1) || got.Properties["B"] != int32(2) {
		t.Fatalf("after merges: %v", got.Properties)
	}
	for _, c := range []struct {
		method, xm, code string
	}{{"PUT", "MERGE", "XMethodNotUsingPost"}, {"POST", "GET", "XMethodIncorrectValue"}} {
		status, h, _ := ts.do(t, c.method, path, map[string]string{"X-HTTP-Method": c.xm}, "")
		if status != 400 || h.Get("x-ms-error-code") != c.code {
			t.Errorf("%s/%s: %d %s", c.method, c.xm, status, h.Get("x-ms-error-code"))
		}
	}
	if status, _, _ := ts.do(t, "POST", path, map[string]string{"X-HTTP-Method": "DELETE", "If-Match": "*"}, ""); status != 204 {
		t.Fatalf("tunnelled DELETE: %d", status)
	}
	// Malformed key segments.
	for _, p := range []string{"(PartitionKey='p,RowKey='r')", "(PartitionKey='p')", "(PartitionKey='a/b',RowKey='r')", "(Foo='p',RowKey='r')"} {
		status, h, _ := ts.do(t, "GET", "/"+name+p, nil, "")
		if status != 400 || h.Get("x-ms-error-code") != "InvalidInput" {
			t.Errorf("%s: %d %s", p, status, h.Get("x-ms-error-code"))
		}
	}
}

func TestMetadataLevelsGolden(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	body := `{"PartitionKey":"mypk","RowKey":"myrk","Age":23,"AmountDue":200.23,"CustomerCode@odata.type":"Edm.Guid","CustomerCode":"c9da6455-213d-42c9-9a79-3e9149a57833","NumberOfOrders@odata.type":"Edm.Int64","NumberOfOrders":"255","Blob@odata.type":"Edm.Binary","Blob":"AQID"}`
	if status, _, resp := ts.do(t, "POST", "/"+name, map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}, body); status != 204 {
		t.Fatalf("insert: %d %s", status, resp)
	}
	_, etag := getEDM(t, tc, "mypk", "myrk")
	ts1 := strings.TrimSuffix(strings.TrimPrefix(string(etag), `W/"datetime'`), `'"`)
	tsText := strings.ReplaceAll(ts1, "%3A", ":")
	ej := strings.ReplaceAll(string(etag), `"`, `\"`)
	base := ts.endpoint
	want := map[string]string{
		"nometadata":      `{"PartitionKey":"mypk","RowKey":"myrk","Timestamp":"` + tsText + `","Age":23,"AmountDue":200.23,"CustomerCode":"c9da6455-213d-42c9-9a79-3e9149a57833","NumberOfOrders":"255","Blob":"AQID"}`,
		"minimalmetadata": `{"odata.metadata":"` + base + `/$metadata#` + name + `/@Element","odata.etag":"` + ej + `","PartitionKey":"mypk","RowKey":"myrk","Timestamp":"` + tsText + `","Age":23,"AmountDue":200.23,"CustomerCode@odata.type":"Edm.Guid","CustomerCode":"c9da6455-213d-42c9-9a79-3e9149a57833","NumberOfOrders@odata.type":"Edm.Int64","NumberOfOrders":"255","Blob@odata.type":"Edm.Binary","Blob":"AQID"}`,
		"fullmetadata":    `{"odata.metadata":"` + base + `/$metadata#` + name + `/@Element","odata.type":"devstoreaccount1.` + name + `","odata.id":"` + base + `/` + name + `(PartitionKey='mypk',RowKey='myrk')","odata.etag":"` + ej + `","odata.editLink":"` + name + `(PartitionKey='mypk',RowKey='myrk')","PartitionKey":"mypk","RowKey":"myrk","Timestamp@odata.type":"Edm.DateTime","Timestamp":"` + tsText + `","Age":23,"AmountDue":200.23,"CustomerCode@odata.type":"Edm.Guid","CustomerCode":"c9da6455-213d-42c9-9a79-3e9149a57833","NumberOfOrders@odata.type":"Edm.Int64","NumberOfOrders":"255","Blob@odata.type":"Edm.Binary","Blob":"AQID"}`,
	}
	for level, w := range want {
		status, h, got := ts.do(t, "GET", "/"+name+"(PartitionKey='mypk',RowKey='myrk')", map[string]string{"Accept": "application/json;odata=" + level}, "")
		if status != 200 || got != w {
			t.Errorf("%s:\n got %s\nwant %s", level, got, w)
		}
		if h.Get("Content-Type") != "application/json;odata="+level+";streaming=true;charset=utf-8" || h.Get("ETag") != string(etag) {
			t.Errorf("%s headers: %v", level, h)
		}
		// $format wins over Accept.
		_, _, got = ts.do(t, "GET", "/"+name+"(PartitionKey='mypk',RowKey='myrk')?$format=application/json;odata="+level, map[string]string{"Accept": "application/json;odata=fullmetadata"}, "")
		if got != w {
			t.Errorf("$format=%s: %s", level, got)
		}
	}
	// $format=json is OData's shorthand for minimal metadata.
	if _, _, got := ts.do(t, "GET", "/"+name+"(PartitionKey='mypk',RowKey='myrk')?$format=json", map[string]string{"Accept": "application/json;odata=nometadata"}, ""); got != want["minimalmetadata"] {
		t.Errorf("$format=json: %s", got)
	}
	// $select on a point get: only the listed properties, absent ones as null.
	_, _, got := ts.do(t, "GET", "/"+name+"(PartitionKey='mypk',RowKey='myrk')?$select=Age,Missing", nil, "")
	w := `{"odata.metadata":"` + base + `/$metadata#` + name + `/@Element&$select=Age,Missing","odata.etag":"` + ej + `","Age":23,"Missing":null}`
	if got != w {
		t.Errorf("$select:\n got %s\nwant %s", got, w)
	}
	// The same on a query: '&' is not HTML-escaped in odata.metadata.
	_, _, got = ts.do(t, "GET", "/"+name+"()?$select=Age", nil, "")
	w = `{"odata.metadata":"` + base + `/$metadata#` + name + `&$select=Age","value":[{"odata.etag":"` + ej + `","Age":23}]}`
	if got != w {
		t.Errorf("query $select:\n got %s\nwant %s", got, w)
	}
}

func TestConcurrentETagRaceHasOneWinner(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	ins, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","N":0}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	const racers = 16
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		body := mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "N": i})
		wg.Go(func() {
			_, errs[i] = tc.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: to.Ptr(ins.ETag), UpdateMode: aztables.UpdateModeReplace})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatalf("racers %d and %d both won with the same ETag", winner, i)
			}
			winner = i
			continue
		}
		wantCode(t, err, 412, "UpdateConditionNotSatisfied")
	}
	if winner < 0 {
		t.Fatal("no racer won")
	}
	if got, _ := getEDM(t, tc, "p", "r"); got.Properties["N"] != int32(winner) {
		t.Fatalf("final N = %v, want the winner's %d", got.Properties["N"], winner)
	}
}

// TestLargestEntityRoundTrips writes an entity just under the 1 MiB limit (15 strings of
// 32,000 characters ≈ 960 KB by Azure's formula) and reads it back intact.
func TestLargestEntityRoundTrips(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	props := map[string]any{}
	for i := range 15 {
		props[fmt.Sprintf("S%02d", i)] = strings.Repeat(string(rune('a'+i)), 32000)
	}
	props["Bin"] = aztables.EDMBinary(make([]byte, 30000))
	e := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "big", RowKey: "one"}, Properties: props}
	if _, err := tc.UpsertEntity(ctx, mustJSON(t, e), nil); err != nil {
		t.Fatal(err)
	}
	got, _ := getEDM(t, tc, "big", "one")
	for k, v := range props {
		if fmt.Sprint(got.Properties[k]) != fmt.Sprint(v) {
			t.Fatalf("%s differs after round trip", k)
		}
	}
}

// TestDeleteRequiresIfMatch: Azure requires If-Match ("*" or an ETag) on Delete Entity and
// answers 400 MissingRequiredHeader without it, deleting nothing; the SDKs always send it
// (the Go SDK sends "*" when no ETag is given), so only raw requests can leave it out.
func TestDeleteRequiresIfMatch(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	mustAdd(t, tc, "p", "r", 1)
	path := "/" + name + "(PartitionKey='p',RowKey='r')"
	status, h, body := ts.do(t, "DELETE", path, nil, "")
	if status != 400 || h.Get("x-ms-error-code") != "MissingRequiredHeader" || !strings.Contains(body, `"code":"MissingRequiredHeader"`) {
		t.Errorf("DELETE without If-Match: %d %s", status, body)
	}
	status, h, _ = ts.do(t, "POST", path, map[string]string{"X-HTTP-Method": "DELETE"}, "")
	if status != 400 || h.Get("x-ms-error-code") != "MissingRequiredHeader" {
		t.Errorf("tunnelled DELETE without If-Match: %d %s", status, h.Get("x-ms-error-code"))
	}
	wantBatchFailure(t, ts.postBatch(t, batchBody([]changesetOp{ts.deleteOp(name, "p", "r", "")})), 400, "MissingRequiredHeader", 0)
	if _, err := tc.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("the entity is gone after refused deletes: %v", err)
	}
	// The SDK's delete (If-Match: *) works.
	if _, err := tc.DeleteEntity(ctx, "p", "r", nil); err != nil {
		t.Fatal(err)
	}
}
