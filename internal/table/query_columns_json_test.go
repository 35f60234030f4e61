package table

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/colcache"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/query"
)

// jsonForms are the encode options a page is written with in TestQueryColumnsElementJSON:
// the default form, whose JSON the column cache keeps, and forms it must not serve from it.
var jsonForms = []struct {
	name string
	o    entity.EncodeOptions
}{
	{"element", entity.ElementOptions()},
	{"minimal+metadata", entity.EncodeOptions{Level: entity.MinimalMetadata, Metadata: "http://h/acct/$metadata#t/@Element"}},
	{"nometadata", entity.EncodeOptions{Level: entity.NoMetadata}},
	{"fullmetadata", entity.EncodeOptions{Level: entity.FullMetadata, BaseURL: "http://h/acct", Account: "acct", Table: "t"}},
	{"select", entity.EncodeOptions{Level: entity.MinimalMetadata, Select: []string{"RowKey", "S", "I64", "Missing"}}},
}

// pageJSON runs one page and returns each entity's JSON in form o. The query always asks
// for element JSON, whatever o is, so that the cache hands it back with forms it does not
// fit and AppendJSONRaw must refuse it.
func pageJSON(t *testing.T, svc *Service, table string, q Query, stopAfter int, o entity.EncodeOptions) ([][]byte, PageInfo) {
	t.Helper()
	q.ElementJSON = true
	var got [][]byte
	info, err := svc.QueryEntities(context.Background(), testAccount, table, q, func(r entity.Raw) (bool, error) {
		b, err := entity.AppendJSONRaw(nil, r, o)
		got = append(got, b)
		return stopAfter <= 0 || len(got) < stopAfter, err
	})
	if err != nil {
		t.Fatalf("QueryEntities: %v", err)
	}
	return got, info
}

// TestQueryColumnsElementJSON pages through random filters twice (the second pass finds the
// JSON the first one left in the cache), with writes between pages and random rebuilds, and
// checks that every page's JSON, in every form, is byte for byte that of a service without
// the cache over the same engine.
func TestQueryColumnsElementJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	db := openMem(t)
	plain := New(db, testOptions(0))
	iterations := 120
	if testing.Short() {
		iterations = 30
	}
	served := 0
	for iter := range iterations {
		name := fmt.Sprintf("json%d", iter)
		f := &fixture{t: t, db: db, svc: New(db, columnOptions()), table: name, model: map[[2]string]*entity.Entity{}}
		t.Cleanup(f.svc.Close)
		if iter%2 == 1 {
			// Matched-row copies instead of every entity.
			f.svc.cols.Close()
			f.svc.cols = colcache.New(colcache.Options{MaxBytes: 64 << 20, BuildAfter: 1 << 62, ValuesMaxBytes: 1}, f.svc.freezeTable)
		}
		if _, err := f.svc.CreateTable(context.Background(), testAccount, name); err != nil {
			t.Fatal(err)
		}
		for range r.IntN(200) {
			f.put(randKey(r), randKey(r), randProps(r)...)
		}
		text := randFilter(r, f.sorted()).text(r)
		q := Query{Filter: mustParse(t, text)}
		props := cacheableFilter(query.PlanQuery(q.Filter))
		if props == nil {
			continue
		}
		tbl, err := f.svc.GetTable(context.Background(), testAccount, name)
		if err != nil {
			t.Fatal(err)
		}
		build := func() {
			if err := f.svc.cols.Build(tbl.ID, props); err != nil {
				t.Fatalf("build: %v", err)
			}
		}
		build()
		for pass := range 3 {
			q.HasNext, q.NextPartitionKey, q.NextRowKey = false, "", ""
			for pages := 0; ; pages++ {
				if pages > 100000 {
					t.Fatalf("iteration %d: no progress", iter)
				}
				q.Top = []int{0, 1, 3, 1000}[r.IntN(4)]
				stopAfter := 0
				if r.IntN(5) == 0 {
					stopAfter = 1 + r.IntN(3)
				}
				var next *Continuation
				for _, form := range jsonForms {
					got, info := pageJSON(t, f.svc, name, q, stopAfter, form.o)
					if strings.Contains(info.Plan, "+columns") {
						served++
					}
					want, wantInfo := pageJSON(t, plain, name, q, stopAfter, form.o)
					if len(got) != len(want) || fmt.Sprint(info.Next) != fmt.Sprint(wantInfo.Next) {
						t.Fatalf("iteration %d pass %d, filter %q, form %s: %d entities (next %v), store %d (next %v)",
							iter, pass, text, form.name, len(got), info.Next, len(want), wantInfo.Next)
					}
					for i := range got {
						if !bytes.Equal(got[i], want[i]) {
							t.Fatalf("iteration %d pass %d, filter %q, form %s, entity %d:\ncached %s\nstore  %s",
								iter, pass, text, form.name, i, got[i], want[i])
						}
					}
					next = info.Next
				}
				if next == nil {
					break
				}
				q.HasNext, q.NextPartitionKey, q.NextRowKey = true, next.PartitionKey, next.RowKey
				randomWrites(r, f, next)
				if r.IntN(6) == 0 {
					build()
				}
			}
		}
	}
	if served == 0 {
		t.Fatal("no page was served from the column cache")
	}
	t.Logf("%d pages served from the column cache", served)
}
