package postgres

import (
	"context"
	"fmt"
	"io"

	"github.com/tablo/tablo/internal/store"
)

// Extents implements store.Store. Bulk bytes (Blob data) are not stored in the database yet:
// writing or reading an extent is store.ErrNotSupported, which the server answers 501
// NotImplemented; listing finds none and deleting has nothing to delete.
func (d *DB) Extents() store.Extents { return noExtents{} }

type noExtents struct{}

var errNoExtents = fmt.Errorf("postgres: blob data (extents): %w", store.ErrNotSupported)

func (noExtents) NewExtent(context.Context) (store.ExtentWriter, error) { return nil, errNoExtents }

func (noExtents) ReadExtent(context.Context, uint64, int64, int64) (io.ReadCloser, error) {
	return nil, errNoExtents
}

func (noExtents) DeleteExtents(context.Context, []uint64) error { return nil }

func (noExtents) ListExtents(context.Context, func(uint64, int64) error) error { return nil }
