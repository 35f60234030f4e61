package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/internal/auth"
)

// Entity group transactions (spec/batch.md): every operation kind through the Go SDK, the
// exact wire shape of success and failure, every rule with Azure's status, code and index,
// and all-or-nothing.

func mustAddETag(t *testing.T, tc *aztables.Client, body string) azcore.ETag {
	t.Helper()
	r, err := tc.AddEntity(ctx, []byte(body), nil)
	if err != nil {
		t.Fatalf("add %s: %v", body, err)
	}
	return r.ETag
}

func TestBatchEveryOperationKindSDK(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	seed := map[string]azcore.ETag{}
	for _, rk := range []string{"u1", "u2", "m1", "m2", "ur", "um", "d1", "d2", "keep"} {
		seed[rk] = mustAddETag(t, tc, fmt.Sprintf(`{"PartitionKey":"p","RowKey":%q,"Old":"o","V":"seed"}`, rk))
	}
	star := azcore.ETagAny
	et := func(rk string) *azcore.ETag { e := seed[rk]; return &e }
	ent := func(rk, v string) []byte { return fmt.Appendf(nil, `{"PartitionKey":"p","RowKey":%q,"V":%q}`, rk, v) }
	actions := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: ent("new", "added")},
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: ent("u1", "r-etag"), IfMatch: et("u1")},
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: ent("u2", "r-star"), IfMatch: &star},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: ent("m1", "m-etag"), IfMatch: et("m1")},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: ent("m2", "m-star"), IfMatch: &star},
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: ent("ur", "ur")},
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: ent("ur2", "ur2")},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: ent("um", "um")},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: ent("um2", "um2")},
		{ActionType: aztables.TransactionTypeDelete, Entity: ent("d1", ""), IfMatch: et("d1")},
		{ActionType: aztables.TransactionTypeDelete, Entity: ent("d2", "")}, // SDK sends If-Match: *
	}
	if _, err := tc.SubmitTransaction(ctx, actions, nil); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{ // row → properties after the batch
		"new": "map[V:added]", "u1": "map[V:r-etag]", "u2": "map[V:r-star]",
		"m1": "map[Old:o V:m-etag]", "m2": "map[Old:o V:m-star]",
		"ur": "map[V:ur]", "ur2": "map[V:ur2]", "um": "map[Old:o V:um]", "um2": "map[V:um2]",
		"keep": "map[Old:o V:seed]",
	}
	var batchETag azcore.ETag
	var batchTS aztables.EDMDateTime
	for rk, props := range want {
		e, etag := getEDM(t, tc, "p", rk)
		if got := fmt.Sprint(e.Properties); got != props {
			t.Errorf("%s: %s, want %s", rk, got, props)
		}
		if rk == "keep" {
			if etag != seed[rk] {
				t.Errorf("untouched entity's ETag changed: %s → %s", seed[rk], etag)
			}
			continue
		}
		if etag == seed[rk] {
			t.Errorf("%s: ETag unchanged", rk)
		}
		// One batch, one Timestamp: every written entity carries the same ETag.
		if batchETag == "" {
			batchETag, batchTS = etag, e.Timestamp
		} else if etag != batchETag || e.Timestamp != batchTS {
			t.Errorf("%s: ETag %s / Timestamp %v, others have %s / %v", rk, etag, e.Timestamp, batchETag, batchTS)
		}
	}
	for _, rk := range []string{"d1", "d2"} {
		_, err := tc.GetEntity(ctx, "p", rk, nil)
		wantCode(t, err, 404, "ResourceNotFound")
	}
	// The old ETags are now stale for a second transaction.
	_, err := tc.SubmitTransaction(ctx, []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: ent("keep", "x"), IfMatch: et("keep")},
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: ent("u1", "x"), IfMatch: et("u1")},
	}, nil)
	wantSDKBatchError(t, err, "UpdateConditionNotSatisfied", 1)
}

// TestBatchWireSuccess replays spec/wire-samples/go/29-batch-mixed.txt and checks the
// response byte shapes of spec/batch.md §3 and that every part's ETag is the stored one.
func TestBatchWireSuccess(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	for _, rk := range []string{"b2", "b3", "b5"} {
		mustAddETag(t, tc, fmt.Sprintf(`{"PartitionKey":"batch","RowKey":%q,"Old":1}`, rk))
	}
	r := ts.postBatch(t, batchBody([]changesetOp{
		ts.insertOp(name, `{"I64":"1","I64@odata.type":"Edm.Int64","PartitionKey":"batch","RowKey":"b1","V":"added"}`),
		ts.writeOp("PUT", name, "batch", "b2", "", `{"PartitionKey":"batch","RowKey":"b2","V":"replaced"}`),
		ts.writeOp("PATCH", name, "batch", "b3", "*", `{"PartitionKey":"batch","RowKey":"b3","V":"merged"}`),
		ts.writeOp("PUT", name, "batch", "b4", "", `{"PartitionKey":"batch","RowKey":"b4","V":"upsert-replace"}`),
		ts.writeOp("PATCH", name, "batch", "b6", "", `{"PartitionKey":"batch","RowKey":"b6","V":"upsert-merge"}`),
		ts.deleteOp(name, "batch", "b5", "*"),
	}))
	if r.status != http.StatusAccepted || len(r.parts) != 6 {
		t.Fatalf("status %d, %d parts:\n%s", r.status, len(r.parts), r.raw)
	}
	for _, k := range []string{"x-ms-request-id", "x-ms-version", "Date", "Cache-Control", "X-Content-Type-Options"} {
		if r.header.Get(k) == "" {
			t.Errorf("outer response lacks %s: %v", k, r.header)
		}
	}
	// Each body-less part closes its header block with its own empty line (spec/batch.md §3).
	if n := strings.Count(r.raw, "\r\n\r\n\r\n--changesetresponse_"); n != 6 {
		t.Errorf("%d parts end with CRLF CRLF CRLF before the delimiter, want 6", n)
	}
	if !strings.Contains(r.raw, "\r\nETag: W/\"datetime'") {
		t.Errorf("no case-exact ETag header:\n%s", r.raw)
	}
	if !strings.HasSuffix(r.raw, "--\r\n") {
		t.Errorf("response does not end with the close delimiter")
	}
	var first string
	for i, p := range r.parts {
		if p.status != http.StatusNoContent || p.body != "" {
			t.Errorf("part %d: %d %q", i, p.status, p.body)
		}
		etag := p.header.Get("ETag")
		if i == 5 {
			if etag != "" || p.header.Get("DataServiceVersion") != "1.0;" {
				t.Errorf("delete part: ETag %q DataServiceVersion %q", etag, p.header.Get("DataServiceVersion"))
			}
			continue
		}
		if first == "" {
			first = etag
		} else if etag != first {
			t.Errorf("part %d ETag %s, part 0 has %s: one batch, one Timestamp", i, etag, first)
		}
	}
	ins := r.parts[0].header
	loc := ts.entityURL(name, "batch", "b1")
	if ins.Get("Preference-Applied") != "return-no-content" || ins.Get("Location") != loc ||
		ins.Get("DataServiceId") != loc || ins.Get("DataServiceVersion") != "3.0;" {
		t.Errorf("insert part headers: %v", ins)
	}
	for i, rk := range []string{"b1", "b2", "b3", "b4", "b6"} {
		e, etag := getEDM(t, tc, "batch", rk)
		if string(etag) != r.parts[i].header.Get("ETag") {
			t.Errorf("%s: stored ETag %s, batch said %s", rk, etag, r.parts[i].header.Get("ETag"))
		}
		if rk == "b1" && e.Properties["I64"] != aztables.EDMInt64(1) {
			t.Errorf("b1: %v", e.Properties)
		}
		if rk == "b3" && fmt.Sprint(e.Properties) != "map[Old:1 V:merged]" {
			t.Errorf("b3 after merge: %v", e.Properties)
		}
	}
	_, err := tc.GetEntity(ctx, "batch", "b5", nil)
	wantCode(t, err, 404, "ResourceNotFound")
}

// batchFixture is a table holding "seed" (current ETag fresh) and "victim" (ETag stale is
// the one it had before its last update), for rule-violation cases.
type batchFixture struct {
	ts             *testServer
	tc             *aztables.Client
	name           string
	fresh, stale   string
	otherTable     string
	snapshotBefore string
	otherBefore    string
}

func newBatchFixture(t *testing.T, ts *testServer) *batchFixture {
	f := &batchFixture{ts: ts, tc: ts.newTable(t)}
	f.name = tableNameOf(t, f.tc)
	f.otherTable = tableNameOf(t, ts.newTable(t))
	f.fresh = string(mustAddETag(t, f.tc, `{"PartitionKey":"p","RowKey":"seed","V":1}`))
	f.stale = string(mustAddETag(t, f.tc, `{"PartitionKey":"p","RowKey":"victim","V":1}`))
	if _, err := f.tc.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"victim","V":2}`), nil); err != nil {
		t.Fatal(err)
	}
	mustAddETag(t, f.tc, `{"PartitionKey":"q","RowKey":"other","V":1}`)
	f.snapshotBefore = ts.tableSnapshot(t, f.name)
	f.otherBefore = ts.tableSnapshot(t, f.otherTable)
	return f
}

func (f *batchFixture) ins(rk string) changesetOp {
	return f.ts.insertOp(f.name, fmt.Sprintf(`{"PartitionKey":"p","RowKey":%q,"V":9}`, rk))
}

func (f *batchFixture) merge(rk, ifMatch string) changesetOp {
	return f.ts.writeOp("PATCH", f.name, "p", rk, ifMatch, `{"V":9,"W":true}`)
}

func (f *batchFixture) replace(rk, ifMatch string) changesetOp {
	return f.ts.writeOp("PUT", f.name, "p", rk, ifMatch, `{"V":9}`)
}

func (f *batchFixture) del(rk, ifMatch string) changesetOp {
	return f.ts.deleteOp(f.name, "p", rk, ifMatch)
}

func manyInserts(f *batchFixture, n int) []changesetOp {
	ops := make([]changesetOp, n)
	for i := range ops {
		ops[i] = f.ins(fmt.Sprintf("n%03d", i))
	}
	return ops
}

// TestBatchRuleViolations checks every rule of spec/batch.md §1/§4.1 with the status, code and
// index Azure reports, and that the failed batch changed nothing (snapshot byte-equal).
func TestBatchRuleViolations(t *testing.T) {
	ts := startServer(t)
	cases := []struct {
		name   string
		ops    func(f *batchFixture) []changesetOp
		status int
		code   string
		index  int
	}{
		{"101 operations", func(f *batchFixture) []changesetOp { return manyInserts(f, 101) }, 400, "InvalidInput", 99},
		{"different partitions", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.merge("seed", "*"),
				f.ts.insertOp(f.name, `{"PartitionKey":"q","RowKey":"b"}`), f.ins("c")}
		}, 400, "CommandsInBatchActOnDifferentPartitions", 2},
		{"different partition by URL key", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.ts.writeOp("PUT", f.name, "q", "other", "*", `{"PartitionKey":"p","RowKey":"other"}`)}
		}, 400, "CommandsInBatchActOnDifferentPartitions", 1},
		{"same entity twice", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("x"), f.merge("seed", "*"), f.replace("x", "")}
		}, 400, "InvalidDuplicateRow", 2},
		{"same existing entity twice", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.merge("seed", "*"), f.del("seed", "*")}
		}, 400, "InvalidDuplicateRow", 1},
		{"different tables", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.ts.insertOp(f.otherTable, `{"PartitionKey":"p","RowKey":"b"}`)}
		}, 400, "InvalidInput", 1},
		{"GET inside a changeset", func(f *batchFixture) []changesetOp {
			get := changesetOp{method: "GET", url: f.ts.entityURL(f.name, "p", "seed"), header: [][2]string{{"Accept", "application/json"}}}
			return []changesetOp{f.ins("a"), get}
		}, 400, "InvalidInput", 1},
		{"insert of an existing entity", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.ins("seed"), f.ins("b")}
		}, 409, "EntityAlreadyExists", 1},
		{"update of a missing entity", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.merge("seed", "*"), f.replace("missing", "*")}
		}, 404, "ResourceNotFound", 2},
		{"merge of a missing entity", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.merge("missing", "*"), f.ins("a")}
		}, 404, "ResourceNotFound", 0},
		{"delete of a missing entity", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.del("missing", "*")}
		}, 404, "ResourceNotFound", 1},
		{"delete of an entity inserted earlier in the batch is a duplicate", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.del("a", "*")}
		}, 400, "InvalidDuplicateRow", 1},
		{"stale ETag on replace", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.replace("seed", f.fresh), f.replace("victim", f.stale)}
		}, 412, "UpdateConditionNotSatisfied", 2},
		{"stale ETag on merge", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.merge("victim", f.stale), f.ins("a")}
		}, 412, "UpdateConditionNotSatisfied", 0},
		{"stale ETag on delete", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.del("seed", f.fresh), f.del("victim", f.stale)}
		}, 412, "UpdateConditionNotSatisfied", 1},
		{"malformed If-Match", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.merge("seed", "not-an-etag")}
		}, 400, "InvalidInput", 1},
		{"invalid property type in op 2", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.ins("b"), f.ts.insertOp(f.name, `{"PartitionKey":"p","RowKey":"c","A@odata.type":"Edm.Byte","A":1}`)}
		}, 400, "InvalidInput", 2},
		{"forbidden key character in op 1", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.ts.insertOp(f.name, `{"PartitionKey":"p","RowKey":"a#b"}`)}
		}, 400, "OutOfRangeInput", 1},
		{"missing RowKey in op 1", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.ts.insertOp(f.name, `{"PartitionKey":"p"}`)}
		}, 400, "PropertiesNeedValue", 1},
		{"property too large in op 3", func(f *batchFixture) []changesetOp {
			big := strings.Repeat("x", 32*1024+1)
			return []changesetOp{f.ins("a"), f.ins("b"), f.ins("c"), f.ts.insertOp(f.name, `{"PartitionKey":"p","RowKey":"d","S":"`+big+`"}`)}
		}, 400, "PropertyValueTooLarge", 3},
		{"malformed JSON in the last op", func(f *batchFixture) []changesetOp {
			return []changesetOp{f.ins("a"), f.merge("seed", "*"), f.ts.writeOp("PATCH", f.name, "p", "z", "", `{"V":`)}
		}, 400, "InvalidInput", 2},
		{"merge past 252 properties", func(f *batchFixture) []changesetOp {
			var b strings.Builder
			b.WriteString(`{"X":1`)
			for i := range 251 {
				fmt.Fprintf(&b, `,"P%d":1`, i)
			}
			b.WriteString("}")
			return []changesetOp{f.ins("a"), f.ts.writeOp("PATCH", f.name, "p", "seed", "*", b.String())}
		}, 400, "TooManyProperties", 1},
		{"unescaped quote in a key (Go SDK)", func(f *batchFixture) []changesetOp {
			op := f.replace("x", "")
			op.url = f.ts.endpoint + "/" + f.name + "(PartitionKey='p',RowKey='r%273')"
			return []changesetOp{f.ins("a"), op}
		}, 400, "InvalidInput", 1},
		{"unknown verb", func(f *batchFixture) []changesetOp {
			op := f.replace("x", "")
			op.method = "COPY"
			return []changesetOp{f.ins("a"), op}
		}, 400, "InvalidInput", 1},
		{"insert addressed to an entity URL", func(f *batchFixture) []changesetOp {
			op := f.ins("x")
			op.url = f.ts.entityURL(f.name, "p", "x")
			return []changesetOp{f.ins("a"), op}
		}, 400, "InvalidInput", 1},
		{"missing table", func(f *batchFixture) []changesetOp {
			return []changesetOp{
				f.ts.insertOp("nosuchtable", `{"PartitionKey":"p","RowKey":"a"}`),
				f.ts.insertOp("nosuchtable", `{"PartitionKey":"p","RowKey":"b"}`),
			}
		}, 404, "TableNotFound", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newBatchFixture(t, ts)
			r := ts.postBatch(t, batchBody(c.ops(f)))
			wantBatchFailure(t, r, c.status, c.code, c.index)
			if after := ts.tableSnapshot(t, f.name); after != f.snapshotBefore {
				t.Fatalf("failed batch changed the table:\nbefore %s\nafter  %s", f.snapshotBefore, after)
			}
			if after := ts.tableSnapshot(t, f.otherTable); after != f.otherBefore {
				t.Fatalf("failed batch wrote to another table: %s", after)
			}
		})
	}
}

// TestBatchInvalidEntityMatchesStandAlone: an invalid entity in a batch fails with the same
// status and code as the stand-alone insert (spec/batch.md §4 "same code as stand-alone").
func TestBatchInvalidEntityMatchesStandAlone(t *testing.T) {
	ts := startServer(t)
	f := newBatchFixture(t, ts)
	big := strings.Repeat("x", 32*1024)
	var huge strings.Builder
	for i := range 20 {
		fmt.Fprintf(&huge, `,"S%d":"%s"`, i, big)
	}
	for _, tt := range []struct{ code, body string }{
		{"PropertiesNeedValue", `{"A":1}`},
		{"PropertiesNeedValue", `{"PartitionKey":null,"RowKey":"r"}`},
		{"InvalidInput", `{"PartitionKey":"p","RowKey":"r","A":[1]}`},
		{"DuplicatePropertiesSpecified", `{"PartitionKey":"p","RowKey":"r","A":1,"A":2}`},
		{"InvalidInput", `{"PartitionKey":"p","RowKey":"r","A":"abc","A@odata.type":"Edm.Int64"}`},
		{"InvalidInput", `{"PartitionKey":"p","RowKey":"r","A":3000000000}`},
		{"OutOfRangeInput", `{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.DateTime","A":"0001-01-01T00:00:00Z"}`},
		{"PropertyNameInvalid", `{"PartitionKey":"p","RowKey":"r","a-b":1}`},
		{"PropertyNameTooLong", `{"PartitionKey":"p","RowKey":"r","` + strings.Repeat("n", 256) + `":1}`},
		{"OutOfRangeInput", `{"PartitionKey":"p","RowKey":"r/s"}`},
		{"OutOfRangeInput", `{"PartitionKey":"p","RowKey":"r\u0001"}`},
		{"PropertyValueTooLarge", `{"PartitionKey":"p","RowKey":"` + strings.Repeat("k", 1025) + `"}`},
		{"EntityTooLarge", `{"PartitionKey":"p","RowKey":"r"` + huge.String() + `}`},
	} {
		body := tt.body
		status, h, _ := ts.do(t, "POST", "/"+f.name, map[string]string{"Content-Type": "application/json"}, body)
		code := h.Get("x-ms-error-code")
		if status != 400 || code != tt.code {
			t.Fatalf("stand-alone insert: %d %s, want 400 %s: %.80s", status, code, tt.code, body)
		}
		r := ts.postBatch(t, batchBody([]changesetOp{f.ins("a"), f.ts.insertOp(f.name, body)}))
		t.Run(fmt.Sprintf("%.40s", body), func(t *testing.T) { wantBatchFailure(t, r, status, code, 1) })
	}
	if after := ts.tableSnapshot(t, f.name); after != f.snapshotBefore {
		t.Fatalf("failed batches changed the table")
	}
}

// TestBatchRollbackOfLastOperation: every kind of write before a failing last operation is
// undone; the table is byte-for-byte what it was, ETags and Timestamps included.
func TestBatchRollbackOfLastOperation(t *testing.T) {
	ts := startServer(t)
	f := newBatchFixture(t, ts)
	for i := range 5 {
		mustAddETag(t, f.tc, fmt.Sprintf(`{"PartitionKey":"p","RowKey":"e%d","V":%d,"S":"keep"}`, i, i))
	}
	before := ts.tableSnapshot(t, f.name)
	ops := []changesetOp{
		f.ins("brand-new"),
		f.replace("e0", "*"),
		f.merge("e1", "*"),
		f.ts.writeOp("PUT", f.name, "p", "e2", "", `{"Upserted":true}`),
		f.ts.writeOp("PATCH", f.name, "p", "e3", "", `{"Merged":true}`),
		f.del("e4", "*"),
		f.ts.writeOp("PUT", f.name, "p", "fresh-upsert", "", `{"X":1}`),
		f.del("seed", f.fresh),
		f.merge("victim", f.stale), // fails: 412
	}
	wantBatchFailure(t, ts.postBatch(t, batchBody(ops)), 412, "UpdateConditionNotSatisfied", len(ops)-1)
	if after := ts.tableSnapshot(t, f.name); after != before {
		t.Fatalf("failed batch changed the table:\nbefore %s\nafter  %s", before, after)
	}
	// The same batch without its failing operation applies whole.
	r := ts.postBatch(t, batchBody(ops[:len(ops)-1]))
	if r.status != http.StatusAccepted || len(r.parts) != len(ops)-1 {
		t.Fatalf("status %d, %d parts:\n%s", r.status, len(r.parts), r.raw)
	}
	for _, rk := range []string{"e4", "seed"} {
		_, err := f.tc.GetEntity(ctx, "p", rk, nil)
		wantCode(t, err, 404, "ResourceNotFound")
	}
	if e, _ := getEDM(t, f.tc, "p", "e1"); fmt.Sprint(e.Properties) != "map[S:keep V:9 W:true]" {
		t.Fatalf("e1 after merge: %v", e.Properties)
	}
}

// TestBatchLimits: exactly 100 operations and a body just under 4 MiB are accepted; 101
// operations are refused by index; a body over 4 MiB is a whole-request 413.
func TestBatchLimits(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)

	actions := make([]aztables.TransactionAction, 100)
	for i := range actions {
		actions[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
			Entity: fmt.Appendf(nil, `{"PartitionKey":"hundred","RowKey":"r%03d","N":%d}`, i, i)}
	}
	if _, err := tc.SubmitTransaction(ctx, actions, nil); err != nil {
		t.Fatalf("100 operations: %v", err)
	}
	if n := countPartition(t, tc, "hundred"); n != 100 {
		t.Fatalf("%d entities after a 100-operation batch", n)
	}
	actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
		Entity: []byte(`{"PartitionKey":"hundred","RowKey":"r100"}`)})
	for i := range actions {
		actions[i].ActionType = aztables.TransactionTypeInsertReplace
	}
	_, err := tc.SubmitTransaction(ctx, actions, nil)
	wantSDKBatchError(t, err, "InvalidInput", 99)

	// 100 inserts of ~41 KB each: just under 4 MiB in all.
	chunk := strings.Repeat("y", 20500)
	ops := make([]changesetOp, 100)
	for i := range ops {
		ops[i] = ts.insertOp(name, fmt.Sprintf(`{"PartitionKey":"big","RowKey":"r%03d","A":"%s","B":"%s"}`, i, chunk, chunk))
	}
	body := batchBody(ops)
	if len(body) > 4<<20 || len(body) < 4<<20-100<<10 {
		t.Fatalf("body of %d bytes is not just under 4 MiB", len(body))
	}
	if r := ts.postBatch(t, body); r.status != http.StatusAccepted || len(r.parts) != 100 || r.parts[99].status != 204 {
		t.Fatalf("near-limit batch: %d %.300s", r.status, r.raw)
	}
	if n := countPartition(t, tc, "big"); n != 100 {
		t.Fatalf("%d entities after the near-limit batch", n)
	}

	// Over 4 MiB by one byte (read, then refused) and by far (refused on Content-Length).
	over := batchBody([]changesetOp{ts.insertOp(name, `{"PartitionKey":"over","RowKey":"r"}`)})
	over += strings.Repeat("\r\n", (4<<20+1-len(over))/2+1)
	wantRequestError(t, ts.postBatch(t, over[:4<<20+1]), http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
	huge := strings.Repeat(ops[0].body, 6<<20/len(ops[0].body))
	wantRequestError(t, ts.postBatch(t, batchBody([]changesetOp{ts.insertOp(name, huge)})), http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
	if n := countPartition(t, tc, "over"); n != 0 {
		t.Fatalf("oversized batch wrote %d entities", n)
	}
}

func countPartition(t *testing.T, tc *aztables.Client, pk string) int {
	t.Helper()
	filter := fmt.Sprintf("PartitionKey eq '%s'", pk)
	pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	n := 0
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(p.Entities)
	}
	return n
}

// TestBatchMalformedRequests: a request that cannot be read as a batch is a whole-request
// error with a JSON body, never a 202 (spec/batch.md §4.2).
func TestBatchMalformedRequests(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	good := batchBody([]changesetOp{ts.insertOp(name, `{"PartitionKey":"p","RowKey":"r"}`)})
	ct := "multipart/mixed; boundary=" + testBatchBoundary
	secondChangeset := strings.TrimSuffix(good, "--"+testBatchBoundary+"--\r\n") + good
	cases := []struct {
		name, contentType, body string
	}{
		{"JSON content type", "application/json", good},
		{"no boundary", "multipart/mixed", good},
		{"wrong boundary", "multipart/mixed; boundary=batch_other", good},
		{"empty body", ct, ""},
		{"no delimiter", ct, "hello world\r\n"},
		{"changeset without boundary", ct, strings.Replace(good, "; boundary="+testChangesetBoundary, "", 1)},
		{"batch part of another type", ct, strings.Replace(good, "multipart/mixed; boundary="+testChangesetBoundary, "text/plain", 1)},
		{"two changesets", ct, secondChangeset},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantRequestError(t, ts.postBatchAs(t, c.contentType, c.body), http.StatusBadRequest, "InvalidInput")
		})
	}
	if n := countPartition(t, tc, "p"); n != 0 {
		t.Fatalf("malformed batches wrote %d entities", n)
	}
	// A malformed sub-request is the failure of that operation, inside a 202.
	garbled := ts.insertOp(name, `{"PartitionKey":"p","RowKey":"b"}`)
	garbled.method = "PO\x01ST"
	bad := batchBody([]changesetOp{ts.insertOp(name, `{"PartitionKey":"p","RowKey":"a"}`), garbled})
	wantBatchFailure(t, ts.postBatch(t, bad), 400, "InvalidInput", 1)
}

// TestBatchPreferReturnContent: inserts in a batch answer 201 with the entity unless
// Prefer: return-no-content (204), as stand-alone inserts do (spec/batch.md §3).
func TestBatchPreferReturnContent(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	withPrefer := func(rk, prefer, accept string) changesetOp {
		op := ts.insertOp(name, fmt.Sprintf(`{"PartitionKey":"p","RowKey":%q,"V":"x"}`, rk))
		var h [][2]string
		for _, kv := range op.header {
			switch kv[0] {
			case "Prefer":
				if prefer != "" {
					h = append(h, [2]string{"Prefer", prefer})
				}
			case "Accept":
				h = append(h, [2]string{"Accept", accept})
			default:
				h = append(h, kv)
			}
		}
		op.header = h
		op.url = ts.endpoint + "/" + name
		return op
	}
	const minimal, none, full = "application/json;odata=minimalmetadata", "application/json;odata=nometadata", "application/json;odata=fullmetadata"
	r := ts.postBatch(t, batchBody([]changesetOp{
		withPrefer("none", "", minimal),
		withPrefer("content", "return-content", minimal),
		withPrefer("nocontent", "return-no-content", minimal),
		withPrefer("nometa", "return-content", none),
		withPrefer("fullmeta", "", full),
	}))
	if r.status != http.StatusAccepted || len(r.parts) != 5 {
		t.Fatalf("status %d, %d parts:\n%s", r.status, len(r.parts), r.raw)
	}
	for i, c := range []struct {
		rk, status, applied, contentType, metadata string
	}{
		{"none", "201", "", minimal, "minimal"},
		{"content", "201", "return-content", minimal, "minimal"},
		{"nocontent", "204", "return-no-content", "", ""},
		{"nometa", "201", "return-content", none, "none"},
		{"fullmeta", "201", "", full, "full"},
	} {
		p := r.parts[i]
		_, storedETag := getEDM(t, tc, "p", c.rk)
		if fmt.Sprint(p.status) != c.status || p.header.Get("Preference-Applied") != c.applied ||
			p.header.Get("ETag") != string(storedETag) || !strings.Contains(p.header.Get("Location"), "RowKey='"+c.rk+"'") {
			t.Errorf("%s: %d Preference-Applied %q ETag %q Location %q", c.rk, p.status, p.header.Get("Preference-Applied"), p.header.Get("ETag"), p.header.Get("Location"))
		}
		if c.status == "204" {
			if p.body != "" || p.header.Get("Content-Type") != "" {
				t.Errorf("%s: 204 with body %q", c.rk, p.body)
			}
			continue
		}
		if !strings.HasPrefix(p.header.Get("Content-Type"), c.contentType) {
			t.Errorf("%s: Content-Type %q", c.rk, p.header.Get("Content-Type"))
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(p.body), &body); err != nil {
			t.Fatalf("%s: body %q: %v", c.rk, p.body, err)
		}
		if body["PartitionKey"] != "p" || body["RowKey"] != c.rk || body["V"] != "x" || body["Timestamp"] == nil {
			t.Errorf("%s: body %s", c.rk, p.body)
		}
		_, hasMeta := body["odata.metadata"]
		_, hasType := body["odata.type"]
		if hasMeta != (c.metadata != "none") || hasType != (c.metadata == "full") {
			t.Errorf("%s: metadata level %s, body %s", c.rk, c.metadata, p.body)
		}
		if c.metadata != "none" && body["odata.etag"] != string(storedETag) {
			t.Errorf("%s: odata.etag %v, stored %s", c.rk, body["odata.etag"], storedETag)
		}
	}
}

// TestBatchReplaySDKWireSamples sends the exact $batch bodies the Go, JS and Python SDKs sent
// (spec/wire-samples/*/29-batch-mixed.txt and 30-batch-fails.txt, kept in the batch codec's
// testdata), rebased on this server, and checks Azure's answers.
func TestBatchReplaySDKWireSamples(t *testing.T) {
	ts := startServer(t)
	for _, client := range []string{"go", "js", "python"} {
		t.Run(client, func(t *testing.T) {
			table := map[string]string{"go": "gowire", "js": "jswire", "python": "pywire"}[client]
			if _, err := ts.service(t).CreateTable(ctx, table, nil); err != nil {
				t.Fatal(err)
			}
			tc := ts.service(t).NewClient(table)
			for _, rk := range []string{"b2", "b3", "b5"} {
				mustAddETag(t, tc, fmt.Sprintf(`{"PartitionKey":"batch","RowKey":%q,"Old":1}`, rk))
			}
			r := ts.replayBatch(t, client+"-29-batch-mixed")
			if r.status != http.StatusAccepted || len(r.parts) != 6 {
				t.Fatalf("29: %d, %d parts:\n%s", r.status, len(r.parts), r.raw)
			}
			for i, p := range r.parts {
				if p.status != http.StatusNoContent || (i < 5) != (p.header.Get("ETag") != "") {
					t.Errorf("29 part %d: %d ETag %q", i, p.status, p.header.Get("ETag"))
				}
			}
			want := map[string]string{
				"b1": "map[I64:1 V:added]", "b2": "map[V:replaced]", "b3": "map[Old:1 V:merged]",
				"b4": "map[V:upsert-replace]", "b6": "map[V:upsert-merge]",
			}
			for rk, props := range want {
				e, etag := getEDM(t, tc, "batch", rk)
				if got := fmt.Sprint(e.Properties); got != props || string(etag) != r.parts[0].header.Get("ETag") {
					t.Errorf("%s: %s %s, want %s %s", rk, got, etag, props, r.parts[0].header.Get("ETag"))
				}
			}
			_, err := tc.GetEntity(ctx, "batch", "b5", nil)
			wantCode(t, err, 404, "ResourceNotFound")

			before := ts.tableSnapshot(t, table)
			wantBatchFailure(t, ts.replayBatch(t, client+"-30-batch-fails"), 409, "EntityAlreadyExists", 1)
			if after := ts.tableSnapshot(t, table); after != before {
				t.Fatalf("30: failed batch changed the table")
			}
		})
	}
}

// replayBatch posts the body of internal/batch/testdata/requests/<name>.http with its own
// Content-Type, with the capture proxy's address replaced by this server's.
func (ts *testServer) replayBatch(t *testing.T, name string) batchReply {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "internal", "batch", "testdata", "requests", name+".http"))
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := strings.Cut(string(raw), "\r\n\r\n")
	if !ok {
		t.Fatalf("%s: no header block", name)
	}
	var contentType string
	for line := range strings.SplitSeq(head, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Type") {
			contentType = strings.TrimSpace(v)
		}
	}
	body = strings.ReplaceAll(body, "http://127.0.0.1:13010/devstoreaccount1", ts.endpoint)
	return ts.postBatchAs(t, contentType, body)
}

// TestBatchSpecialKeysSDK: keys that need percent-encoding survive a transaction's
// sub-request URLs (spec/batch.md §2), and Go's undoubled quote is a clean 400.
func TestBatchSpecialKeysSDK(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	keys := []string{" ", "a b", "100%", "%27", "+plus+", "&amp;", "ünï", "😀", "(paren)", "comma,", "=eq", `quote"d`, "*", ":colon", "x=',RowKey='y"}
	pk := "pk (ü) 100% +"
	var upserts, merges, deletes []aztables.TransactionAction
	for i, rk := range keys {
		if strings.Contains(rk, "'") {
			continue // Go aztables v1.4.1 does not double quotes in batch URLs; see below
		}
		e := func(v int) []byte {
			return mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": rk, "I": v})
		}
		upserts = append(upserts, aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: e(i)})
		merges = append(merges, aztables.TransactionAction{ActionType: aztables.TransactionTypeUpdateMerge, Entity: e(i + 100), IfMatch: to.Ptr(azcore.ETagAny)})
		deletes = append(deletes, aztables.TransactionAction{ActionType: aztables.TransactionTypeDelete, Entity: e(0)})
	}
	for _, step := range [][]aztables.TransactionAction{upserts, merges} {
		if _, err := tc.SubmitTransaction(ctx, step, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i, rk := range keys {
		if strings.Contains(rk, "'") {
			continue
		}
		if e, _ := getEDM(t, tc, pk, rk); e.RowKey != rk || e.Properties["I"] != int32(i+100) {
			t.Errorf("%q: %+v", rk, e)
		}
	}
	if _, err := tc.SubmitTransaction(ctx, deletes, nil); err != nil {
		t.Fatal(err)
	}
	if n := countPartition(t, tc, strings.ReplaceAll(pk, "'", "''")); n != 0 {
		t.Fatalf("%d entities left after deleting all", n)
	}
	// Go sends RowKey='x=',RowKey='y' undoubled: a malformed key literal, not another entity.
	_, err := tc.SubmitTransaction(ctx, []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": "ok"})},
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": "x=',RowKey='y"})},
	}, nil)
	wantSDKBatchError(t, err, "InvalidInput", 1)
	// Inserts carry their keys in the body, so quotes are fine there.
	if _, err := tc.SubmitTransaction(ctx, []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": "o'neil"})},
	}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestBatchSubRequestURLForms: the sub-request URL forms of spec/batch.md §2 (absolute,
// relative, with query strings, MERGE verb, LF line endings) all address the same entity.
func TestBatchSubRequestURLForms(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	forms := map[string]string{
		"absolute":      ts.entityURL(name, "p", "abs"),
		"with query":    ts.entityURL(name, "p", "query") + "?%24format=application%2Fjson%3Bodata%3Dnometadata&timeout=30&sv=2019-02-02",
		"encoded":       ts.endpoint + "/" + name + "(PartitionKey=%27p%27,RowKey=%27enc%27%27q%27)",
		"spaced":        ts.endpoint + "/" + name + "(PartitionKey='p', RowKey='spaced')",
		"relative path": "/" + devAccount + "/" + name + "(PartitionKey='p',RowKey='rel')",
	}
	want := map[string]string{"absolute": "abs", "with query": "query", "encoded": "enc'q", "spaced": "spaced", "relative path": "rel"}
	var ops []changesetOp
	var labels []string
	for label, u := range forms {
		op := ts.writeOp("MERGE", name, "p", "unused", "", `{"V":1}`)
		op.url = u
		ops = append(ops, op)
		labels = append(labels, label)
	}
	r := ts.postBatch(t, strings.ReplaceAll(batchBody(ops), "\r\n", "\n"))
	if r.status != http.StatusAccepted || len(r.parts) != len(ops) {
		t.Fatalf("status %d, %d parts:\n%s", r.status, len(r.parts), r.raw)
	}
	for i, label := range labels {
		if r.parts[i].status != http.StatusNoContent {
			t.Errorf("%s: %d %s", label, r.parts[i].status, r.parts[i].body)
			continue
		}
		if e, _ := getEDM(t, tc, "p", want[label]); e.Properties["V"] != int32(1) {
			t.Errorf("%s: %+v", label, e)
		}
	}
	// A sub-request for another account's table is not this batch's business.
	op := ts.writeOp("PUT", name, "p", "x", "", `{"V":1}`)
	op.url = strings.Replace(op.url, "/"+devAccount+"/", "/otheraccount/", 1)
	r = ts.postBatch(t, batchBody([]changesetOp{ts.insertOp(name, `{"PartitionKey":"p","RowKey":"y"}`), op}))
	wantBatchFailure(t, r, 400, "InvalidInput", 1)
}

// TestBatchEmptyAndRetrieve: an empty changeset is an empty success; the legacy single-GET
// batch answers 200 with the entity outside any changeset (spec/batch.md §1, §3).
func TestBatchEmptyAndRetrieve(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	etag := mustAddETag(t, tc, `{"PartitionKey":"p","RowKey":"r","V":"got"}`)
	r := ts.postBatch(t, batchBody(nil))
	if r.status != http.StatusAccepted || len(r.parts) != 0 {
		t.Fatalf("empty changeset: %d\n%s", r.status, r.raw)
	}
	get := "--" + testBatchBoundary + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"GET " + ts.entityURL(name, "p", "r") + " HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\n\r\n" +
		"--" + testBatchBoundary + "--\r\n"
	status, h, raw := ts.do(t, "POST", "/$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=" + testBatchBoundary}, get)
	_, params, _ := mime.ParseMediaType(h.Get("Content-Type"))
	part, err := multipart.NewReader(strings.NewReader(raw), params["boundary"]).NextPart()
	if status != http.StatusAccepted || err != nil {
		t.Fatalf("retrieve: %d %v\n%s", status, err, raw)
	}
	resp, err := http.ReadResponse(bufio.NewReader(part), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("ETag") != string(etag) || !strings.Contains(string(body), `"V":"got"`) {
		t.Fatalf("retrieve: %d %q %s", resp.StatusCode, resp.Header.Get("ETag"), body)
	}
}

// TestBatchOnSecondaryEndpoint: in path style the secondary endpoint is the account segment
// "{account}-secondary" (spec/table-api.md §1). It is a read-only replica: Azure refuses a
// $batch there (a POST) with 403, a retrieve-only one too, and nothing is written.
func TestBatchOnSecondaryEndpoint(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	mustAddETag(t, tc, `{"PartitionKey":"p","RowKey":"r","V":"got"}`)
	before := ts.tableSnapshot(t, name)
	secondary := strings.Replace(ts.endpoint, "/"+devAccount, "/"+devAccount+"-secondary", 1)
	post := func(body string) (int, http.Header, string) {
		req, err := http.NewRequest("POST", secondary+"/$batch", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		req.Header.Set("Content-Type", "multipart/mixed; boundary="+testBatchBoundary)
		info := auth.RequestInfo{Method: "POST", RawPath: req.URL.EscapedPath(), Header: req.Header,
			Account: devAccount, PathStyle: true, Secondary: true}
		req.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKeyLite, info, auth.DevAccount().Keys[0]))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}

	sec := &testServer{endpoint: secondary}
	status, h, raw := post(batchBody([]changesetOp{sec.insertOp(name, `{"PartitionKey":"p","RowKey":"s"}`)}))
	if status != http.StatusForbidden || h.Get("x-ms-error-code") != "InsufficientAccountPermissions" {
		t.Fatalf("changeset on the secondary: %d %s", status, raw)
	}
	status, h, raw = post("--" + testBatchBoundary + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"GET " + sec.entityURL(name, "p", "r") + " HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\n\r\n" +
		"--" + testBatchBoundary + "--\r\n")
	if status != http.StatusForbidden || h.Get("x-ms-error-code") != "InsufficientAccountPermissions" {
		t.Fatalf("retrieve batch on the secondary: %d %s", status, raw)
	}
	if after := ts.tableSnapshot(t, name); after != before {
		t.Fatalf("a refused batch changed the table:\n%s", after)
	}
}

// TestBatchKeysAreCaseSensitive: keys compare exactly, table names case-insensitively, in the
// partition, uniqueness and same-table rules.
func TestBatchKeysAreCaseSensitive(t *testing.T) {
	ts := startServer(t)
	f := newBatchFixture(t, ts)
	r := ts.postBatch(t, batchBody([]changesetOp{
		f.ins("row"), f.ins("ROW"), f.ins("Row"),
		ts.insertOp(strings.ToUpper(f.name), `{"PartitionKey":"p","RowKey":"upper-table"}`),
	}))
	if r.status != http.StatusAccepted || len(r.parts) != 4 {
		t.Fatalf("rows differing in case: %d\n%s", r.status, r.raw)
	}
	for _, p := range r.parts {
		if p.status != http.StatusNoContent {
			t.Fatalf("rows differing in case: %d %s", p.status, p.body)
		}
	}
	if n := countPartition(t, f.tc, "p"); n != 6 {
		t.Fatalf("%d entities in p, want 6", n)
	}
	before := ts.tableSnapshot(t, f.name)
	r = ts.postBatch(t, batchBody([]changesetOp{f.ins("x"), ts.insertOp(f.name, `{"PartitionKey":"P","RowKey":"y"}`)}))
	wantBatchFailure(t, r, 400, "CommandsInBatchActOnDifferentPartitions", 1)
	if ts.tableSnapshot(t, f.name) != before {
		t.Fatal("failed batch changed the table")
	}
}

// TestBatchReportsLowestFailingIndex: when several operations break rules, the one with the
// lowest index is reported, whichever rule it breaks.
func TestBatchReportsLowestFailingIndex(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	r := ts.postBatch(t, batchBody([]changesetOp{
		ts.insertOp(name, `{"PartitionKey":"p","RowKey":"a"}`),
		ts.insertOp(name, `{"PartitionKey":"other","RowKey":"b"}`),
		ts.insertOp(name, `{"PartitionKey":"p","RowKey":"c","Bad-Name":1}`),
	}))
	wantBatchFailure(t, r, 400, "CommandsInBatchActOnDifferentPartitions", 1)
	r = ts.postBatch(t, batchBody([]changesetOp{
		ts.insertOp(name, `{"PartitionKey":"p","RowKey":"a"}`),
		ts.insertOp(name, `{"PartitionKey":"p","RowKey":"c","Bad-Name":1}`),
		ts.insertOp(name, `{"PartitionKey":"other","RowKey":"b"}`),
	}))
	wantBatchFailure(t, r, 400, "PropertyNameInvalid", 1)
}
