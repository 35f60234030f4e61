package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Query tests (spec/query.md): paging, order, the filter language through the SDK, $select,
// errors, Query Tables and the x-tablo-query-plan debug header.

// utf16Compare is Azure's key order (ordinal by UTF-16 code unit), computed independently.
func utf16Compare(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

type queryKey struct{ PK, RK string }

// queryAll pages through ListEntities and returns every entity (as JSON maps) and the page sizes.
func queryAll(t *testing.T, tc *aztables.Client, o *aztables.ListEntitiesOptions) ([]map[string]any, []int) {
	t.Helper()
	pager := tc.NewListEntitiesPager(o)
	var all []map[string]any
	var sizes []int
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		sizes = append(sizes, len(p.Entities))
		for _, raw := range p.Entities {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			all = append(all, m)
		}
		if len(sizes) > 10000 {
			t.Fatal("pager does not end")
		}
	}
	return all, sizes
}

func queryKeysOf(ms []map[string]any) []queryKey {
	out := make([]queryKey, len(ms))
	for i, m := range ms {
		out[i] = queryKey{fmt.Sprint(m["PartitionKey"]), fmt.Sprint(m["RowKey"])}
	}
	return out
}

// insertRawEntity inserts an entity with a raw request (the SDK doubles quotes in body keys).
func (ts *testServer) insertRawEntity(t *testing.T, table string, e map[string]any) {
	t.Helper()
	body, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json;odata=nometadata", "Prefer": "return-no-content"}
	if status, _, resp := ts.do(t, "POST", "/"+table, hdr, string(body)); status != http.StatusNoContent {
		t.Fatalf("insert %v: %d %s", e, status, resp)
	}
}

// queryEntitiesRaw runs Query Entities with raw query parameters (minimal metadata).
func (ts *testServer) queryEntitiesRaw(t *testing.T, table string, params url.Values) (int, http.Header, string) {
	t.Helper()
	return ts.do(t, "GET", "/"+table+"()?"+params.Encode(), map[string]string{"Accept": "application/json;odata=minimalmetadata"}, "")
}

// TestQueryPagingOrder inserts > 2,000 entities over partitions whose names pin Azure's
// UTF-16 ordinal order and pages through them with the SDK.
func TestQueryPagingOrder(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	pks := []string{"A", "Z", "_", "a", "partition-1", "partition-10", "partition-2", "é", "😀", "\uE000", "\uFFFD"}
	var want []queryKey
	for i, pk := range pks {
		var actions []aztables.TransactionAction
		for j := range 200 {
			rk := fmt.Sprintf("r%03d", j)
			if j%50 == 0 {
				rk = []string{"Z", "_", "a", "😀"}[j/50] // unusual row keys inside partitions too
			}
			want = append(want, queryKey{pk, rk})
			e := map[string]any{"PartitionKey": pk, "RowKey": rk, "N": i*1000 + j, "Odd": j%2 == 1}
			actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, e)})
			if len(actions) == 100 {
				if _, err := tc.SubmitTransaction(ctx, actions, nil); err != nil {
					t.Fatalf("batch: %v", err)
				}
				actions = nil
			}
		}
	}
	slices.SortFunc(want, func(a, b queryKey) int {
		if c := utf16Compare(a.PK, b.PK); c != 0 {
			return c
		}
		return utf16Compare(a.RK, b.RK)
	})
	if want[0].PK != "A" || want[len(want)-1].PK != "\uFFFD" {
		t.Fatalf("test order wrong: %v … %v", want[0], want[len(want)-1])
	}

	all, sizes := queryAll(t, tc, nil)
	if got := queryKeysOf(all); !slices.Equal(got, want) {
		t.Fatalf("full listing: %d entities, order differs from UTF-16 ordinal order (first %v)", len(got), queryFirstDiff(got, want))
	}
	if !slices.Equal(sizes, []int{1000, 1000, 200}) {
		t.Errorf("page sizes %v, want [1000 1000 200]", sizes)
	}

	// $top is a page size: the SDK keeps following continuations.
	all, sizes = queryAll(t, tc, &aztables.ListEntitiesOptions{Top: to.Ptr[int32](333)})
	if got := queryKeysOf(all); !slices.Equal(got, want) {
		t.Fatalf("top 333: order differs (first %v)", queryFirstDiff(got, want))
	}
	if len(sizes) != 7 || sizes[0] != 333 || sizes[6] != 2200-6*333 {
		t.Errorf("top 333: page sizes %v", sizes)
	}

	// A filter on a non-key property, paged across partitions, with Top.
	filter := "Odd eq true and N ge 5000"
	all, sizes = queryAll(t, tc, &aztables.ListEntitiesOptions{Filter: &filter, Top: to.Ptr[int32](64)})
	var wantOdd []queryKey
	for _, k := range want {
		if i := slices.Index(pks, k.PK); i >= 5 {
			if j := queryRowIndex(k.RK); j%2 == 1 {
				wantOdd = append(wantOdd, k)
			}
		}
	}
	if got := queryKeysOf(all); !slices.Equal(got, wantOdd) {
		t.Fatalf("%q: %d entities, want %d (first difference %v)", filter, len(got), len(wantOdd), queryFirstDiff(got, wantOdd))
	}
	for _, n := range sizes {
		if n > 64 {
			t.Fatalf("%q: page sizes %v exceed $top", filter, sizes)
		}
	}

	// Resume from a continuation given explicitly (the SDK's NextPartitionKey/NextRowKey).
	pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](10)})
	first, err := pager.NextPage(ctx)
	if err != nil || first.NextPartitionKey == nil || first.NextRowKey == nil {
		t.Fatalf("first page: %v %+v", err, first)
	}
	all, _ = queryAll(t, tc, &aztables.ListEntitiesOptions{NextPartitionKey: first.NextPartitionKey, NextRowKey: first.NextRowKey})
	if got := queryKeysOf(all); !slices.Equal(got, want[10:]) {
		t.Fatalf("resumed listing differs (first %v)", queryFirstDiff(got, want[10:]))
	}
}

// queryRowIndex recovers j from the row keys of TestQueryPagingOrder.
func queryRowIndex(rk string) int {
	if i := slices.Index([]string{"Z", "_", "a", "😀"}, rk); i >= 0 {
		return i * 50
	}
	n, _ := strconv.Atoi(rk[1:])
	return n
}

func queryFirstDiff(got, want []queryKey) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("#%d got %q want %q", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(got), len(want))
}

// TestQueryLiteralsAndOperators runs every literal type and operator through the SDK.
func TestQueryLiteralsAndOperators(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	when := time.Date(2024, 5, 1, 10, 20, 30, 123456700, time.UTC)
	rows := []map[string]any{
		{"RowKey": "1", "S": "apple", "I": int32(1), "L": aztables.EDMInt64(1 << 40), "D": 1.5, "B": true,
			"T": aztables.EDMDateTime(when), "G": aztables.EDMGUID("c9da6455-213d-42c9-9a79-3e9149a57833"), "X": aztables.EDMBinary([]byte{0x0a, 0xff})},
		{"RowKey": "2", "S": "Banana", "I": int32(-7), "L": aztables.EDMInt64(3), "D": 1.5e21, "B": false,
			"T": aztables.EDMDateTime(when.Add(time.Hour)), "G": aztables.EDMGUID("00000000-0000-0000-0000-000000000001"), "X": aztables.EDMBinary([]byte{0x01})},
		{"RowKey": "3", "S": "O'Brien", "I": int32(42), "D": -0.5, "Mixed": "5"},
		{"RowKey": "4", "Mixed": int32(5), "S": ""},
	}
	for _, r := range rows {
		r["PartitionKey"] = "p"
		props := map[string]any{}
		for k, v := range r {
			if k != "PartitionKey" && k != "RowKey" {
				props[k] = v
			}
		}
		e := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: r["RowKey"].(string)}, Properties: props}
		if _, err := tc.AddEntity(ctx, mustJSON(t, e), nil); err != nil {
			t.Fatalf("add: %v", err)
		}
	}
	tests := []struct {
		filter string
		want   string // row keys
	}{
		// String: ordinal, case-sensitive ('B' < 'a'), doubled quotes.
		{"S eq 'apple'", "1"},
		{"S lt 'a'", "2 3 4"},
		{"S gt 'B' and S lt 'a'", "2 3"},
		{"S eq 'O''Brien'", "3"},
		{"S eq ''", "4"},
		{"S ne 'apple'", "2 3 4"},
		{"'apple' eq S", "1"},
		// Int32 (and its widening to Int64 and Double properties).
		{"I eq 1", "1"},
		{"I lt 0", "2"},
		{"I ge 1", "1 3"},
		{"I le -7", "2"},
		{"I ne 42", "1 2"},
		{"I gt 100", ""},
		{"I eq 1L", ""},       // Int64 literal vs Int32 property: mismatch
		{"I lt 1.0", "1 2 3"}, // Double literal vs Int32 property: mismatch → lt is true
		{"L eq 3", "2"},       // Int32 literal widens to Int64
		{"L eq 1099511627776L", "1"},
		{"L gt 3L", "1"},
		{"D eq 1.5", "1"},
		{"D gt 1e20", "2"},
		{"D ge 1.5E+21", "2"},
		{"D lt 1.5e21", "1 3"},
		{"D lt 0", "3"},
		{"D le -0.5d", "3"},
		{"D eq 2", ""},
		{"D gt 2", "2"},
		{"D lt INF", "1 2 3"},
		{"D gt -INF", "1 2 3"},
		{"D eq NaN", ""},
		{"D ne NaN", "1 2 3"},
		// Boolean, including the bare form.
		{"B eq true", "1"},
		{"B eq false", "2"},
		{"B", "1"},
		{"not B", "2 3 4"},
		{"B ne true", "2"},
		// DateTime in the SDKs' spellings.
		{"T eq datetime'2024-05-01T10:20:30.1234567Z'", "1"},
		{"T gt datetime'2024-05-01T10:20:30.123Z'", "1 2"},
		{"T lt datetime'2024-05-01T10:20:30.123457Z'", "1"},
		{"T ge datetime'2024-05-01T12:20:30.1234567+01:00'", "2"},
		{"T le datetime'2024-05-01T10:20:31'", "1"},
		// Guid in either case; a string that looks like a GUID is a mismatch.
		{"G eq guid'C9DA6455-213D-42C9-9A79-3E9149A57833'", "1"},
		{"G ne guid'c9da6455-213d-42c9-9a79-3e9149a57833'", "2"},
		{"G eq 'c9da6455-213d-42c9-9a79-3e9149a57833'", ""},
		// Binary.
		{"X eq X'0aff'", "1"},
		{"X eq binary'0AFF'", "1"},
		{"X lt X'0aff'", "2"},
		// Mixed types per entity and missing properties.
		{"Mixed eq 5", "4"},
		{"Mixed eq '5'", "3"},
		{"Mixed ne 5", "3"},
		{"Missing ne 1", ""},
		{"not (Missing eq 1)", "1 2 3 4"},
		// Keys, logic and precedence.
		{"PartitionKey eq 'p' and RowKey ge '2' and RowKey lt '4'", "2 3"},
		{"RowKey eq '1' or RowKey eq '4' and S eq ''", "1 4"},
		{"(RowKey eq '1' or RowKey eq '4') and S eq ''", "4"},
		{"not(RowKey eq '1') and not (RowKey eq '2')", "3 4"},
		{"true", "1 2 3 4"},
		{"false", ""},
		{"Timestamp gt datetime'2000-01-01T00:00:00Z'", "1 2 3 4"},
	}
	for _, tc2 := range tests {
		all, _ := queryAll(t, tc, &aztables.ListEntitiesOptions{Filter: to.Ptr(tc2.filter)})
		var got []string
		for _, k := range queryKeysOf(all) {
			got = append(got, k.RK)
		}
		if s := strings.Join(got, " "); s != tc2.want {
			t.Errorf("%s: got %q, want %q", tc2.filter, s, tc2.want)
		}
	}
}

// TestQueryQuotedAndUnicodeKeys: keys with quotes and non-BMP/private-use characters are
// found by key filters and by point reads.
func TestQueryQuotedAndUnicodeKeys(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	keys := []queryKey{{"O'Brien", "it's"}, {"O'Brien", "''"}, {"😀", "\uE000"}, {"😀", "\uFFFD"}, {"\uE000", "x"}, {"é", "'"}}
	for i, k := range keys {
		ts.insertRawEntity(t, name, map[string]any{"PartitionKey": k.PK, "RowKey": k.RK, "N": i})
	}
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	for _, k := range keys {
		filter := "PartitionKey eq " + q(k.PK) + " and RowKey eq " + q(k.RK)
		all, _ := queryAll(t, tc, &aztables.ListEntitiesOptions{Filter: &filter})
		if got := queryKeysOf(all); len(got) != 1 || got[0] != k {
			t.Errorf("%s: got %q", filter, got)
		}
		if _, err := tc.GetEntity(ctx, k.PK, k.RK, nil); err != nil {
			t.Errorf("GetEntity(%q, %q): %v", k.PK, k.RK, err)
		}
	}
	all, _ := queryAll(t, tc, &aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'O''Brien'")})
	if got := queryKeysOf(all); !slices.Equal(got, []queryKey{{"O'Brien", "''"}, {"O'Brien", "it's"}}) {
		t.Errorf("partition O'Brien: %q", got)
	}
	// Emoji (a surrogate pair) sorts before U+E000 and U+FFFD in UTF-16 order.
	all, _ = queryAll(t, tc, &aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey ge '😀'")})
	want := []queryKey{{"😀", "\uE000"}, {"😀", "\uFFFD"}, {"\uE000", "x"}}
	if got := queryKeysOf(all); !slices.Equal(got, want) {
		t.Errorf("PartitionKey ge emoji: %q, want %q", got, want)
	}
	all, _ = queryAll(t, tc, &aztables.ListEntitiesOptions{Filter: to.Ptr("RowKey gt '\uE000'")})
	if got := queryKeysOf(all); !slices.Equal(got, []queryKey{{"😀", "\uFFFD"}}) {
		t.Errorf("RowKey gt U+E000: %q", got)
	}
}

// TestQuerySelect: $select returns the listed properties, null for a missing one, and the
// SDK still gets its keys when it asks for them.
func TestQuerySelect(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	for i, rk := range []string{"a", "b"} {
		props := map[string]any{"Name": "n" + rk, "Age": int32(30 + i), "Big": aztables.EDMInt64(1 << 40)}
		if _, err := tc.AddEntity(ctx, mustJSON(t, aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: rk}, Properties: props}), nil); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := queryAll(t, tc, &aztables.ListEntitiesOptions{Select: to.Ptr("RowKey,Name,Missing,Big"), Filter: to.Ptr("Age ge 30")})
	if len(all) != 2 {
		t.Fatalf("%d entities", len(all))
	}
	for _, m := range all {
		if _, ok := m["PartitionKey"]; ok {
			t.Errorf("unselected PartitionKey returned: %v", m)
		}
		if _, ok := m["Age"]; ok {
			t.Errorf("unselected Age returned: %v", m)
		}
		if v, ok := m["Missing"]; !ok || v != nil {
			t.Errorf("selected-but-missing property: %v (present %v), want null", v, ok)
		}
		if m["Name"] != "n"+fmt.Sprint(m["RowKey"]) || m["Big@odata.type"] != "Edm.Int64" || m["Big"] != "1099511627776" {
			t.Errorf("selected properties wrong: %v", m)
		}
		if _, ok := m["odata.etag"]; !ok {
			t.Errorf("odata.etag missing under $select: %v", m)
		}
	}
	// The metadata URL names the selection.
	status, _, body := ts.queryEntitiesRaw(t, name, url.Values{"$select": {"Name"}})
	var resp struct {
		Metadata string `json:"odata.metadata"`
	}
	if err := json.Unmarshal([]byte(body), &resp); status != 200 || err != nil || !strings.HasSuffix(resp.Metadata, "$metadata#"+name+"&$select=Name") {
		t.Errorf("metadata URL with $select: %d %s", status, body)
	}
}

// TestQueryErrors: malformed queries are 400 InvalidInput, filter errors name a position.
func TestQueryErrors(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	position := regexp.MustCompile(`position \d+`)
	tests := []struct {
		params  url.Values
		wantPos bool
	}{
		{url.Values{"$filter": {"PartitionKey eq 'unterminated"}}, true},
		{url.Values{"$filter": {"PartitionKey eq"}}, true},
		{url.Values{"$filter": {"(A eq 1"}}, true},
		{url.Values{"$filter": {"A eq 1 and"}}, true},
		{url.Values{"$filter": {"A eq null"}}, true},
		{url.Values{"$filter": {"A eq 5454161346626"}}, true},
		{url.Values{"$filter": {"startswith(A, 'x')"}}, true},
		{url.Values{"$filter": {"A add 1 eq 2"}}, true},
		{url.Values{"$filter": {"A eq B"}}, true},
		{url.Values{"$filter": {"A eq X'abc'"}}, true},
		{url.Values{"$filter": {"A eq datetime'2020-13-01T00:00:00Z'"}}, true},
		{url.Values{"$filter": {"A EQ 1"}}, true},
		{url.Values{"$top": {"1001"}}, false},
		{url.Values{"$top": {"-1"}}, false},
		{url.Values{"$top": {"ten"}}, false},
		{url.Values{"$select": {"a-b"}}, false},
		{url.Values{"NextPartitionKey": {"not-a-token"}}, false},
	}
	for _, tt := range tests {
		status, h, body := ts.queryEntitiesRaw(t, name, tt.params)
		if status != 400 || h.Get("x-ms-error-code") != "InvalidInput" || !strings.Contains(body, `"code":"InvalidInput"`) {
			t.Errorf("%v: %d %s %s", tt.params, status, h.Get("x-ms-error-code"), body)
			continue
		}
		if tt.wantPos && !position.MatchString(body) {
			t.Errorf("%v: message names no position: %s", tt.params, body)
		}
	}
	// The SDK surfaces them as *azcore.ResponseError.
	_, err := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("A eq null")}).NextPage(ctx)
	var re *azcore.ResponseError
	if !asQueryResponseError(err, &re) || re.StatusCode != 400 || re.ErrorCode != "InvalidInput" {
		t.Errorf("SDK eq null: %v", err)
	}
	_, err = tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](1001)}).NextPage(ctx)
	if !asQueryResponseError(err, &re) || re.StatusCode != 400 || re.ErrorCode != "InvalidInput" {
		t.Errorf("SDK top 1001: %v", err)
	}
	// Accepted edge cases: empty filter, $top=1000, an empty NextRowKey.
	for _, p := range []url.Values{{"$filter": {""}}, {"$top": {"1000"}}, {"NextPartitionKey": {"1!4!cDE-"}, "NextRowKey": {""}}} {
		if status, _, body := ts.queryEntitiesRaw(t, name, p); status != 200 {
			t.Errorf("%v: %d %s", p, status, body)
		}
	}
}

// TestQueryTopZero: $top=0 is an empty page without continuation (as Azure answers), for
// entities and tables alike; the table must still exist.
func TestQueryTopZero(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	for i := range 3 {
		mustAdd(t, tc, "p", fmt.Sprintf("r%d", i), i)
	}
	pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](0)})
	page, err := pager.NextPage(ctx)
	if err != nil {
		t.Fatalf("$top=0: %v", err)
	}
	if len(page.Entities) != 0 || page.NextPartitionKey != nil || page.NextRowKey != nil || pager.More() {
		t.Errorf("$top=0: %d entities, continuation %v/%v", len(page.Entities), page.NextPartitionKey, page.NextRowKey)
	}
	tp := ts.service(t).NewListTablesPager(&aztables.ListTablesOptions{Top: to.Ptr[int32](0)})
	tpage, err := tp.NextPage(ctx)
	if err != nil {
		t.Fatalf("tables $top=0: %v", err)
	}
	if len(tpage.Tables) != 0 || tpage.NextTableName != nil || tp.More() {
		t.Errorf("tables $top=0: %d tables, continuation %v", len(tpage.Tables), tpage.NextTableName)
	}
	_, err = ts.service(t).NewClient("nosuchtable").NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](0)}).NextPage(ctx)
	wantCode(t, err, 404, "TableNotFound")
}

// TestQueryUnsupportedODataOptions: $orderby, $skip, $expand, $count and $inlinecount are
// not implemented by the Table service; they are refused (501 NotImplemented, as Azure's
// front end answers OData features it lacks) instead of being silently ignored. No SDK sends
// them, hence raw requests (spelled as Python writes them and as Go encodes them).
func TestQueryUnsupportedODataOptions(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	mustAdd(t, tc, "p", "r", 1)
	for _, q := range []string{"$orderby=RowKey%20desc", "$skip=1", "$expand=X", "$count=true", "$inlinecount=allpages",
		"%24orderby=RowKey+desc", "$filter=PartitionKey%20eq%20'p'&$orderby=RowKey"} {
		for _, path := range []string{"/" + name + "()?" + q, "/Tables?" + q, "/" + name + "(PartitionKey='p',RowKey='r')?" + q} {
			status, h, body := ts.do(t, "GET", path, map[string]string{"Accept": "application/json;odata=minimalmetadata"}, "")
			if status != 501 || h.Get("x-ms-error-code") != "NotImplemented" || !strings.Contains(body, `"code":"NotImplemented"`) {
				t.Errorf("%s: %d %s", path, status, body)
			}
		}
	}
	// Names that merely resemble them are ignored, as any unknown parameter.
	if status, _, body := ts.do(t, "GET", "/"+name+"()?orderby=x&$orderbyx=1", nil, ""); status != 200 {
		t.Errorf("look-alike parameters: %d %s", status, body)
	}
}

func asQueryResponseError(err error, re **azcore.ResponseError) bool {
	return errors.As(err, re)
}

// TestQueryTablesFilter: Query Tables with filters, $top and NextTableName paging.
func TestQueryTablesFilter(t *testing.T) {
	ts := startServer(t)
	svc := ts.service(t)
	var names []string
	for i := range 12 {
		name := fmt.Sprintf("qry%02d", i)
		if i%3 == 0 {
			name = fmt.Sprintf("other%02d", i)
		}
		if _, err := svc.CreateTable(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	list := func(o *aztables.ListTablesOptions) ([]string, int) {
		var got []string
		pages := 0
		pager := svc.NewListTablesPager(o)
		for pager.More() {
			p, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, tb := range p.Tables {
				got = append(got, *tb.Name)
			}
		}
		return got, pages
	}
	got, pages := list(&aztables.ListTablesOptions{Filter: to.Ptr("TableName ge 'qry' and TableName lt 'qrz'"), Top: to.Ptr[int32](3)})
	want := []string{"qry01", "qry02", "qry04", "qry05", "qry07", "qry08", "qry10", "qry11"}
	if !slices.Equal(got, want) || pages != 3 {
		t.Errorf("prefix query: %v in %d pages, want %v in 3", got, pages, want)
	}
	got, _ = list(&aztables.ListTablesOptions{Filter: to.Ptr("TableName eq 'other03' or TableName eq 'qry11'")})
	if !slices.Equal(got, []string{"other03", "qry11"}) {
		t.Errorf("or query: %v", got)
	}
	got, _ = list(&aztables.ListTablesOptions{Filter: to.Ptr("TableName ne 'other00'")})
	if len(got) != len(names)-1 {
		t.Errorf("ne query: %v", got)
	}
	status, h, body := ts.do(t, "GET", "/Tables?"+url.Values{"$filter": {"TableName eq"}}.Encode(), map[string]string{"Accept": "application/json;odata=nometadata"}, "")
	if status != 400 || h.Get("x-ms-error-code") != "InvalidInput" {
		t.Errorf("bad table filter: %d %s", status, body)
	}
}

// TestQueryPlanHeader: every response names its plan and counts scanned vs returned entities.
func TestQueryPlanHeader(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	for _, pk := range []string{"a", "b", "c"} {
		var actions []aztables.TransactionAction
		for i := range 10 {
			e := map[string]any{"PartitionKey": pk, "RowKey": fmt.Sprintf("r%d", i), "N": int32(i)}
			actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, e)})
		}
		if _, err := tc.SubmitTransaction(ctx, actions, nil); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		filter            string
		kind              string
		scanned, returned int
	}{
		{"PartitionKey eq 'b' and RowKey eq 'r3'", "point", 1, 1},
		{"PartitionKey eq 'b' and RowKey ge 'r2' and RowKey lt 'r5'", "row-range", 3, 3},
		{"PartitionKey eq 'b' and RowKey ge 'r2' and N eq 4", "row-range", 8, 1},
		{"PartitionKey eq 'c'", "partition", 10, 10},
		{"PartitionKey eq 'c' and N lt 3", "partition", 10, 3},
		{"PartitionKey ge 'b'", "partition-range", 20, 20},
		{"PartitionKey gt 'a' and PartitionKey lt 'c' and N eq 9", "partition-range", 10, 1},
		{"N eq 9", "table-scan", 30, 3},
		{"", "table-scan", 30, 30},
		{"(PartitionKey eq 'a' and RowKey eq 'r1') or (PartitionKey eq 'c' and RowKey eq 'r1')", "union", 2, 2},
	}
	for _, tt := range tests {
		status, h, body := ts.queryEntitiesRaw(t, name, url.Values{"$filter": {tt.filter}})
		if status != 200 {
			t.Fatalf("%q: %d %s", tt.filter, status, body)
		}
		plan := h.Get("x-tablo-query-plan")
		wantSuffix := fmt.Sprintf("; scanned=%d; returned=%d", tt.scanned, tt.returned)
		if kind, _, _ := strings.Cut(plan, ";"); strings.Fields(kind)[0] != tt.kind || !strings.HasSuffix(plan, wantSuffix) {
			t.Errorf("%q: x-tablo-query-plan %q, want %s…%s", tt.filter, plan, tt.kind, wantSuffix)
		}
		var resp struct{ Value []json.RawMessage }
		if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Value) != tt.returned {
			t.Errorf("%q: %d entities in body (%v), header says %d", tt.filter, len(resp.Value), err, tt.returned)
		}
		if h.Get("x-ms-continuation-NextPartitionKey") != "" || h.Get("x-ms-continuation-NextRowKey") != "" {
			t.Errorf("%q: continuation on the only page", tt.filter)
		}
	}
	// A page cut by $top names its continuation; the last page has none.
	status, h, _ := ts.queryEntitiesRaw(t, name, url.Values{"$filter": {"N eq 9"}, "$top": {"2"}})
	npk, nrk := h.Get("x-ms-continuation-NextPartitionKey"), h.Get("x-ms-continuation-NextRowKey")
	if status != 200 || npk == "" || nrk == "" {
		t.Fatalf("top 2: %d, continuation %q %q", status, npk, nrk)
	}
	status, h, body := ts.queryEntitiesRaw(t, name, url.Values{"$filter": {"N eq 9"}, "$top": {"2"}, "NextPartitionKey": {npk}, "NextRowKey": {nrk}})
	if status != 200 || !strings.Contains(body, `"PartitionKey":"c"`) || h.Get("x-ms-continuation-NextPartitionKey") != "" {
		t.Fatalf("second page: %d %s %v", status, body, h)
	}
	if plan := h.Get("x-tablo-query-plan"); !strings.HasSuffix(plan, "; returned=1") {
		t.Errorf("second page plan %q", plan)
	}
}

// TestQueryClientEncodings: the query-string spellings of the JS and Python SDKs (literal
// $filter, %20 for spaces, raw continuation tokens whose base64 holds '+'), no "()" after
// the table name, and NextRowKey omitted.
func TestQueryClientEncodings(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	// ">>>" is "Pj4+" in base64: a raw token arrives with a space where the '+' was.
	for _, k := range []queryKey{{"a", "1"}, {">>>", "1"}, {">>>", ">>>"}, {">>>~", "x"}, {"b c", "+"}} {
		ts.insertRawEntity(t, name, map[string]any{"PartitionKey": k.PK, "RowKey": k.RK, "V": "v+" + k.RK})
	}
	hdr := map[string]string{"Accept": "application/json;odata=nometadata"}
	rowKeys := func(body string) string {
		var resp struct{ Value []map[string]any }
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		var out []string
		for _, e := range resp.Value {
			out = append(out, fmt.Sprint(e["PartitionKey"], "/", e["RowKey"]))
		}
		return strings.Join(out, " ")
	}
	tests := []struct {
		query, want, nextPK string
	}{
		{"()?$filter=PartitionKey%20eq%20'%3E%3E%3E'", ">>>/1 >>>/>>>", ""},
		{"?$filter=PartitionKey%20eq%20'%3E%3E%3E'&$top=1", ">>>/1", "1!4!Pj4+"},
		{"()?$filter=PartitionKey%20ge%20'%3E%3E%3E'&$top=1&NextPartitionKey=1!4!Pj4+&NextRowKey=1!4!Pj4+", ">>>/>>>", "1!8!Pj4+fg--"},
		{"()?$filter=V%20eq%20'v%2B%2B'", "b c/+", ""},
		{"()?$filter=PartitionKey+eq+'b+c'", "b c/+", ""},
		{"()?NextPartitionKey=1!8!Pj4+fg--", ">>>~/x a/1 b c/+", ""},
		{"()?NextRowKey=1!4!Pj4+", ">>>/1 >>>/>>> >>>~/x a/1 b c/+", ""}, // NextRowKey alone is ignored
		{"(PartitionKey='b%20c',RowKey='%2B')?$filter=V%20eq%20'nope'", "", ""},
	}
	for _, tt := range tests {
		status, h, body := ts.do(t, "GET", "/"+name+tt.query, hdr, "")
		if strings.Contains(tt.query, "RowKey='") {
			// A point GET tolerates $filter and ignores it.
			if status != 200 || !strings.Contains(body, `"RowKey":"+"`) {
				t.Errorf("%s: %d %s", tt.query, status, body)
			}
			continue
		}
		if status != 200 {
			t.Errorf("%s: %d %s", tt.query, status, body)
			continue
		}
		if got := rowKeys(body); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.query, got, tt.want)
		}
		if got := h.Get("x-ms-continuation-NextPartitionKey"); got != tt.nextPK {
			t.Errorf("%s: NextPartitionKey %q, want %q", tt.query, got, tt.nextPK)
		}
	}
}
