package table

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Table metadata (the stored access policies) and account settings (service properties)
// are opaque documents to this package: the server owns their formats.

// TableMeta reads a table's named metadata document; a table without one yields nil.
// A missing table is TableNotFound.
func (s *Service) TableMeta(ctx context.Context, account, tableName, name string) ([]byte, error) {
	t, err := s.lookupTable(ctx, account, tableName)
	if err != nil {
		return nil, err
	}
	v, err := s.st.Get(ctx, keys.TableMeta(t.ID, name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("table: meta %s: %w", name, err)
	}
	return v, nil
}

// SetTableMeta replaces a table's named metadata document (nil deletes it).
func (s *Service) SetTableMeta(ctx context.Context, account, tableName, name string, doc []byte) error {
	// On a shared store another process may delete and re-create the table between the
	// lookup and the write (a stale id): the write then goes to the table now under that
	// name, looked up again, as Batch does, a few times at most.
	for range 4 {
		t, err := s.lookupTable(ctx, account, tableName)
		if err != nil {
			return err
		}
		err = s.st.Update(ctx, []store.Lock{{Name: tableLock(t.ID), Shared: true}, {Name: tableLock(t.ID) + "/meta"}}, func(tx store.Txn) error {
			if err := s.checkTableLive(tx, account, tableName, t.ID); err != nil {
				return err
			}
			if doc == nil {
				return tx.Delete(keys.TableMeta(t.ID, name))
			}
			return tx.Set(keys.TableMeta(t.ID, name), doc)
		})
		if errors.Is(err, errStaleHint) {
			continue
		}
		if err != nil {
			return fmt.Errorf("table: set meta %s: %w", name, err)
		}
		return nil
	}
	return azerr.New(azerr.TableNotFound)
}

// AccountSetting reads an account-wide document (nil when never set).
func (s *Service) AccountSetting(ctx context.Context, account, name string) ([]byte, error) {
	v, err := s.st.Get(ctx, keys.Account(account, name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("table: account setting %s: %w", name, err)
	}
	return v, nil
}

// UpdateAccountSetting atomically replaces an account-wide document with fn(old).
func (s *Service) UpdateAccountSetting(ctx context.Context, account, name string, fn func(old []byte) ([]byte, error)) error {
	key := keys.Account(account, name)
	err := s.st.Update(ctx, []store.Lock{{Name: "account/" + account + "/" + name}}, func(tx store.Txn) error {
		old, err := tx.Get(key)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		doc, err := fn(old)
		if err != nil {
			return err
		}
		return tx.Set(key, doc)
	})
	if err != nil {
		return fmt.Errorf("table: update account setting %s: %w", name, err)
	}
	return nil
}
