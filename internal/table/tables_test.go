package table

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

func newService(t *testing.T) (*Service, *pebblestore.DB) {
	t.Helper()
	db := newDB(t)
	return New(db, Options{}), db
}

// newDB is an in-memory Pebble with no Service on it (a Service's dropper works on the store
// in the background, so tests of another Service's dropper start from here).
func newDB(t *testing.T) *pebblestore.DB {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestDeleteTableRacingWriters deletes a table while writers insert into it: afterwards no
// entity may remain under the deleted table's id (no orphan survives the range deletion), and
// every writer either succeeded before the delete or got TableNotFound.
func TestDeleteTableRacingWriters(t *testing.T) {
	ctx := context.Background()
	for round := range 20 {
		svc, db := newService(t)
		tb, err := svc.CreateTable(ctx, "acct", "Racy")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range 50 {
					e := &entity.Entity{PartitionKey: fmt.Sprint(w), RowKey: fmt.Sprint(i)}
					_, err := svc.Write(ctx, "acct", "racy", Op{Kind: InsertOrReplace, Entity: e})
					if err != nil && !azerr.Is(err, azerr.TableNotFound) {
						t.Error(err)
						return
					}
				}
			}()
		}
		close(start)
		if err := svc.DeleteTable(ctx, "acct", "RACY"); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		n := 0
		err = db.Scan(ctx, keys.TablePrefix(tb.ID), keys.TableEnd(tb.ID), func(k, v []byte) (bool, error) {
			n++
			return true, nil
		})
		if err != nil || n != 0 {
			t.Fatalf("round %d: %d orphaned entities under deleted table id (err %v)", round, n, err)
		}
		if _, err := svc.GetTable(ctx, "acct", "racy"); !azerr.Is(err, azerr.ResourceNotFound) {
			t.Fatalf("deleted table still found: %v", err)
		}
		// A table created again with the same name is new and empty.
		tb2, err := svc.CreateTable(ctx, "acct", "racy")
		if err != nil || tb2.ID == tb.ID {
			t.Fatalf("re-create: %+v %v", tb2, err)
		}
		if _, err := svc.GetEntity(ctx, "acct", "racy", "0", "0"); !azerr.Is(err, azerr.ResourceNotFound) {
			t.Fatalf("re-created table not empty: %v", err)
		}
	}
}

func TestTimestampsStrictlyIncrease(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	if _, err := svc.CreateTable(ctx, "a", "Clock"); err != nil {
		t.Fatal(err)
	}
	var last int64
	for i := range 200 {
		r, err := svc.Write(ctx, "a", "Clock", Op{Kind: InsertOrMerge, Entity: &entity.Entity{PartitionKey: "p", RowKey: "r", Props: []entity.Property{{Name: "N", Value: entity.Int32Value(int32(i))}}}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Entity.Timestamp <= last {
			t.Fatalf("write %d: Timestamp %d not after %d", i, r.Entity.Timestamp, last)
		}
		last = r.Entity.Timestamp
	}
}

// TestValidateTableName checks Azure's table-name rules at their edges: 3 to 63 characters,
// ASCII letters and digits, a letter first; "tables" is reserved.
func TestValidateTableName(t *testing.T) {
	long := func(n int) string { return "a" + strings.Repeat("0", n-1) }
	tests := []struct {
		name string
		code azerr.Code // "" = valid
	}{
		{"abc", ""}, {long(63), ""}, {"az09AZ", ""}, {"Tables1", ""}, {"z9", azerr.OutOfRangeInput},
		{"ab", azerr.OutOfRangeInput}, {long(64), azerr.OutOfRangeInput}, {"", azerr.InvalidResourceName},
		{"a-", azerr.InvalidResourceName}, {long(64) + "-", azerr.InvalidResourceName},
		{"tables", azerr.InvalidInput}, {"TaBlEs", azerr.InvalidInput},
		{"1abc", azerr.InvalidResourceName}, {"0abc", azerr.InvalidResourceName}, {"9abc", azerr.InvalidResourceName},
		// The neighbours of each range, in each position.
		{"/abc", azerr.InvalidResourceName}, {":abc", azerr.InvalidResourceName}, {"@abc", azerr.InvalidResourceName},
		{"[abc", azerr.InvalidResourceName}, {"`abc", azerr.InvalidResourceName}, {"{abc", azerr.InvalidResourceName},
		{"ab/", azerr.InvalidResourceName}, {"ab:", azerr.InvalidResourceName}, {"ab@", azerr.InvalidResourceName},
		{"ab[", azerr.InvalidResourceName}, {"ab`", azerr.InvalidResourceName}, {"ab{", azerr.InvalidResourceName},
		{"a0b", ""}, {"a9b", ""}, {"Aab", ""}, {"Zab", ""}, {"aab", ""}, {"zab", ""}, {"baZ", ""}, {"bAa", ""},
	}
	for _, tc := range tests {
		err := ValidateTableName(tc.name)
		if tc.code == "" {
			if err != nil {
				t.Errorf("%q: %v, want valid", tc.name, err)
			}
			continue
		}
		if !azerr.Is(err, tc.code) {
			t.Errorf("%q: %v, want %s", tc.name, err, tc.code)
		}
	}
}
