package colcache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// TestEveryRowsKeyAndValue: each row, the first included, reads back its own key and
// entity.
func TestEveryRowsKeyAndValue(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 16 << 20})
	f.load(1, 30)
	if err := f.c.Build(1, []string{"Cat"}); err != nil {
		t.Fatal(err)
	}
	v := f.view(1, []string{"Cat"})
	defer v.Release()
	for i := range v.Rows() {
		_, _, rk, err := keys.DecodeEntity(v.AppendKey(nil, v.Key(i)))
		if err != nil || rk != fmt.Sprintf("r%05d", i) {
			t.Fatalf("key of row %d: %q %v", i, rk, err)
		}
		val, ok := v.Value(i)
		if !ok {
			t.Fatalf("no value for row %d", i)
		}
		raw, err := entity.NewRaw(val, "", "")
		if c, _ := raw.Get("Cat"); err != nil || c.I != int64(i%10) {
			t.Fatalf("value of row %d: Cat %v, %v", i, c, err)
		}
	}
}

// TestPropertyAfterEveryColumn: asking for a property that sorts after every built column
// finds no view (and does not read past the columns).
func TestPropertyAfterEveryColumn(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 16 << 20})
	f.load(1, 10)
	if err := f.c.Build(1, []string{"Cat", "Name"}); err != nil {
		t.Fatal(err)
	}
	for _, props := range [][]string{{"Zeta"}, {"Cat", "Zeta"}, {"Name", "Namf"}} {
		if f.ready(1, props) || f.view(1, props) != nil {
			t.Errorf("view for %q, built Cat and Name", props)
		}
	}
	if !f.ready(1, []string{"Name"}) {
		t.Error("the last column is not found")
	}
}

// TestLastReleaseFreesTheBase: a dropped table's memory stays mapped while a View holds it
// and is unmapped when the last View is released.
func TestLastReleaseFreesTheBase(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 16 << 20})
	f.load(1, 10)
	if err := f.c.Build(1, []string{"Cat"}); err != nil {
		t.Fatal(err)
	}
	v1, v2 := f.view(1, []string{"Cat"}), f.view(1, []string{"Cat"})
	b := v1.b
	f.c.Drop(1)
	v1.Release()
	if b.keys.b == nil || b.cols[0].idBuf.b == nil {
		t.Fatal("freed while a View still holds the base")
	}
	if got := len(matches(t, v2, "Cat eq 1")); got != 1 {
		t.Fatalf("view after Drop: %d matches", got)
	}
	v2.Release()
	if b.keys.b != nil || b.keyEnds.b != nil || b.values.b != nil || b.cols[0].idBuf.b != nil {
		t.Fatal("the base's memory is still mapped after its last release")
	}
}

// TestBaseOfExactlyTheBudget: a table whose base takes exactly the budget is cached; one
// byte less and it is refused. The table has more than 1024 rows, so the budget is also
// checked during the scan.
func TestBaseOfExactlyTheBudget(t *testing.T) {
	probe := newFixture(t, Options{MaxBytes: 64 << 20, NoValues: true})
	probe.load(1, 1500)
	if err := probe.c.Build(1, []string{"Cat"}); err != nil {
		t.Fatal(err)
	}
	size := probe.c.Stats().Bytes
	f := newFixture(t, Options{MaxBytes: size, NoValues: true})
	f.load(1, 1500)
	if err := f.c.Build(1, []string{"Cat"}); err != nil || f.c.Stats().Bytes != size {
		t.Fatalf("base of exactly the budget (%d bytes): %v, %+v", size, err, f.c.Stats())
	}
	g := newFixture(t, Options{MaxBytes: size - 1, NoValues: true})
	g.load(1, 1500)
	if err := g.c.Build(1, []string{"Cat"}); !errors.Is(err, errTooBig) {
		t.Fatalf("base one byte over the budget: %v", err)
	}
}

// TestValuesAtTheirBudget: a base keeps the entities themselves exactly while they fit
// (everything in MaxBytes, counting the values buffer's growth before it happens, and the
// entities alone in ValuesMaxBytes) and drops them, still caching keys and columns, one byte
// short. Two entities fill the first values buffer exactly (no growth) or by one byte more
// (the buffer doubles for the second).
func TestValuesAtTheirBudget(t *testing.T) {
	const bufMin = 64 << 10 // a buffer's first capacity
	for _, total := range []int{bufMin, bufMin + 1} {
		e1 := &entity.Entity{PartitionKey: "p", RowKey: "r1", Props: []entity.Property{{Name: "S", Value: entity.StringValue(string(make([]byte, 30_000)))}}}
		n1 := len(entity.AppendBinary(nil, e1))
		var e2 *entity.Entity
		n2 := 0
		for l := total - n1 - 100; n1+n2 < total; l++ {
			e2 = &entity.Entity{PartitionKey: "p", RowKey: "r2", Props: []entity.Property{{Name: "S", Value: entity.StringValue(string(make([]byte, l)))}}}
			n2 = len(entity.AppendBinary(nil, e2))
		}
		if n1+n2 != total {
			t.Fatalf("entities of %d+%d bytes, want %d", n1, n2, total)
		}
		load := func(f *fixture) {
			err := f.st.Update(context.Background(), []store.Lock{{Name: "table1", Shared: true}}, func(tx store.Txn) error {
				for _, e := range []*entity.Entity{e1, e2} {
					if err := tx.Set(keys.Entity(1, e.PartitionKey, e.RowKey), entity.AppendBinary(nil, e)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		build := func(o Options) (values bool) {
			t.Helper()
			f := newFixture(t, o)
			load(f)
			if err := f.c.Build(1, []string{"S"}); err != nil {
				t.Fatalf("%d bytes of entities, %+v: %v", total, o, err)
			}
			v := f.view(1, []string{"S"})
			defer v.Release()
			_, ok0 := v.Value(0)
			val, ok1 := v.Value(1)
			if ok0 != ok1 || (ok1 && len(val) != n2) {
				t.Fatalf("values of rows 0 and 1: %v, %v (%d bytes)", ok0, ok1, len(val))
			}
			return ok1
		}
		probe := newFixture(t, Options{MaxBytes: 64 << 20})
		load(probe)
		if err := probe.c.Build(1, []string{"S"}); err != nil {
			t.Fatal(err)
		}
		size := probe.c.Stats().Bytes // with the values
		// The second entity is checked against the budget with its own size on top.
		if !build(Options{MaxBytes: size + int64(n2)}) {
			t.Errorf("%d bytes of entities: values dropped at a budget of exactly their need", total)
		}
		if build(Options{MaxBytes: size + int64(n2) - 1}) {
			t.Errorf("%d bytes of entities: values kept one byte over the budget", total)
		}
		if !build(Options{MaxBytes: 64 << 20, ValuesMaxBytes: int64(total)}) {
			t.Errorf("%d bytes of entities: values dropped at ValuesMaxBytes of exactly their size", total)
		}
		if build(Options{MaxBytes: 64 << 20, ValuesMaxBytes: int64(total) - 1}) {
			t.Errorf("%d bytes of entities: values kept one byte over ValuesMaxBytes", total)
		}
	}
}

// TestBaseSizeCountsEveryBuffer: the budget counts every buffer a base maps: keys and their
// ends, the entities and their ends, and three buffers per column. A small table's buffers
// each take the first capacity.
func TestBaseSizeCountsEveryBuffer(t *testing.T) {
	const bufMin = 64 << 10
	for _, c := range []struct {
		noValues bool
		props    []string
		buffers  int64
	}{
		{true, []string{"Cat"}, 2 + 3},
		{false, []string{"Cat"}, 4 + 3},
		{true, []string{"Cat", "Name"}, 2 + 6},
	} {
		f := newFixture(t, Options{MaxBytes: 16 << 20, NoValues: c.noValues})
		f.load(1, 10)
		if err := f.c.Build(1, c.props); err != nil {
			t.Fatal(err)
		}
		if got := f.c.Stats().Bytes; got != c.buffers*bufMin {
			t.Errorf("NoValues=%v %q: %d bytes, want %d buffers of %d", c.noValues, c.props, got, c.buffers, bufMin)
		}
	}
}

// TestBufferGrowth: a buffer grows only when the bytes do not fit, to at least what is
// asked, and keeps what it held.
func TestBufferGrowth(t *testing.T) {
	var f buffer
	defer f.free()
	big := make([]byte, 100<<10)
	big[len(big)-1] = 7
	if err := f.append(big); err != nil {
		t.Fatal(err)
	}
	if len(f.b) != len(big) || cap(f.b) < len(big) || f.b[len(big)-1] != 7 {
		t.Fatalf("after a first append of %d bytes: len %d cap %d", len(big), len(f.b), cap(f.b))
	}
	full := cap(f.b)
	if err := f.append(make([]byte, full-len(f.b))); err != nil || cap(f.b) != full {
		t.Fatalf("filling the buffer exactly regrew it: cap %d, was %d (%v)", cap(f.b), full, err)
	}
	if err := f.grow(1); err != nil || cap(f.b) < full+1 || f.b[len(big)-1] != 7 {
		t.Fatalf("one byte past full: cap %d (%v)", cap(f.b), err)
	}
}

// TestDefaultBuildAfter: BuildAfter 0 means the default (20 000 scanned entities), not
// "build at once".
func TestDefaultBuildAfter(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 16 << 20})
	f.load(1, 10)
	f.c.NoteScan(1, []string{"Cat"}, 19_999)
	f.c.builds.Wait()
	if f.ready(1, []string{"Cat"}) {
		t.Fatal("built before 20 000 entities were scanned")
	}
	f.c.NoteScan(1, []string{"Cat"}, 1)
	f.c.builds.Wait()
	if !f.ready(1, []string{"Cat"}) {
		t.Fatal("not built after 20 000 entities")
	}
}

// TestOffsetLimits: a base's arrays hold uint32 offsets, so its keys, its entities and each
// column's distinct values may take at most 4 GiB each. With the limit lowered to what a small
// table needs, the base is built in full exactly at it; one byte less drops the entities (the
// keys and columns are still cached) or, for keys and column values, refuses the base.
func TestOffsetLimits(t *testing.T) {
	build := func(limit int64, load func(*fixture), props []string) (*base, error) {
		t.Helper()
		f := newFixture(t, Options{MaxBytes: 64 << 20})
		f.c.offsetLimit = limit
		load(f)
		err := f.c.Build(1, props)
		f.c.mu.Lock()
		defer f.c.mu.Unlock()
		return f.c.tables[1].base, err
	}
	rows := func(f *fixture) { f.load(1, 50) }
	full, err := build(maxOffset, rows, []string{"Cat", "Name"})
	if err != nil || !full.hasValues {
		t.Fatalf("probe: %v", err)
	}
	keyBytes, valueBytes := int64(len(full.keys.b)), int64(len(full.values.b))
	if keyBytes >= valueBytes-1 {
		t.Fatalf("%d bytes of keys, %d of entities: the entities must be the larger", keyBytes, valueBytes)
	}
	if b, err := build(valueBytes, rows, []string{"Cat"}); err != nil || !b.hasValues {
		t.Errorf("entities dropped at a limit of exactly their size (%v)", err)
	}
	if b, err := build(valueBytes-1, rows, []string{"Cat"}); err != nil || b.hasValues || b.rows != 50 {
		t.Errorf("one byte under the entities' size: want them dropped and the keys kept (%v)", err)
	}
	if _, err := build(keyBytes, rows, []string{"Cat"}); err != nil {
		t.Errorf("keys refused at a limit of exactly their size: %v", err)
	}
	if _, err := build(keyBytes-1, rows, []string{"Cat"}); !errors.Is(err, errTooBig) || !strings.Contains(err.Error(), "keys") {
		t.Errorf("keys one byte over the limit: %v, want errTooBig for the keys", err)
	}

	// One column whose two distinct values outweigh the keys.
	wide := func(f *fixture) {
		err := f.st.Update(context.Background(), []store.Lock{{Name: "table1", Shared: true}}, func(tx store.Txn) error {
			for i, r := range []string{"a", "b", "c"} {
				s := strings.Repeat(string(rune('x'+i%2)), 300)
				e := &entity.Entity{PartitionKey: "p", RowKey: r, Props: []entity.Property{{Name: "S", Value: entity.StringValue(s)}}}
				if err := tx.Set(keys.Entity(1, e.PartitionKey, e.RowKey), entity.AppendBinary(nil, e)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	full, err = build(maxOffset, wide, []string{"S"})
	if err != nil {
		t.Fatal(err)
	}
	colBytes := int64(len(full.cols[0].vals))
	if colBytes <= int64(len(full.keys.b)) || len(full.cols[0].offs) != 3 {
		t.Fatalf("column of %d bytes in %d values, keys of %d bytes", colBytes, len(full.cols[0].offs)-1, len(full.keys.b))
	}
	if _, err := build(colBytes, wide, []string{"S"}); err != nil {
		t.Errorf("column refused at a limit of exactly its size: %v", err)
	}
	if _, err := build(colBytes-1, wide, []string{"S"}); !errors.Is(err, errTooBig) || !strings.Contains(err.Error(), "column S") {
		t.Errorf("column one byte over the limit: %v, want errTooBig for column S", err)
	}
}
