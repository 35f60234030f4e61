package store

import (
	"context"
	"errors"
	"io"
)

// Bulk bytes (blob blocks) do not go through the key-value write path: an LSM would write
// every byte again at each level it is compacted into. Every engine instead keeps them as
// extents: immutable byte sequences written once by streaming, addressed by an id the
// engine assigns, and referenced from ordinary keys that the caller commits with Update.
//
// The contract that makes "a committed reference never points at a missing extent" hold
// after a crash: an extent is durable before Commit returns, so a caller commits the key
// naming it only afterwards; an extent that no committed key names (a crash between the
// two, an overwritten or deleted blob) is garbage that the caller's sweep finds with
// ListExtents and removes with DeleteExtents. Engines never delete an extent on their own
// except unfinished ones: those of a previous run, or, on an engine several processes share,
// those whose writer stopped writing long ago (a process that died). A SQL engine keeps an
// extent as chunk rows (id, chunk number, bytes); a file-backed one as a file.

// ErrExtentNotFound is returned for an id that names no committed extent.
var ErrExtentNotFound = errors.New("store: extent not found")

// Extents is an engine's store of bulk bytes.
type Extents interface {
	// NewExtent starts a new extent. The writer must be committed or aborted.
	NewExtent(ctx context.Context) (ExtentWriter, error)
	// ReadExtent returns a reader of n bytes of extent id starting at off (n < 0: to the
	// end). Reading past the end is ErrUnexpectedEOF from the reader.
	ReadExtent(ctx context.Context, id uint64, off, n int64) (io.ReadCloser, error)
	// DeleteExtents removes extents; ids that do not exist are ignored.
	DeleteExtents(ctx context.Context, ids []uint64) error
	// ListExtents calls fn for every committed extent, in ascending id order.
	ListExtents(ctx context.Context, fn func(id uint64, size int64) error) error
}

// ExtentWriter streams the bytes of one new extent.
type ExtentWriter interface {
	io.Writer
	// ID is the id the extent will have: known from the start, so that a caller can protect
	// it from its own garbage collection before it can appear in ListExtents.
	ID() uint64
	// Commit makes the extent durable and readable (and listed) and returns its id. Ids
	// increase; an id is not reused while an extent with it exists.
	Commit() (id uint64, err error)
	// Abort discards the extent. Safe after Commit (it then does nothing).
	Abort()
}

// An extent reader (from ReadExtent) may also implement io.WriterTo when its engine has a
// cheaper way to hand its bytes to a writer than Read through the caller's buffer (the disk
// engine writes them straight from the page cache); WriteTo then writes the reader's bytes,
// and a short extent is io.ErrUnexpectedEOF, as from Read.
