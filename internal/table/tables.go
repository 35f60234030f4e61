package table

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/query"
	"github.com/tablo/tablo/internal/store"
)

// Table is one table of an account.
type Table struct {
	ID uint64
	// Name is the name with the case used at creation.
	Name string
}

const catalogLock = "catalog"

// ValidateTableName applies Azure's table-name rules.
func ValidateTableName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		// Characters are checked first when the name is also invalid, as Azure does for names
		// with punctuation; length alone gives OutOfRangeInput.
		if !alnumStartingWithLetter(name) {
			return azerr.New(azerr.InvalidResourceName)
		}
		return azerr.Newf(azerr.OutOfRangeInput, "The specified resource name length is not within the permissible limits.")
	}
	if !alnumStartingWithLetter(name) {
		return azerr.New(azerr.InvalidResourceName)
	}
	if strings.EqualFold(name, "tables") {
		return azerr.New(azerr.InvalidInput)
	}
	return nil
}

func alnumStartingWithLetter(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		isLetter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !isLetter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func encodeTable(t Table) []byte {
	b := binary.BigEndian.AppendUint64(nil, t.ID)
	return append(b, t.Name...)
}

func decodeTable(v []byte) (Table, error) {
	if len(v) < 8 {
		return Table{}, fmt.Errorf("table: corrupt catalog record")
	}
	return Table{ID: binary.BigEndian.Uint64(v), Name: string(v[8:])}, nil
}

var nextIDKey = keys.Meta("next-table-id")

// CreateTable creates a table. A name that exists in any case → TableAlreadyExists.
func (s *Service) CreateTable(ctx context.Context, account, name string) (Table, error) {
	if err := ValidateTableName(name); err != nil {
		return Table{}, err
	}
	var t Table
	err := s.st.Update(ctx, []store.Lock{{Name: catalogLock}}, func(tx store.Txn) error {
		ck := keys.Table(account, strings.ToLower(name))
		if _, err := tx.Get(ck); err == nil {
			return azerr.New(azerr.TableAlreadyExists)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		v, err := tx.Get(nextIDKey)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		id := uint64(1)
		if len(v) == 8 {
			id = binary.BigEndian.Uint64(v)
		}
		if err := tx.Set(nextIDKey, binary.BigEndian.AppendUint64(nil, id+1)); err != nil {
			return err
		}
		t = Table{ID: id, Name: name}
		return tx.Set(ck, encodeTable(t))
	})
	if err != nil {
		return Table{}, fmt.Errorf("table: create %q: %w", name, err)
	}
	s.cacheTable(account, t)
	return t, nil
}

// GetTable looks a table up by name (any case). Missing → ResourceNotFound, the answer of
// GET /Tables('name'); entity operations turn it into TableNotFound with lookupTable.
func (s *Service) GetTable(ctx context.Context, account, name string) (Table, error) {
	if t, ok := s.cachedTable(account, name); ok {
		return t, nil
	}
	v, err := s.st.Get(ctx, keys.Table(account, strings.ToLower(name)))
	if errors.Is(err, store.ErrNotFound) {
		return Table{}, azerr.New(azerr.ResourceNotFound)
	}
	if err != nil {
		return Table{}, fmt.Errorf("table: get %q: %w", name, err)
	}
	t, err := decodeTable(v)
	if err != nil {
		return Table{}, err
	}
	s.cacheTable(account, t)
	if s.shared {
		s.setHint(account, name, t, true)
	}
	return t, nil
}

// lookupTable is GetTable for entity operations: a missing table is TableNotFound.
func (s *Service) lookupTable(ctx context.Context, account, name string) (Table, error) {
	t, err := s.GetTable(ctx, account, name)
	if azerr.Is(err, azerr.ResourceNotFound) {
		return Table{}, azerr.New(azerr.TableNotFound)
	}
	return t, err
}

// DeleteTable removes a table, its entities and metadata. The entities are dropped with one
// range deletion, so the cost does not grow with the table's size; the engine reclaims the
// space in the background.
func (s *Service) DeleteTable(ctx context.Context, account, name string) error {
	t, err := s.GetTable(ctx, account, name)
	if err != nil {
		return err
	}
	locks := []store.Lock{{Name: catalogLock}, {Name: tableLock(t.ID)}}
	var undo func()
	err = s.st.Update(ctx, locks, func(tx store.Txn) error {
		ck := keys.Table(account, strings.ToLower(name))
		v, err := tx.Get(ck)
		if errors.Is(err, store.ErrNotFound) {
			return azerr.New(azerr.ResourceNotFound)
		} else if err != nil {
			return err
		}
		if cur, err := decodeTable(v); err != nil || cur.ID != t.ID {
			return azerr.New(azerr.ResourceNotFound) // deleted and re-created meanwhile
		}
		if err := tx.Delete(ck); err != nil {
			return err
		}
		if s.drops.chunk > 0 {
			// Range deletes cost per key here: the entities go in the background, in
			// chunks (drop.go). Nothing reaches them meanwhile: no catalog record names
			// their id any more, and ids are never reused.
			if err := tx.Set(dropKey(t.ID), nil); err != nil {
				return err
			}
		} else if err := tx.DeleteRange(keys.TablePrefix(t.ID), keys.TableEnd(t.ID)); err != nil {
			return err
		}
		if err := tx.DeleteRange(keys.TableMetaPrefix(t.ID), keys.PrefixEnd(keys.TableMetaPrefix(t.ID))); err != nil {
			return err
		}
		// Mark the id dead while holding the table lock: writers re-check under the shared
		// lock (checkTableLive), so none can write into the table after this commits.
		undo = s.markDead(account, t)
		return nil
	})
	if err != nil {
		if undo != nil {
			undo()
		}
		return fmt.Errorf("table: delete %q: %w", name, err)
	}
	if s.cols != nil {
		s.cols.Drop(t.ID)
	}
	if s.drops.chunk > 0 {
		s.drops.kick()
	}
	return nil
}

// TableQuery selects tables for Query Tables.
type TableQuery struct {
	Filter *query.Filter
	// Top is the page size (0 = 1,000).
	Top int
	// Next is the decoded NextTableName continuation (a lower-cased name), or "".
	Next string
}

// TablePage is one page of Query Tables.
type TablePage struct {
	Tables []Table
	// Next is the continuation (lower-cased name of the first table not returned), or "".
	Next string
}

type tableNameGetter string

func (g tableNameGetter) Get(name string) (entity.Value, bool) {
	if name == "TableName" {
		return entity.StringValue(string(g)), true
	}
	return entity.Value{}, false
}

// ListTables returns one page of the account's tables in name order.
func (s *Service) ListTables(ctx context.Context, account string, q TableQuery) (TablePage, error) {
	limit := q.Top
	if limit <= 0 || limit > MaxPageSize {
		limit = MaxPageSize
	}
	prefix := keys.TableCatalogPrefix(account)
	start := prefix
	if q.Next != "" {
		start = keys.Table(account, q.Next)
	}
	var page TablePage
	err := s.st.Scan(ctx, start, keys.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		t, err := decodeTable(v)
		if err != nil {
			return false, err
		}
		if q.Filter != nil && !q.Filter.Eval(tableNameGetter(t.Name)) {
			return true, nil
		}
		if len(page.Tables) == limit {
			page.Next = string(k[len(prefix):])
			return false, nil
		}
		page.Tables = append(page.Tables, t)
		return true, nil
	})
	if err != nil {
		return TablePage{}, fmt.Errorf("table: list: %w", err)
	}
	return page, nil
}

func tableLock(id uint64) string { return fmt.Sprintf("t%d", id) }
