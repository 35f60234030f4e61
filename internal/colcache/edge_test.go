package colcache

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
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
