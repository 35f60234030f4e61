package migrate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"io"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// chunk is the buffer extents stream through: memory stays at this whatever a blob's size.
const chunk = 1 << 20

var crcTable = crc64.MakeTable(crc64.ECMA)

// copyExtent returns the destination id of source extent id, which the record at key k
// reads need bytes of, streaming it into the destination the first time it is asked for
// (extents shared by snapshots and copies are copied once).
func (c *copier) copyExtent(ctx context.Context, k []byte, id uint64, need int64) (uint64, error) {
	if e, ok := c.ext[id]; ok {
		if e.size < need {
			return 0, fmt.Errorf("source extent %d holds %d bytes, but the record reads %d", id, e.size, need)
		}
		return e.id, nil
	}
	r, err := c.src.Extents().ReadExtent(ctx, id, 0, -1)
	if errors.Is(err, store.ErrExtentNotFound) {
		return 0, fmt.Errorf("the record names extent %d, which the source does not hold (its blob data is missing)", id)
	}
	if err != nil {
		return 0, fmt.Errorf("read source extent %d: %w", id, err)
	}
	defer r.Close()
	w, err := c.dst.Extents().NewExtent(ctx)
	if err != nil {
		return 0, fmt.Errorf("new destination extent: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			w.Abort()
		}
	}()
	sum := crc64.New(crcTable)
	if c.buf == nil {
		c.buf = make([]byte, chunk)
	}
	buf := c.buf
	var n int64
	for {
		m, rerr := r.Read(buf)
		if m > 0 {
			if _, err := w.Write(buf[:m]); err != nil {
				return 0, fmt.Errorf("write destination extent: %w", err)
			}
			sum.Write(buf[:m])
			n += int64(m)
			c.res.ExtentBytes += int64(m)
			c.progress(false)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return 0, fmt.Errorf("read source extent %d after %d bytes: %w", id, n, rerr)
		}
	}
	if n < need {
		return 0, fmt.Errorf("source extent %d holds %d bytes, but the record reads %d (its blob data is damaged)", id, n, need)
	}
	nid, err := w.Commit()
	if err != nil {
		return 0, fmt.Errorf("commit destination extent: %w", err)
	}
	committed = true
	c.ext[id] = copied{id: nid, size: n, sum: sum.Sum64()}
	c.res.Extents++
	return nid, nil
}

// verifyExtents reads every copied extent back from the destination and compares its
// length and CRC-64 with the source's.
func (c *copier) verifyExtents(ctx context.Context) error {
	buf := c.buf
	if buf == nil {
		buf = make([]byte, chunk)
	}
	for sid, e := range c.ext {
		r, err := c.dst.Extents().ReadExtent(ctx, e.id, 0, -1)
		if err != nil {
			return fmt.Errorf("migrate: verification failed: destination extent %d (source %d): %w", e.id, sid, err)
		}
		sum := crc64.New(crcTable)
		n, err := io.CopyBuffer(sum, readerOnly{r}, buf)
		r.Close()
		if err != nil {
			return fmt.Errorf("migrate: verification failed: destination extent %d (source %d): %w", e.id, sid, err)
		}
		if n != e.size || sum.Sum64() != e.sum {
			return fmt.Errorf("migrate: verification failed: destination extent %d holds %d bytes (CRC-64 %016x), its source extent %d %d bytes (CRC-64 %016x)",
				e.id, n, sum.Sum64(), sid, e.size, e.sum)
		}
	}
	return nil
}

// readerOnly hides WriterTo so that CopyBuffer uses the bounded buffer.
type readerOnly struct{ io.Reader }

// fail undoes a failed copy so that the destination is empty again, and returns err with
// what became of the destination. What it cannot undo stays marked unfinished.
func (c *copier) fail(ctx context.Context, err error) error {
	ids := make([]uint64, 0, len(c.ext))
	for _, e := range c.ext {
		ids = append(ids, e.id)
	}
	if cerr := c.empty(ctx, ids); cerr != nil {
		return fmt.Errorf("%w; the destination holds part of the data and is marked unfinished (Tablo will not serve it; emptying it failed: %v): empty it before migrating again", err, cerr)
	}
	return fmt.Errorf("%w; nothing was migrated (the destination was emptied again)", err)
}

// empty deletes the copied extents, then every key but the mark, in bounded
// transactions, then the mark.
func (c *copier) empty(ctx context.Context, ids []uint64) error {
	if err := c.dst.Extents().DeleteExtents(ctx, ids); err != nil {
		return err
	}
	for {
		var batch [][]byte
		err := c.dst.Scan(ctx, nil, nil, func(k, _ []byte) (bool, error) {
			if string(k) != string(unfinishedKey) {
				batch = append(batch, append([]byte(nil), k...))
			}
			return len(batch) < batchKeys, nil
		})
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			break
		}
		if err := c.dst.Update(ctx, nil, func(tx store.Txn) error {
			for _, k := range batch {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return c.dst.Update(ctx, nil, func(tx store.Txn) error { return tx.Delete(unfinishedKey) })
}

// describe names the record at key k in messages: a blob or uncommitted block by its
// container id and name, anything else by its bytes.
func describe(k []byte) string {
	if len(k) > 10 && k[0] == keys.TagBlob && k[1] == 'd' {
		id := binary.BigEndian.Uint64(k[2:10])
		if name, snap, err := keys.DecodeBlob(id, k); err == nil {
			if snap != 0 {
				return fmt.Sprintf("blob %q (snapshot %d) of container #%d", name, snap, id)
			}
			return fmt.Sprintf("blob %q of container #%d", name, id)
		}
		if name, block, err := keys.DecodeBlobBlock(id, k); err == nil {
			return fmt.Sprintf("uncommitted block %q of blob %q of container #%d", block, name, id)
		}
	}
	return fmt.Sprintf("key %q", k)
}
