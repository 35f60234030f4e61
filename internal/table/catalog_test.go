package table

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/query"
	"github.com/tablo/tablo/internal/store"
)

func createTables(t *testing.T, svc *Service, account string, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := svc.CreateTable(context.Background(), account, n); err != nil {
			t.Fatal(err)
		}
	}
}

func tableNames(p TablePage) []string {
	var out []string
	for _, t := range p.Tables {
		out = append(out, t.Name)
	}
	return out
}

// TestListTables: Query Tables returns one account's tables in lower-cased name order with
// their names as created, pages of Top (1,000 when Top is 0 or less) continued from the
// lower-cased name of the first table not returned, and filters on TableName (tables the
// filter drops do not count toward Top, nor continue a page).
func TestListTables(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	createTables(t, svc, "a", "gamma", "Beta", "alpha", "delta")
	createTables(t, svc, "b", "other")
	list := func(q TableQuery) TablePage {
		t.Helper()
		p, err := svc.ListTables(ctx, "a", q)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := []string{"alpha", "Beta", "delta", "gamma"}
	for _, top := range []int{0, -1, 4, MaxPageSize, MaxPageSize + 1} {
		if p := list(TableQuery{Top: top}); !slices.Equal(tableNames(p), all) || p.Next != "" {
			t.Errorf("Top %d: %v next %q, want %v", top, tableNames(p), p.Next, all)
		}
	}
	p := list(TableQuery{Top: 2})
	if !slices.Equal(tableNames(p), all[:2]) || p.Next != "delta" {
		t.Fatalf("first page of 2: %v next %q", tableNames(p), p.Next)
	}
	p = list(TableQuery{Top: 2, Next: p.Next})
	if !slices.Equal(tableNames(p), all[2:]) || p.Next != "" {
		t.Fatalf("second page of 2: %v next %q", tableNames(p), p.Next)
	}
	p = list(TableQuery{Top: 3})
	if !slices.Equal(tableNames(p), all[:3]) || p.Next != "gamma" {
		t.Fatalf("page of 3: %v next %q", tableNames(p), p.Next)
	}

	f, err := query.Parse("TableName ne 'alpha' and TableName ne 'delta'")
	if err != nil {
		t.Fatal(err)
	}
	p = list(TableQuery{Filter: f, Top: 1})
	if !slices.Equal(tableNames(p), []string{"Beta"}) || p.Next != "gamma" {
		t.Fatalf("filtered page of 1: %v next %q", tableNames(p), p.Next)
	}
	p = list(TableQuery{Filter: f, Top: 1, Next: p.Next})
	if !slices.Equal(tableNames(p), []string{"gamma"}) || p.Next != "" {
		t.Fatalf("filtered second page: %v next %q", tableNames(p), p.Next)
	}
	if p := list(TableQuery{Filter: f, Top: 2}); !slices.Equal(tableNames(p), []string{"Beta", "gamma"}) || p.Next != "" {
		t.Fatalf("filtered page of exactly the matches: %v next %q", tableNames(p), p.Next)
	}
	other, err := query.Parse("PartitionKey eq 'x' or not (Other eq 1)")
	if err != nil {
		t.Fatal(err)
	}
	if p := list(TableQuery{Filter: other}); !slices.Equal(tableNames(p), all) {
		t.Fatalf("a filter on other properties sees none of them: %v", tableNames(p))
	}
	if p, err := svc.ListTables(ctx, "nobody", TableQuery{}); err != nil || len(p.Tables) != 0 {
		t.Fatalf("an account without tables: %v, %v", tableNames(p), err)
	}
}

// failingCommits is an in-memory Pebble whose Updates fail at commit while armed: fn runs,
// then the transaction is abandoned, as when the engine cannot write it.
type failingCommits struct {
	store.Store
	armed atomic.Bool
}

var errCommitFailed = errors.New("commit failed")

func (f *failingCommits) Update(ctx context.Context, locks []store.Lock, fn func(tx store.Txn) error) error {
	return f.Store.Update(ctx, locks, func(tx store.Txn) error {
		if err := fn(tx); err != nil {
			return err
		}
		if f.armed.Load() {
			return errCommitFailed
		}
		return nil
	})
}

// TestDeleteTableFailedCommit: a delete whose transaction fails leaves the table as it was:
// listed, readable and writable.
func TestDeleteTableFailedCommit(t *testing.T) {
	ctx := context.Background()
	st := &failingCommits{Store: newDB(t)}
	svc := New(st, Options{})
	t.Cleanup(svc.Close)
	createTables(t, svc, "a", "kept")
	ins := Op{Kind: Insert, Entity: &entity.Entity{PartitionKey: "p", RowKey: "1"}}
	if _, err := svc.Write(ctx, "a", "kept", ins); err != nil {
		t.Fatal(err)
	}
	st.armed.Store(true)
	if err := svc.DeleteTable(ctx, "a", "kept"); !errors.Is(err, errCommitFailed) {
		t.Fatalf("delete: %v, want the commit's error", err)
	}
	st.armed.Store(false)
	if _, err := svc.GetEntity(ctx, "a", "kept", "p", "1"); err != nil {
		t.Fatalf("read after a failed delete: %v", err)
	}
	ins.Entity.RowKey = "2"
	if _, err := svc.Write(ctx, "a", "kept", ins); err != nil {
		t.Fatalf("write after a failed delete: %v", err)
	}
	if p, err := svc.ListTables(ctx, "a", TableQuery{}); err != nil || !slices.Equal(tableNames(p), []string{"kept"}) {
		t.Fatalf("list after a failed delete: %v, %v", tableNames(p), err)
	}
}

// TestTableMetaAndAccountSettings: a table's metadata documents and an account's settings are
// stored as given, read back (nil when never set or deleted), and refused for a missing
// table; an update sees the previous document and stores nothing when it fails.
func TestTableMetaAndAccountSettings(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	createTables(t, svc, "a", "Tab")
	if doc, err := svc.TableMeta(ctx, "a", "tab", "acl"); err != nil || doc != nil {
		t.Fatalf("meta never set: %q, %v", doc, err)
	}
	if err := svc.SetTableMeta(ctx, "a", "Tab", "acl", []byte("<x/>")); err != nil {
		t.Fatal(err)
	}
	if doc, err := svc.TableMeta(ctx, "a", "TAB", "acl"); err != nil || string(doc) != "<x/>" {
		t.Fatalf("meta: %q, %v", doc, err)
	}
	if doc, err := svc.TableMeta(ctx, "a", "Tab", "other"); err != nil || doc != nil {
		t.Fatalf("another meta name: %q, %v", doc, err)
	}
	if err := svc.SetTableMeta(ctx, "a", "Tab", "acl", nil); err != nil {
		t.Fatal(err)
	}
	if doc, err := svc.TableMeta(ctx, "a", "Tab", "acl"); err != nil || doc != nil {
		t.Fatalf("meta after deleting it: %q, %v", doc, err)
	}
	if _, err := svc.TableMeta(ctx, "a", "missing", "acl"); !azerr.Is(err, azerr.TableNotFound) {
		t.Fatalf("meta of a missing table: %v", err)
	}
	if err := svc.SetTableMeta(ctx, "a", "missing", "acl", []byte("x")); !azerr.Is(err, azerr.TableNotFound) {
		t.Fatalf("set meta of a missing table: %v", err)
	}

	if doc, err := svc.AccountSetting(ctx, "a", "props"); err != nil || doc != nil {
		t.Fatalf("setting never set: %q, %v", doc, err)
	}
	var seen [][]byte
	update := func(next string) error {
		return svc.UpdateAccountSetting(ctx, "a", "props", func(old []byte) ([]byte, error) {
			seen = append(seen, old)
			if next == "" {
				return nil, errors.New("refused")
			}
			return []byte(next), nil
		})
	}
	for _, next := range []string{"one", "two"} {
		if err := update(next); err != nil {
			t.Fatal(err)
		}
	}
	if err := update(""); err == nil || err.Error() != "table: update account setting props: refused" {
		t.Fatalf("a refused update: %v", err)
	}
	if len(seen) != 3 || seen[0] != nil || string(seen[1]) != "one" || string(seen[2]) != "two" {
		t.Fatalf("updates saw %q", seen)
	}
	if doc, err := svc.AccountSetting(ctx, "a", "props"); err != nil || string(doc) != "two" {
		t.Fatalf("setting: %q, %v", doc, err)
	}
	if doc, err := svc.AccountSetting(ctx, "b", "props"); err != nil || doc != nil {
		t.Fatalf("another account's setting: %q, %v", doc, err)
	}
}

// TestDeleteAccount: deleting an account removes its tables, their entities and metadata and
// its settings, and leaves other accounts alone.
func TestDeleteAccount(t *testing.T) {
	ctx := context.Background()
	svc, db := newService(t)
	var ids []uint64
	for _, acct := range []string{"a", "b"} {
		for _, name := range []string{"one", "two"} {
			tb, err := svc.CreateTable(ctx, acct, name)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, tb.ID)
			if _, err := svc.Write(ctx, acct, name, Op{Kind: Insert, Entity: &entity.Entity{PartitionKey: "p", RowKey: "r"}}); err != nil {
				t.Fatal(err)
			}
			if err := svc.SetTableMeta(ctx, acct, name, "acl", []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		if err := svc.UpdateAccountSetting(ctx, acct, "props", func([]byte) ([]byte, error) { return []byte("p"), nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.DeleteAccount(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	svc.DropCaches()
	for i, id := range ids {
		wantKeys := 0
		if i >= 2 { // account b's
			wantKeys = 1
		}
		if n := countKeys(t, db, keys.TablePrefix(id), keys.TableEnd(id)); n != wantKeys {
			t.Errorf("table %d: %d entities, want %d", i, n, wantKeys)
		}
		mp := keys.TableMetaPrefix(id)
		if n := countKeys(t, db, mp, keys.PrefixEnd(mp)); n != wantKeys {
			t.Errorf("table %d: %d metadata documents, want %d", i, n, wantKeys)
		}
	}
	if p, err := svc.ListTables(ctx, "a", TableQuery{}); err != nil || len(p.Tables) != 0 {
		t.Fatalf("tables of the deleted account: %v, %v", tableNames(p), err)
	}
	if _, err := svc.GetTable(ctx, "a", "one"); !azerr.Is(err, azerr.ResourceNotFound) {
		t.Fatalf("a deleted account's table: %v", err)
	}
	if doc, err := svc.AccountSetting(ctx, "a", "props"); err != nil || doc != nil {
		t.Fatalf("a deleted account's setting: %q, %v", doc, err)
	}
	if p, err := svc.ListTables(ctx, "b", TableQuery{}); err != nil || !slices.Equal(tableNames(p), []string{"one", "two"}) {
		t.Fatalf("the other account's tables: %v, %v", tableNames(p), err)
	}
	if doc, err := svc.AccountSetting(ctx, "b", "props"); err != nil || string(doc) != "p" {
		t.Fatalf("the other account's setting: %q, %v", doc, err)
	}
	if _, err := svc.GetEntity(ctx, "b", "two", "p", "r"); err != nil {
		t.Fatalf("the other account's entity: %v", err)
	}
}

// TestSharedReportsTheStore: a Service says whether other processes share its store; a nil
// Service shares nothing.
func TestSharedReportsTheStore(t *testing.T) {
	if (*Service)(nil).Shared() {
		t.Fatal("a nil Service is shared")
	}
	svc, _ := newService(t)
	if svc.Shared() {
		t.Fatal("a private Pebble store is reported shared")
	}
	shared := New(chunkedStore{Store: newDB(t)}, Options{})
	defer shared.Close()
	if !shared.Shared() {
		t.Fatal("a shared store is not reported shared")
	}
}

// TestSharedStoreRecreatedTable: on a store shared by two processes, a table deleted and
// re-created by one is written and read by the other in its new incarnation (its stale id
// guess is detected and looked up again), one write and a batch alike.
func TestSharedStoreRecreatedTable(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	a, b := New(chunkedStore{Store: db}, Options{}), New(chunkedStore{Store: db}, Options{})
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	ins := func(rk string) Op {
		return Op{Kind: Insert, Entity: &entity.Entity{PartitionKey: "p", RowKey: rk}}
	}
	createTables(t, a, "acct", "tab")
	if _, err := a.Write(ctx, "acct", "tab", ins("old")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetEntity(ctx, "acct", "tab", "p", "old"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteTable(ctx, "acct", "tab"); err != nil {
		t.Fatal(err)
	}
	createTables(t, b, "acct", "tab")
	if _, err := a.GetEntity(ctx, "acct", "tab", "p", "old"); !azerr.Is(err, azerr.ResourceNotFound) {
		t.Fatalf("an entity of the deleted incarnation read through a stale guess: %v", err)
	}
	if _, err := a.Write(ctx, "acct", "tab", ins("new")); err != nil {
		t.Fatalf("write through a stale guess: %v", err)
	}
	if _, err := a.Batch(ctx, "acct", "tab", []Op{ins("b1"), ins("b2"), ins("b3")}); err != nil {
		t.Fatalf("batch: %v", err)
	}
	for _, rk := range []string{"new", "b1", "b2", "b3"} {
		if _, err := b.GetEntity(ctx, "acct", "tab", "p", rk); err != nil {
			t.Fatalf("entity %s in the new incarnation: %v", rk, err)
		}
	}
	if _, err := a.Batch(ctx, "acct", "tab", []Op{ins("b4"), ins("b1")}); err == nil {
		t.Fatal("a batch inserting an existing entity succeeded")
	} else if be := (*BatchError)(nil); !errors.As(err, &be) || be.Index != 1 || !azerr.Is(err, azerr.EntityAlreadyExists) {
		t.Fatalf("batch conflict: %v", err)
	}
	if err := b.DeleteTable(ctx, "acct", "tab"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Batch(ctx, "acct", "tab", []Op{ins("x")}); !azerr.Is(err, azerr.TableNotFound) {
		t.Fatalf("batch into a deleted table: %v", err)
	}
}

// TestParseIfMatchAndBatchSize: "*" matches any entity, and a batch of more than 100
// operations is refused at the index Azure reports, 99.
func TestParseIfMatchAndBatchSize(t *testing.T) {
	if m, err := ParseIfMatch("*"); err != nil || !m.Any {
		t.Fatalf("If-Match *: %+v, %v", m, err)
	}
	if m, err := ParseIfMatch(`W/"datetime'2024-01-01T00%3A00%3A00Z'"`); err != nil || m.Any {
		t.Fatalf("If-Match of an ETag: %+v, %v", m, err)
	}
	ops := make([]Op, MaxBatchOps+1)
	for i := range ops {
		ops[i] = Op{Kind: Insert, Entity: &entity.Entity{PartitionKey: "p", RowKey: string(rune('a'+i%26)) + string(rune('a'+i/26))}}
	}
	var be *BatchError
	if err := CheckBatchShape(ops); !errors.As(err, &be) || be.Index != MaxBatchOps-1 || !azerr.Is(err, azerr.InvalidInput) {
		t.Fatalf("batch of %d: %v", len(ops), err)
	}
	if err := CheckBatchShape(ops[:MaxBatchOps]); err != nil {
		t.Fatalf("batch of %d: %v", MaxBatchOps, err)
	}
}
