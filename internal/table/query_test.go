package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/query"
	"github.com/tablo/tablo/internal/store/pebble"
)

const testAccount = "acct"

// fixture is a Service on an in-memory Pebble engine plus a model of one table's contents.
type fixture struct {
	t     testing.TB
	db    *pebble.DB
	svc   *Service
	table string
	model map[[2]string]*entity.Entity
}

func openMem(t testing.TB) *pebble.DB {
	t.Helper()
	db, err := pebble.Open(pebble.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func testOptions(budget time.Duration) Options {
	return Options{
		Now:         func() time.Time { return time.Unix(0, baseTicks*100) },
		QueryBudget: budget,
	}
}

// newFixture creates a table on db (a fresh in-memory engine when db is nil).
func newFixture(t testing.TB, db *pebble.DB, table string) *fixture {
	t.Helper()
	if db == nil {
		db = openMem(t)
	}
	f := &fixture{t: t, db: db, svc: New(db, testOptions(0)), table: table, model: map[[2]string]*entity.Entity{}}
	if _, err := f.svc.CreateTable(context.Background(), testAccount, table); err != nil {
		t.Fatal(err)
	}
	return f
}

// put inserts or replaces an entity in the service and the model.
func (f *fixture) put(pk, rk string, props ...entity.Property) {
	f.t.Helper()
	e := &entity.Entity{PartitionKey: pk, RowKey: rk, Props: props}
	res, err := f.svc.Write(context.Background(), testAccount, f.table, Op{Kind: InsertOrReplace, Entity: e})
	if err != nil {
		f.t.Fatalf("put %q/%q: %v", pk, rk, err)
	}
	f.model[[2]string{pk, rk}] = res.Entity
}

func (f *fixture) del(pk, rk string) {
	f.t.Helper()
	e := &entity.Entity{PartitionKey: pk, RowKey: rk}
	if _, err := f.svc.Write(context.Background(), testAccount, f.table, Op{Kind: Delete, Entity: e, IfMatch: IfMatch{Any: true}}); err != nil {
		f.t.Fatalf("delete %q/%q: %v", pk, rk, err)
	}
	delete(f.model, [2]string{pk, rk})
}

// sorted returns the model's entities in (PartitionKey, RowKey) UTF-16 ordinal order.
func (f *fixture) sorted() []*entity.Entity {
	out := make([]*entity.Entity, 0, len(f.model))
	for _, e := range f.model {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *entity.Entity) int {
		return compareKeys(a.PartitionKey, a.RowKey, b.PartitionKey, b.RowKey)
	})
	return out
}

// expect is the brute-force answer: entities at or after the cursor, inside bounds, that
// satisfy the model filter (nil = all), in order.
func (f *fixture) expect(match func(*entity.Entity) bool, from *Continuation, b *KeyBounds) []*entity.Entity {
	var out []*entity.Entity
	for _, e := range f.sorted() {
		if from != nil && compareKeys(e.PartitionKey, e.RowKey, from.PartitionKey, from.RowKey) < 0 {
			continue
		}
		if !inBounds(e, b) || match != nil && !match(e) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func inBounds(e *entity.Entity, b *KeyBounds) bool {
	if b == nil {
		return true
	}
	if s := b.Start; s != nil {
		c := compareUTF16(e.PartitionKey, s.PartitionKey)
		if s.HasRowKey && c == 0 {
			c = compareUTF16(e.RowKey, s.RowKey)
		}
		if c < 0 {
			return false
		}
	}
	if end := b.End; end != nil {
		c := compareUTF16(e.PartitionKey, end.PartitionKey)
		if end.HasRowKey && c == 0 {
			c = compareUTF16(e.RowKey, end.RowKey)
		}
		if c > 0 {
			return false
		}
	}
	return true
}

// page runs one page; visit stops the page after stopAfter entities when stopAfter > 0.
func (f *fixture) page(svc *Service, q Query, stopAfter int) ([]*entity.Entity, PageInfo) {
	f.t.Helper()
	var got []*entity.Entity
	info, err := svc.QueryEntities(context.Background(), testAccount, f.table, q, func(r entity.Raw) (bool, error) {
		e, err := r.Decode() // a copy: r is valid only during the call
		if err != nil {
			return false, err
		}
		got = append(got, e)
		return stopAfter <= 0 || len(got) < stopAfter, nil
	})
	if err != nil {
		f.t.Fatalf("QueryEntities: %v", err)
	}
	if info.Returned != len(got) || info.Scanned < info.Returned {
		f.t.Fatalf("page info %+v for %d entities", info, len(got))
	}
	return got, info
}

// all follows continuations to the end and returns every entity and the number of pages.
func (f *fixture) all(svc *Service, q Query) ([]*entity.Entity, int) {
	f.t.Helper()
	var out []*entity.Entity
	for pages := 1; ; pages++ {
		got, info := f.page(svc, q, 0)
		out = append(out, got...)
		if info.Next == nil {
			return out, pages
		}
		if pages > 100000 {
			f.t.Fatal("no progress")
		}
		q.HasNext, q.NextPartitionKey, q.NextRowKey = true, info.Next.PartitionKey, info.Next.RowKey
	}
}

func keysOf(es []*entity.Entity) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.PartitionKey + "/" + e.RowKey
	}
	return out
}

// sameEntities reports whether got and want hold the same entities (keys, Timestamp and
// properties) in the same order.
func sameEntities(got, want []*entity.Entity) bool {
	return slices.EqualFunc(got, want, func(a, b *entity.Entity) bool {
		return a.PartitionKey == b.PartitionKey && a.RowKey == b.RowKey && a.Timestamp == b.Timestamp &&
			slices.EqualFunc(a.Props, b.Props, func(p, q entity.Property) bool {
				return p.Name == q.Name && entity.Equal(p.Value, q.Value)
			})
	})
}

func mustParse(t testing.TB, text string) *query.Filter {
	t.Helper()
	f, err := query.Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return f
}

func randBounds(r *rand.Rand, ents []*entity.Entity) *KeyBounds {
	bound := func() *Bound {
		if r.IntN(3) == 0 {
			return nil
		}
		pk, rk := pickKeys(r, ents)
		return &Bound{PartitionKey: pk, RowKey: rk, HasRowKey: r.IntN(2) == 0}
	}
	return &KeyBounds{Start: bound(), End: bound()}
}

// TestQueryDifferential pages through random filters over random tables, with random page
// sizes, early stops and writes between pages, and checks every page against the model.
func TestQueryDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	db := openMem(t)
	tiny := New(db, testOptions(time.Nanosecond)) // same engine, a budget that always runs out
	iterations := 400
	if testing.Short() {
		iterations = 60
	}
	plans := map[string]int{}
	for iter := range iterations {
		f := newFixture(t, db, fmt.Sprintf("tbl%d", iter))
		// A neighbouring table with the same keys must never leak into results.
		other := newFixture(t, db, fmt.Sprintf("oth%d", iter))
		n := r.IntN(40)
		if r.IntN(3) == 0 {
			n = 100 + r.IntN(200) // beyond the 64-entity budget check interval
		}
		for range n {
			pk, rk := randKey(r), randKey(r)
			f.put(pk, rk, randProps(r)...)
			other.put(pk, rk+"x", randProps(r)...)
		}
		model := randFilter(r, f.sorted())
		text := model.text(r)
		filter := mustParse(t, text)
		q := Query{Filter: filter}
		if r.IntN(4) == 0 {
			q.Bounds = randBounds(r, f.sorted())
		}
		svc := f.svc
		if r.IntN(4) == 0 {
			svc = tiny
		}
		mutate := r.IntN(2) == 0
		describe := func() string {
			return fmt.Sprintf("iteration %d: filter %q bounds %s tiny=%v", iter, text, fmtBounds(q.Bounds), svc == tiny)
		}
		initial := f.expect(model.eval, nil, q.Bounds)
		var collected []*entity.Entity
		var cursor *Continuation
		for pages := 0; ; pages++ {
			if pages > 100000 {
				t.Fatalf("%s: no progress", describe())
			}
			q.Top = []int{0, 1, 2, 3, 5, 1000}[r.IntN(6)]
			stopAfter := 0
			if r.IntN(5) == 0 {
				stopAfter = 1 + r.IntN(3)
			}
			want := f.expect(model.eval, cursor, q.Bounds)
			got, info := f.page(svc, q, stopAfter)
			plans[strings.Fields(info.Plan)[0]]++
			checkPage(t, describe, q, cursor, stopAfter, svc == tiny, got, info, want)
			collected = append(collected, got...)
			if info.Next == nil {
				break
			}
			cursor = info.Next
			q.HasNext, q.NextPartitionKey, q.NextRowKey = true, cursor.PartitionKey, cursor.RowKey
			if mutate {
				randomWrites(r, f, cursor)
			}
		}
		if !mutate && !sameEntities(collected, initial) {
			t.Fatalf("%s: paged result\n%q\nwant\n%q", describe(), keysOf(collected), keysOf(initial))
		}
	}
	for _, k := range []string{"empty", "point", "row-range", "partition", "partition-range", "union", "table-scan"} {
		if plans[k] == 0 {
			t.Errorf("no %s plan exercised: %v", k, plans)
		}
	}
	t.Logf("plans: %v", plans)
}

func fmtBounds(b *KeyBounds) string {
	if b == nil {
		return "none"
	}
	s := func(x *Bound) string {
		if x == nil {
			return "unbounded"
		}
		if x.HasRowKey {
			return fmt.Sprintf("%q/%q", x.PartitionKey, x.RowKey)
		}
		return fmt.Sprintf("%q", x.PartitionKey)
	}
	return "[" + s(b.Start) + ", " + s(b.End) + "]"
}

// checkPage checks one page against the brute-force remainder want (the matches at or after
// the cursor right now). Pages cut short by the time budget or by visit may hold any prefix
// of want, but must carry a continuation that skips nothing.
func checkPage(t *testing.T, describe func() string, q Query, cursor *Continuation, stopAfter int, tiny bool, got []*entity.Entity, info PageInfo, want []*entity.Entity) {
	t.Helper()
	limit := q.Top
	if limit == 0 {
		limit = MaxPageSize
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s, top %d, stopAfter %d, cursor %+v, plan %s:\n%s\ngot  %q\nwant %q",
			describe(), q.Top, stopAfter, cursor, info.Plan, fmt.Sprintf(format, args...), keysOf(got), keysOf(want))
	}
	if len(got) > limit || len(got) > len(want) || !sameEntities(got, want[:len(got)]) {
		fail("page is not a prefix of the expected remainder")
	}
	short := tiny || stopAfter > 0 && len(got) == stopAfter
	if !short && len(got) != min(limit, len(want)) {
		fail("page has %d entities, want %d", len(got), min(limit, len(want)))
	}
	next := info.Next
	if next == nil {
		if len(got) != len(want) {
			fail("no continuation but %d matches remain", len(want)-len(got))
		}
		return
	}
	if cursor != nil && compareKeys(next.PartitionKey, next.RowKey, cursor.PartitionKey, cursor.RowKey) <= 0 {
		fail("continuation %+v does not advance", *next)
	}
	if n := len(got); n > 0 && compareKeys(next.PartitionKey, next.RowKey, got[n-1].PartitionKey, got[n-1].RowKey) <= 0 {
		fail("continuation %+v repeats the last entity", *next)
	}
	if len(got) < len(want) {
		w := want[len(got)]
		if compareKeys(next.PartitionKey, next.RowKey, w.PartitionKey, w.RowKey) > 0 {
			fail("continuation %+v skips %q/%q", *next, w.PartitionKey, w.RowKey)
		}
		if !short && (next.PartitionKey != w.PartitionKey || next.RowKey != w.RowKey) {
			fail("continuation %+v is not the next match %q/%q", *next, w.PartitionKey, w.RowKey)
		}
	} else if !short {
		fail("continuation %+v after the last match", *next)
	}
}

// randomWrites inserts, replaces and deletes a few entities on both sides of the cursor.
func randomWrites(r *rand.Rand, f *fixture, cursor *Continuation) {
	for range r.IntN(4) {
		switch ents := f.sorted(); {
		case r.IntN(3) == 0 && len(ents) > 0:
			e := ents[r.IntN(len(ents))]
			f.del(e.PartitionKey, e.RowKey)
		case r.IntN(2) == 0 && len(ents) > 0:
			e := ents[r.IntN(len(ents))]
			f.put(e.PartitionKey, e.RowKey, randProps(r)...)
		case r.IntN(3) == 0:
			// Right at the resume point: the next page must include it.
			f.put(cursor.PartitionKey, cursor.RowKey, randProps(r)...)
		default:
			f.put(randKey(r), randKey(r), randProps(r)...)
		}
	}
}

// TestQueryTinyBudget: with a budget that is always spent, pages stop after a bounded scan,
// may be empty, carry a continuation, and resuming yields exactly the full result.
func TestQueryTinyBudget(t *testing.T) {
	f := newFixture(t, nil, "budget")
	for i := range 500 {
		f.put(fmt.Sprintf("p%d", i%7), fmt.Sprintf("r%04d", i), entity.Property{Name: "N", Value: entity.Int32Value(int32(i))})
	}
	tiny := New(f.db, testOptions(time.Nanosecond))

	got, info := f.page(tiny, Query{Filter: mustParse(t, "N eq 499")}, 0)
	if len(got) != 0 || info.Next == nil {
		t.Fatalf("first page: %d entities, next %v; want an empty page with a continuation", len(got), info.Next)
	}

	for _, text := range []string{"", "N eq 499", "N lt 10 or N ge 490", "PartitionKey eq 'p3'", "N ge 0"} {
		q := Query{Filter: mustParse(t, text)}
		match := func(e *entity.Entity) bool { return q.Filter.Eval(e) }
		all, pages := f.all(tiny, q)
		if want := f.expect(match, nil, nil); !sameEntities(all, want) {
			t.Errorf("%q: got %d entities, want %d", text, len(all), len(want))
		}
		if pages < 2 {
			t.Errorf("%q: %d pages; the budget never ran out", text, pages)
		}
	}
}

// TestQueryPlans checks how much each plan kind scans.
func TestQueryPlans(t *testing.T) {
	f := newFixture(t, nil, "plans")
	// Partitions that are prefixes of each other and share row keys.
	for _, pk := range []string{"o", "p", "p'", "pa", "q"} {
		for _, rk := range []string{"a", "b", "c", "d", "e"} {
			f.put(pk, rk, entity.Property{Name: "V", Value: entity.StringValue(pk + rk)})
		}
	}
	tests := []struct {
		filter  string
		plan    string
		scanned int
		want    []string
	}{
		{"PartitionKey eq 'p' and RowKey eq 'c'", "point", 1, []string{"p/c"}},
		{"RowKey eq 'c' and PartitionKey eq 'p' and V eq 'x'", "point", 1, nil},
		{"PartitionKey eq 'p' and RowKey eq 'zz'", "point", 0, nil},
		{"PartitionKey eq 'p' and RowKey ge 'b' and RowKey lt 'd'", "row-range", 2, []string{"p/b", "p/c"}},
		{"PartitionKey eq 'p' and RowKey gt 'a' and RowKey le 'e' and V ne 'pc'", "row-range", 4, []string{"p/b", "p/d", "p/e"}},
		{"PartitionKey eq 'p' and RowKey ge 'd'", "row-range", 2, []string{"p/d", "p/e"}},
		{"PartitionKey eq 'p''' and RowKey lt 'b'", "row-range", 1, []string{"p'/a"}},
		{"PartitionKey eq 'pa'", "partition", 5, []string{"pa/a", "pa/b", "pa/c", "pa/d", "pa/e"}},
		{"PartitionKey eq 'p' and V eq 'pe'", "partition", 5, []string{"p/e"}},
		{"PartitionKey gt 'p' and PartitionKey lt 'q' and RowKey eq 'a'", "partition-range", 10, []string{"p'/a", "pa/a"}},
		{"PartitionKey ge 'q'", "partition-range", 5, []string{"q/a", "q/b", "q/c", "q/d", "q/e"}},
		{"(PartitionKey eq 'o' and RowKey eq 'a') or (PartitionKey eq 'q' and RowKey eq 'e')", "union", 2, []string{"o/a", "q/e"}},
		{"V eq 'qe'", "table-scan", 25, []string{"q/e"}},
		{"PartitionKey eq 'p' and PartitionKey eq 'q'", "empty", 0, nil},
	}
	for _, tc := range tests {
		got, info := f.page(f.svc, Query{Filter: mustParse(t, tc.filter)}, 0)
		if kind := strings.Fields(info.Plan)[0]; kind != tc.plan || info.Scanned != tc.scanned {
			t.Errorf("%q: plan %q scanned %d, want %s scanning %d", tc.filter, info.Plan, info.Scanned, tc.plan, tc.scanned)
		}
		if !slices.Equal(keysOf(got), tc.want) && (len(got) > 0 || len(tc.want) > 0) {
			t.Errorf("%q: got %q, want %q", tc.filter, keysOf(got), tc.want)
		}
		if info.Next != nil {
			t.Errorf("%q: continuation %+v on the only page", tc.filter, *info.Next)
		}
	}
}

// TestQueryTop: $top is a page size, not a total; the last page has no continuation, even
// when it ends exactly at the last match with non-matching entities after it.
func TestQueryTop(t *testing.T) {
	f := newFixture(t, nil, "top")
	for i := range 20 {
		f.put("p", fmt.Sprintf("r%02d", i), entity.Property{Name: "Even", Value: entity.BoolValue(i%2 == 0)})
	}
	pageSizes := func(q Query) []int {
		var sizes []int
		for {
			got, info := f.page(f.svc, q, 0)
			sizes = append(sizes, len(got))
			if info.Next == nil {
				return sizes
			}
			q.HasNext, q.NextPartitionKey, q.NextRowKey = true, info.Next.PartitionKey, info.Next.RowKey
		}
	}
	tests := []struct {
		filter string
		top    int
		want   []int
	}{
		{"", 6, []int{6, 6, 6, 2}},
		{"", 5, []int{5, 5, 5, 5}}, // ends exactly at the last entity
		{"", 20, []int{20}},        // one full page, nothing after it
		{"", 0, []int{20}},         // default page size
		{"Even", 5, []int{5, 5}},   // the 10th match is r18; r19 follows but does not match
		{"not Even", 4, []int{4, 4, 2}},
		{"Even", 10, []int{10}},
		{"RowKey ge 'r17'", 3, []int{3}},
		{"RowKey ge 'r18'", 1, []int{1, 1}},
	}
	for _, tc := range tests {
		q := Query{Filter: mustParse(t, tc.filter), Top: tc.top}
		if got := pageSizes(q); !slices.Equal(got, tc.want) {
			t.Errorf("%q top %d: page sizes %v, want %v", tc.filter, tc.top, got, tc.want)
		}
	}
}

// TestQueryDefaultPageSize: without $top a page holds at most 1,000 entities.
func TestQueryDefaultPageSize(t *testing.T) {
	f := newFixture(t, nil, "big")
	var ops []Op
	for i := range 2500 {
		ops = append(ops, Op{Kind: Insert, Entity: &entity.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%05d", i)}})
		if len(ops) == MaxBatchOps {
			if _, err := f.svc.Batch(context.Background(), testAccount, f.table, ops); err != nil {
				t.Fatal(err)
			}
			ops = nil
		}
	}
	q := Query{}
	var sizes []int
	for {
		got, info := f.page(f.svc, q, 0)
		sizes = append(sizes, len(got))
		if info.Next == nil {
			break
		}
		q.HasNext, q.NextPartitionKey, q.NextRowKey = true, info.Next.PartitionKey, info.Next.RowKey
	}
	if want := []int{1000, 1000, 500}; !slices.Equal(sizes, want) {
		t.Fatalf("page sizes %v, want %v", sizes, want)
	}
}

// TestQueryVisitStop: when visit ends the page, the continuation resumes right after the
// last entity visited.
func TestQueryVisitStop(t *testing.T) {
	f := newFixture(t, nil, "stop")
	for i := range 6 {
		f.put("p", fmt.Sprintf("r%d", i))
	}
	got, info := f.page(f.svc, Query{}, 2)
	if !slices.Equal(keysOf(got), []string{"p/r0", "p/r1"}) || info.Next == nil || *info.Next != (Continuation{"p", "r2"}) {
		t.Fatalf("got %q next %+v", keysOf(got), info.Next)
	}
	// Stopping at the very last entity: nothing follows, so no continuation.
	got, info = f.page(f.svc, Query{Filter: mustParse(t, "RowKey ge 'r5'")}, 1)
	if len(got) != 1 || info.Next != nil {
		t.Fatalf("got %q next %+v", keysOf(got), info.Next)
	}
}

// TestQueryBounds checks SAS-style key ranges against filters and continuations.
func TestQueryBounds(t *testing.T) {
	f := newFixture(t, nil, "bounds")
	for _, pk := range []string{"a", "b", "c"} {
		for _, rk := range []string{"1", "2", "3"} {
			f.put(pk, rk)
		}
	}
	b := func(pk string, rk ...string) *Bound {
		if len(rk) == 0 {
			return &Bound{PartitionKey: pk}
		}
		return &Bound{PartitionKey: pk, RowKey: rk[0], HasRowKey: true}
	}
	tests := []struct {
		bounds KeyBounds
		filter string
		next   *Continuation
		want   string
	}{
		{KeyBounds{Start: b("b")}, "", nil, "b/1 b/2 b/3 c/1 c/2 c/3"},
		{KeyBounds{Start: b("a", "2"), End: b("b", "2")}, "", nil, "a/2 a/3 b/1 b/2"},
		{KeyBounds{End: b("a")}, "", nil, "a/1 a/2 a/3"},
		{KeyBounds{Start: b("b"), End: b("b")}, "", nil, "b/1 b/2 b/3"},
		{KeyBounds{Start: b("a", "2"), End: b("c", "1")}, "RowKey eq '1'", nil, "b/1 c/1"},
		{KeyBounds{Start: b("a", "2"), End: b("c", "1")}, "PartitionKey eq 'a'", nil, "a/2 a/3"},
		{KeyBounds{Start: b("a", "2"), End: b("c", "1")}, "PartitionKey eq 'c' and RowKey eq '2'", nil, ""},
		{KeyBounds{Start: b("b", "3")}, "PartitionKey le 'b'", nil, "b/3"},
		{KeyBounds{Start: b("a", "2"), End: b("c", "1")}, "", &Continuation{"b", "2"}, "b/2 b/3 c/1"},
		{KeyBounds{Start: b("b", "2")}, "", &Continuation{"a", "1"}, "b/2 b/3 c/1 c/2 c/3"},
		{KeyBounds{End: b("a", "3")}, "", &Continuation{"b", ""}, ""},
		{KeyBounds{Start: b("c"), End: b("a")}, "", nil, ""},
	}
	for _, tc := range tests {
		q := Query{Filter: mustParse(t, tc.filter), Bounds: &tc.bounds}
		if tc.next != nil {
			q.HasNext, q.NextPartitionKey, q.NextRowKey = true, tc.next.PartitionKey, tc.next.RowKey
		}
		got, info := f.page(f.svc, q, 0)
		if s := strings.Join(keysOf(got), " "); s != tc.want || info.Next != nil {
			t.Errorf("bounds %s filter %q from %+v: got %q next %+v, want %q", fmtBounds(&tc.bounds), tc.filter, tc.next, s, info.Next, tc.want)
		}
	}
}

// TestQueryOrder pins Azure's UTF-16 ordinal key order on a few hand-picked keys.
func TestQueryOrder(t *testing.T) {
	f := newFixture(t, nil, "order")
	keys := []string{"a", "Z", "_", "A", "\uFFFD", "😀", "\uE000", "é", "partition-10", "partition-2", "partition-1"}
	for _, k := range keys {
		f.put(k, k)
	}
	got, _ := f.all(f.svc, Query{})
	want := []string{"A", "Z", "_", "a", "partition-1", "partition-10", "partition-2", "é", "😀", "\uE000", "\uFFFD"}
	for i := range want {
		want[i] += "/" + want[i]
	}
	if !slices.Equal(keysOf(got), want) {
		t.Fatalf("order %q, want %q", keysOf(got), want)
	}
}

// TestQueryMissingTable is TableNotFound.
func TestQueryMissingTable(t *testing.T) {
	svc := New(openMem(t), testOptions(0))
	_, err := svc.QueryEntities(context.Background(), testAccount, "nope", Query{}, func(entity.Raw) (bool, error) { return true, nil })
	if !azerr.Is(err, azerr.TableNotFound) {
		t.Fatalf("err = %v", err)
	}
}

// TestQueryLookaheadBound: once a page is full, at most maxLookahead further entities are
// scanned for another match: exactly that many non-matching ones end the query with no
// continuation, one more ends the page with a continuation (and the next page is empty).
func TestQueryLookaheadBound(t *testing.T) {
	for _, n := range []int{maxLookahead, maxLookahead + 1} {
		f := newFixture(t, nil, "look")
		ops := []Op{{Kind: Insert, Entity: &entity.Entity{PartitionKey: "p", RowKey: "a", Props: []entity.Property{{Name: "M", Value: entity.BoolValue(true)}}}}}
		for i := range n {
			ops = append(ops, Op{Kind: Insert, Entity: &entity.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("b%05d", i)}})
		}
		for len(ops) > 0 {
			k := min(len(ops), MaxBatchOps)
			if _, err := f.svc.Batch(context.Background(), testAccount, "look", ops[:k]); err != nil {
				t.Fatal(err)
			}
			ops = ops[k:]
		}
		got, info := f.page(f.svc, Query{Filter: mustParse(t, "M"), Top: 1}, 0)
		if len(got) != 1 || (info.Next != nil) != (n > maxLookahead) {
			t.Errorf("%d non-matching entities after a full page: %d returned, continuation %v", n, len(got), info.Next)
		}
	}
}

// TestReplaceDropsMergeKeeps: Replace and InsertOrReplace store only the properties sent;
// Merge and InsertOrMerge keep the others.
func TestReplaceDropsMergeKeeps(t *testing.T) {
	f := newFixture(t, nil, "rdmk")
	for _, kind := range []OpKind{Replace, InsertOrReplace, Merge, InsertOrMerge} {
		rk := kind.String()
		f.put("p", rk, entity.Property{Name: "Old", Value: entity.BoolValue(true)})
		e := &entity.Entity{PartitionKey: "p", RowKey: rk, Props: []entity.Property{{Name: "New", Value: entity.BoolValue(true)}}}
		if _, err := f.svc.Write(context.Background(), testAccount, "rdmk", Op{Kind: kind, Entity: e, IfMatch: IfMatch{Any: true}}); err != nil {
			t.Fatal(err)
		}
		got, err := f.svc.GetEntity(context.Background(), testAccount, "rdmk", "p", rk)
		if err != nil {
			t.Fatal(err)
		}
		keeps := kind == Merge || kind == InsertOrMerge
		if hasOld := len(got.Props) == 2; hasOld != keeps {
			t.Errorf("%s: stored %v, want the old property kept: %v", kind, got.Props, keeps)
		}
	}
}
