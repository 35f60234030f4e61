package table

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// chunkedStore reports the traits of a shared engine whose range deletes cost per key, so
// that the background deletion path runs on an in-memory Pebble.
type chunkedStore struct{ store.Store }

func (chunkedStore) Traits() store.Traits { return store.Traits{Shared: true, RangeDeleteChunk: 7} }

func countKeys(t *testing.T, st store.Store, start, end []byte) int {
	t.Helper()
	n := 0
	if err := st.Scan(context.Background(), start, end, func(k, v []byte) (bool, error) { n++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitPurged waits until table id has no entity and no drop record left.
func waitPurged(t *testing.T, st store.Store, id uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for countKeys(t, st, keys.TablePrefix(id), keys.TableEnd(id)) != 0 || countKeys(t, st, dropKey(id), keys.PrefixEnd(dropKey(id))) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the deleted table's entities were not purged")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func fillTable(t *testing.T, svc *Service, name string, n int) {
	t.Helper()
	for i := range n {
		e := &entity.Entity{PartitionKey: fmt.Sprint(i % 3), RowKey: fmt.Sprint(i)}
		if _, err := svc.Write(context.Background(), "acct", name, Op{Kind: Insert, Entity: e}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeleteTableInChunks: on an engine with costly range deletes, Delete Table is a catalog
// change: the table is gone at once for every reader and writer, a re-created table is
// empty, and the entities are purged in the background.
func TestDeleteTableInChunks(t *testing.T) {
	ctx := context.Background()
	_, db := newService(t)
	st := chunkedStore{db}
	svc := New(st, Options{})
	defer svc.Close()
	tb, err := svc.CreateTable(ctx, "acct", "big")
	if err != nil {
		t.Fatal(err)
	}
	fillTable(t, svc, "big", 40)
	if err := svc.DeleteTable(ctx, "acct", "big"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.GetTable(ctx, "acct", "big"); !azerr.Is(err, azerr.ResourceNotFound) {
		t.Fatalf("deleted table found: %v", err)
	}
	_, err = svc.Write(ctx, "acct", "big", Op{Kind: InsertOrReplace, Entity: &entity.Entity{PartitionKey: "0", RowKey: "0"}})
	if !azerr.Is(err, azerr.TableNotFound) {
		t.Fatalf("write into a deleted table: %v", err)
	}
	if _, err := svc.CreateTable(ctx, "acct", "big"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.GetEntity(ctx, "acct", "big", "0", "0"); !azerr.Is(err, azerr.ResourceNotFound) {
		t.Fatalf("re-created table not empty: %v", err)
	}
	waitPurged(t, st, tb.ID)
}

// TestDropResumesAtStart: a drop record left by a front end that stopped before purging is
// finished by the next Service to start on the store.
func TestDropResumesAtStart(t *testing.T) {
	ctx := context.Background()
	_, db := newService(t)
	st := chunkedStore{db}
	svc := New(st, Options{})
	tb, err := svc.CreateTable(ctx, "acct", "left")
	if err != nil {
		t.Fatal(err)
	}
	fillTable(t, svc, "left", 20)
	svc.Close()
	// What Delete Table commits, without its process surviving to purge.
	err = st.Update(ctx, nil, func(tx store.Txn) error {
		if err := tx.Delete(keys.Table("acct", strings.ToLower("left"))); err != nil {
			return err
		}
		return tx.Set(dropKey(tb.ID), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := countKeys(t, st, keys.TablePrefix(tb.ID), keys.TableEnd(tb.ID)); n != 20 {
		t.Fatalf("%d entities before the restart", n)
	}
	svc2 := New(st, Options{})
	defer svc2.Close()
	waitPurged(t, st, tb.ID)
	if _, err := svc2.GetTable(ctx, "acct", "left"); !azerr.Is(err, azerr.ResourceNotFound) {
		t.Fatalf("GetTable: %v", err)
	}
}
