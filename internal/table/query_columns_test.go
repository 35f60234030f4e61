package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/colcache"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/query"
)

// columnOptions enables the column cache without background builds: tests build on demand.
func columnOptions() Options {
	o := testOptions(0)
	o.ColumnCacheBytes = 64 << 20
	o.ColumnCacheBuildAfter = 1 << 62
	return o
}

// TestQueryColumnsDifferential pages through random filters over random tables through the
// column cache, with writes (inserts, replaces, deletes) between pages and rebuilds at random
// moments, and checks every page twice: against the brute-force model, and against the same
// page from a service without the cache over the same engine (same entities, same Scanned
// count, same continuation).
func TestQueryColumnsDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	db := openMem(t)
	plain := New(db, testOptions(0))
	iterations := 300
	if testing.Short() {
		iterations = 60
	}
	served := 0
	for iter := range iterations {
		name := fmt.Sprintf("col%d", iter)
		f := &fixture{t: t, db: db, svc: New(db, columnOptions()), table: name, model: map[[2]string]*entity.Entity{}}
		t.Cleanup(f.svc.Close)
		switch iter % 3 {
		case 1:
			// Keys and columns only: every match is read from the store snapshot.
			f.svc.cols.Close()
			f.svc.cols = colcache.New(colcache.Options{MaxBytes: 64 << 20, BuildAfter: 1 << 62, NoValues: true}, f.svc.freezeTable)
		case 2:
			// The entities never fit: matches are read from the store snapshot the first
			// time and from the matched-row copies after.
			f.svc.cols.Close()
			f.svc.cols = colcache.New(colcache.Options{MaxBytes: 64 << 20, BuildAfter: 1 << 62, ValuesMaxBytes: 1}, f.svc.freezeTable)
		}
		if _, err := f.svc.CreateTable(context.Background(), testAccount, name); err != nil {
			t.Fatal(err)
		}
		for range r.IntN(300) {
			f.put(randKey(r), randKey(r), randProps(r)...)
		}
		model := randFilter(r, f.sorted())
		text := model.text(r)
		filter := mustParse(t, text)
		props := cacheableFilter(query.PlanQuery(filter))
		tbl, err := f.svc.GetTable(context.Background(), testAccount, name)
		if err != nil {
			t.Fatal(err)
		}
		build := func() {
			if props != nil {
				if err := f.svc.cols.Build(tbl.ID, props); err != nil {
					t.Fatalf("build: %v", err)
				}
			}
		}
		build()
		q := Query{Filter: filter}
		if r.IntN(4) == 0 {
			q.Bounds = randBounds(r, f.sorted())
		}
		describe := func() string {
			return fmt.Sprintf("iteration %d: filter %q bounds %s", iter, text, fmtBounds(q.Bounds))
		}
		// With matched-row copies, a second pass reads the copies the first one kept.
		passes := 1
		if iter%3 == 2 {
			passes = 2
		}
		for range passes {
			q.HasNext, q.NextPartitionKey, q.NextRowKey = false, "", ""
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
				got, info := f.page(f.svc, q, stopAfter)
				if strings.Contains(info.Plan, "+columns") {
					served++
				} else if props != nil {
					t.Fatalf("%s: page not served from the built cache (plan %s)", describe(), info.Plan)
				}
				checkPage(t, describe, q, cursor, stopAfter, false, got, info, want)
				ref, refInfo := f.page(plain, q, stopAfter)
				if !sameEntities(got, ref) || info.Scanned != refInfo.Scanned || fmt.Sprint(info.Next) != fmt.Sprint(refInfo.Next) {
					t.Fatalf("%s, top %d, stop %d: cached page %q %+v %v\nstore page %q %+v %v", describe(), q.Top, stopAfter,
						keysOf(got), info, info.Next, keysOf(ref), refInfo, refInfo.Next)
				}
				if info.Next == nil {
					break
				}
				cursor = info.Next
				q.HasNext, q.NextPartitionKey, q.NextRowKey = true, cursor.PartitionKey, cursor.RowKey
				randomWrites(r, f, cursor)
				if r.IntN(4) == 0 {
					build() // a rebuild with writes before it: the dirty set starts over
				}
			}
		}
	}
	if served == 0 {
		t.Fatal("no page was served from the column cache")
	}
	t.Logf("%d pages served from the column cache", served)
}

// TestQueryColumnsBuildsInBackground: enough filtered scanning builds the columns without
// being asked, later pages are served from them, and Delete Table frees them.
func TestQueryColumnsBuildsInBackground(t *testing.T) {
	o := testOptions(0)
	o.ColumnCacheBytes = 64 << 20
	o.ColumnCacheBuildAfter = 500
	f := &fixture{t: t, db: openMem(t), table: "bgtable", model: map[[2]string]*entity.Entity{}}
	f.svc = New(f.db, o)
	defer f.svc.Close()
	ctx := context.Background()
	if _, err := f.svc.CreateTable(ctx, testAccount, "bgtable"); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		f.put(fmt.Sprintf("p%d", i%7), fmt.Sprintf("r%04d", i), entity.Property{Name: "Cat", Value: entity.Int32Value(int32(i % 10))})
	}
	q := Query{Filter: mustParse(t, "Cat eq 3")}
	want := f.expect(func(e *entity.Entity) bool { v, _ := e.Get("Cat"); return v.I == 3 }, nil, nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, info := f.page(f.svc, q, 0)
		if !sameEntities(got, want) {
			t.Fatalf("got %q, want %q", keysOf(got), keysOf(want))
		}
		if strings.Contains(info.Plan, "+columns") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the column cache was never built")
		}
		time.Sleep(time.Millisecond)
	}
	if st := f.svc.cols.Stats(); st.Tables != 1 || st.Bytes <= 0 {
		t.Fatalf("stats after build: %+v", st)
	}
	// A write after the build is seen by the next page.
	f.put("p0", "r9999", entity.Property{Name: "Cat", Value: entity.Int32Value(3)})
	want = f.expect(func(e *entity.Entity) bool { v, _ := e.Get("Cat"); return v.I == 3 }, nil, nil)
	got, info := f.page(f.svc, q, 0)
	if !strings.Contains(info.Plan, "+columns") || !sameEntities(got, want) || len(got) != 31 {
		t.Fatalf("after a write: plan %s, %q", info.Plan, keysOf(got))
	}
	if err := f.svc.DeleteTable(ctx, testAccount, "bgtable"); err != nil {
		t.Fatal(err)
	}
	if st := f.svc.cols.Stats(); st.Tables != 0 || st.Bytes != 0 {
		t.Fatalf("stats after Delete Table: %+v", st)
	}
}

// TestQueryColumnsConcurrent: writers move one marker per partition between rows in
// transactions (exactly one row per partition has Mark = 1 at every commit) while readers
// run the filtered scan through the cache and rebuilds run underneath. A page served from
// a base plus written keys must still be one consistent snapshot: one marker per partition.
func TestQueryColumnsConcurrent(t *testing.T) {
	t.Run("entities", func(t *testing.T) { testQueryColumnsConcurrent(t, false) })
	t.Run("matched-copies", func(t *testing.T) { testQueryColumnsConcurrent(t, true) })
}

// testQueryColumnsConcurrent runs the test with the entities in the cache, or (matched) with
// only copies of the rows scans matched, which writes must never let a page reuse.
func testQueryColumnsConcurrent(t *testing.T, matched bool) {
	const partitions, rows = 20, 50
	o := testOptions(0)
	o.Now = time.Now
	o.ColumnCacheBytes = 64 << 20
	o.ColumnCacheBuildAfter = 1
	db := openMem(t)
	svc := New(db, o)
	defer svc.Close()
	if matched {
		svc.cols.Close()
		svc.cols = colcache.New(colcache.Options{MaxBytes: 64 << 20, BuildAfter: 1, ValuesMaxBytes: 1}, svc.freezeTable)
	}
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, testAccount, "conc"); err != nil {
		t.Fatal(err)
	}
	mark := func(v int32) []entity.Property { return []entity.Property{{Name: "Mark", Value: entity.Int32Value(v)}} }
	holder := make([]int, partitions)
	for p := range partitions {
		var ops []Op
		for r := range rows {
			v := int32(0)
			if r == 0 {
				v = 1
			}
			ops = append(ops, Op{Kind: Insert, Entity: &entity.Entity{PartitionKey: fmt.Sprint("p", p), RowKey: fmt.Sprintf("r%02d", r), Props: mark(v)}})
		}
		if _, err := svc.Batch(ctx, testAccount, "conc", ops); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := svc.GetTable(ctx, testAccount, "conc")
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.cols.Build(tbl.ID, []string{"Mark"}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	errs := make(chan error, 8)
	var writers, readers sync.WaitGroup
	for w := range 2 {
		writers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; i < 1500; i++ {
				// Writer w owns the partitions p ≡ w (mod 2), so holder needs no lock.
				p := 2*r.IntN(partitions/2) + w
				next := (holder[p] + 1 + r.IntN(rows-1)) % rows
				ops := []Op{
					{Kind: Merge, IfMatch: IfMatch{Any: true}, Entity: &entity.Entity{PartitionKey: fmt.Sprint("p", p), RowKey: fmt.Sprintf("r%02d", holder[p]), Props: mark(0)}},
					{Kind: Merge, IfMatch: IfMatch{Any: true}, Entity: &entity.Entity{PartitionKey: fmt.Sprint("p", p), RowKey: fmt.Sprintf("r%02d", next), Props: mark(1)}},
				}
				if _, err := svc.Batch(ctx, testAccount, "conc", ops); err != nil {
					errs <- err
					return
				}
				holder[p] = next
			}
		})
	}
	cached := 0
	readers.Go(func() {
		q := Query{Filter: mustParse(t, "Mark eq 1")}
		for {
			select {
			case <-stop:
				return
			default:
			}
			count := map[string]int{}
			info, err := svc.QueryEntities(ctx, testAccount, "conc", q, func(r entity.Raw) (bool, error) {
				count[strings.Clone(r.PartitionKey())]++ // the key aliases a scan buffer
				return true, nil
			})
			if err != nil {
				errs <- err
				return
			}
			if strings.Contains(info.Plan, "+columns") {
				cached++
			}
			for p := range partitions {
				if n := count[fmt.Sprint("p", p)]; n != 1 {
					errs <- fmt.Errorf("partition p%d has %d markers in one page (plan %s)", p, n, info.Plan)
					return
				}
			}
		}
	})
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
				_ = svc.cols.Build(tbl.ID, []string{"Mark"}) // may find a build in progress
			}
		}
	})
	writers.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if cached == 0 {
		t.Fatal("no page was served from the cache")
	}
	t.Logf("%d pages served from the cache", cached)
}

// columnFixture is a table of n entities (N = 0..n-1, spread over 7 partitions) on a
// service with the column cache, whose columns for N are built.
func columnFixture(t *testing.T, o Options, name string, n int) (*fixture, Table) {
	t.Helper()
	f := &fixture{t: t, db: openMem(t), table: name, model: map[[2]string]*entity.Entity{}}
	f.svc = New(f.db, o)
	t.Cleanup(f.svc.Close)
	ctx := context.Background()
	if _, err := f.svc.CreateTable(ctx, testAccount, name); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		f.put(fmt.Sprintf("p%d", i%7), fmt.Sprintf("r%04d", i), entity.Property{Name: "N", Value: entity.Int32Value(int32(i))})
	}
	tbl, err := f.svc.GetTable(ctx, testAccount, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.cols.Build(tbl.ID, []string{"N"}); err != nil {
		t.Fatal(err)
	}
	return f, tbl
}

// TestQueryColumnsTinyBudget: a page served from the column cache whose time budget is
// spent at once still makes progress, as a store scan does: paging through returns every
// match, in several pages, each served from the cache.
func TestQueryColumnsTinyBudget(t *testing.T) {
	o := columnOptions()
	o.QueryBudget = time.Nanosecond
	f, _ := columnFixture(t, o, "cbudget", 500)
	for _, text := range []string{"N ge 0", "N lt 100 or N ge 400"} {
		q := Query{Filter: mustParse(t, text)}
		want := f.expect(func(e *entity.Entity) bool { return q.Filter.Eval(e) }, nil, nil)
		var all []*entity.Entity
		pages := 0
		for {
			if pages++; pages > len(want)+1 {
				t.Fatalf("%q: no progress after %d pages", text, pages)
			}
			got, info := f.page(f.svc, q, 0)
			if !strings.Contains(info.Plan, "+columns") {
				t.Fatalf("%q: page not served from the cache (plan %s)", text, info.Plan)
			}
			all = append(all, got...)
			if info.Next == nil {
				break
			}
			q.HasNext, q.NextPartitionKey, q.NextRowKey = true, info.Next.PartitionKey, info.Next.RowKey
		}
		if !sameEntities(all, want) {
			t.Errorf("%q: got %d entities, want %d", text, len(all), len(want))
		}
		if pages < 2 {
			t.Errorf("%q: %d pages; the budget never ran out", text, pages)
		}
	}
}

// TestQueryColumnsLookaheadBound: a full page served from the column cache looks as far for
// the next match as a store scan does (maxLookahead entities), also when a key written
// since the build lies within that distance, and ends with the same continuation and the
// same Scanned count.
func TestQueryColumnsLookaheadBound(t *testing.T) {
	for i, c := range []struct {
		n       int    // non-matching entities after the match, in the build
		written string // the row key of a non-matching entity written after the build
	}{
		{maxLookahead - 1, "b00500x"}, {maxLookahead, "b00500x"}, // half way
		{maxLookahead - 1, "c"}, {maxLookahead, "c"}, // the last entity scanned or the one past it
		{maxLookahead, ""}, {maxLookahead + 1, ""},
	} {
		n := c.n
		name := fmt.Sprintf("clook%d", i)
		f := &fixture{t: t, db: openMem(t), table: name, model: map[[2]string]*entity.Entity{}}
		f.svc = New(f.db, columnOptions())
		t.Cleanup(f.svc.Close)
		ctx := context.Background()
		if _, err := f.svc.CreateTable(ctx, testAccount, name); err != nil {
			t.Fatal(err)
		}
		ops := []Op{{Kind: Insert, Entity: &entity.Entity{PartitionKey: "p", RowKey: "a", Props: []entity.Property{{Name: "M", Value: entity.BoolValue(true)}}}}}
		for i := range n {
			ops = append(ops, Op{Kind: Insert, Entity: &entity.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("b%05d", i), Props: []entity.Property{{Name: "M", Value: entity.BoolValue(false)}}}})
		}
		for len(ops) > 0 {
			k := min(len(ops), MaxBatchOps)
			if _, err := f.svc.Batch(ctx, testAccount, name, ops[:k]); err != nil {
				t.Fatal(err)
			}
			ops = ops[k:]
		}
		tbl, err := f.svc.GetTable(ctx, testAccount, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.svc.cols.Build(tbl.ID, []string{"M"}); err != nil {
			t.Fatal(err)
		}
		// Written after the build: the page reads it from the store snapshot, between two
		// runs of cached rows or after them.
		if c.written != "" {
			f.put("p", c.written, entity.Property{Name: "M", Value: entity.BoolValue(false)})
			n++
		}
		plain := New(f.db, testOptions(0))
		q := Query{Filter: mustParse(t, "M"), Top: 1}
		got, info := f.page(f.svc, q, 0)
		ref, refInfo := f.page(plain, q, 0)
		plain.Close()
		if !strings.Contains(info.Plan, "+columns") {
			t.Fatalf("page not served from the cache (plan %s)", info.Plan)
		}
		if len(got) != 1 || (info.Next != nil) != (n > maxLookahead) {
			t.Errorf("%d non-matching entities after a full page: %d returned, continuation %v", n, len(got), info.Next)
		}
		if !sameEntities(got, ref) || info.Scanned != refInfo.Scanned || fmt.Sprint(info.Next) != fmt.Sprint(refInfo.Next) {
			t.Errorf("%d non-matching: cached page %q scanned %d next %v; store page %q scanned %d next %v",
				n, keysOf(got), info.Scanned, info.Next, keysOf(ref), refInfo.Scanned, refInfo.Next)
		}
	}
}
