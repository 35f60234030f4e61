package table

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Deleting a table on an engine whose range deletes cost time per key (store.Traits) is a
// catalog change plus background work: Delete Table removes the catalog record and leaves a
// drop record ('m' | "drop/" | id); a dropper deletes the table's entities in Updates of
// about RangeDeleteChunk keys, then the drop record. Until then the rows are unreachable: no
// catalog record names their id (Get and Query answer TableNotFound, a re-created table gets
// a new, empty id), and a write re-reads the catalog record inside its transaction. Every
// front end's dropper also looks for drop records left by a front end that stopped midway,
// at start and every dropRescan. On engines with cheap range deletes Delete Table removes
// the entities itself; their dropper only finishes drop records that came with data copied
// from another engine (tablo migrate), with one DeleteRange each.

const dropPrefix = "drop/"

// dropRescan is how often a dropper looks for drop records it was not told about.
const dropRescan = time.Minute

func dropKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64(keys.Meta(dropPrefix), id)
}

type dropper struct {
	s      *Service
	chunk  int
	wake   chan struct{}
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func startDropper(s *Service, chunk int) *dropper {
	ctx, cancel := context.WithCancel(context.Background())
	d := &dropper{s: s, chunk: chunk, wake: make(chan struct{}, 1), cancel: cancel}
	d.done.Go(func() { d.run(ctx) })
	return d
}

// kick asks the dropper to look for work now.
func (d *dropper) kick() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *dropper) close() {
	d.cancel()
	d.done.Wait()
}

func (d *dropper) run(ctx context.Context) {
	t := time.NewTicker(dropRescan)
	defer t.Stop()
	for {
		if err := d.purgeAll(ctx); err != nil && ctx.Err() == nil {
			d.s.log.Warn("purging deleted tables", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-t.C:
		}
	}
}

// purgeAll purges every table with a drop record.
func (d *dropper) purgeAll(ctx context.Context) error {
	prefix := keys.Meta(dropPrefix)
	var ids []uint64
	err := store.ScanKeys(ctx, d.s.st, prefix, keys.PrefixEnd(prefix), func(k []byte) (bool, error) {
		if len(k) == len(prefix)+8 {
			ids = append(ids, binary.BigEndian.Uint64(k[len(prefix):]))
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		errs = append(errs, d.purge(ctx, id))
	}
	return errors.Join(errs...)
}

// purge deletes table id's entities chunk by chunk, then its drop record.
func (d *dropper) purge(ctx context.Context, id uint64) error {
	start, end := keys.TablePrefix(id), keys.TableEnd(id)
	for d.chunk > 0 {
		var bound []byte
		n := 0
		// Keys only: entities can be large, and on a database each would cross the network.
		err := store.ScanKeys(ctx, d.s.st, start, end, func(k []byte) (bool, error) {
			if n++; n > d.chunk {
				bound = bytes.Clone(k)
				return false, nil
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		hi := end
		if bound != nil {
			hi = bound
		}
		if n > 0 {
			if err := d.s.st.Update(ctx, nil, func(tx store.Txn) error { return tx.DeleteRange(start, hi) }); err != nil {
				return err
			}
		}
		if bound == nil {
			break
		}
		start = bound
	}
	return d.s.st.Update(ctx, nil, func(tx store.Txn) error {
		if d.chunk == 0 {
			if err := tx.DeleteRange(start, end); err != nil {
				return err
			}
		}
		return tx.Delete(dropKey(id))
	})
}
