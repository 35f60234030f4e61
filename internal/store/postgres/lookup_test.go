package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// TestLookupEveryBatchSize: the statement of gathered point reads reads every count of keys
// up to maxBatchKeys (the most a gathered group holds), each value at its key's position.
// Groups that large form only under load, so the statement is run here directly.
func TestLookupEveryBatchSize(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Options{URL: pgtest.URL(t), ReclaimInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	err = d.Update(ctx, nil, func(tx store.Txn) error {
		for i := 0; i < maxBatchKeys; i += 2 {
			if err := tx.Set(fmt.Appendf(nil, "k%02d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= maxBatchKeys; n++ {
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = fmt.Appendf(nil, "k%02d", n-1-i) // descending: positions are not key order
		}
		vals, found := make([][]byte, n), make([]bool, n)
		if err := d.lookupPositional(ctx, keys, vals, found); err != nil {
			t.Fatalf("%d keys: %v", n, err)
		}
		for i := range keys {
			k := n - 1 - i
			if want := k%2 == 0; found[i] != want || (want && string(vals[i]) != fmt.Sprintf("v%d", k)) {
				t.Fatalf("%d keys: key k%02d read %q, %v", n, k, vals[i], found[i])
			}
		}
	}
}
