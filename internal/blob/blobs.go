package blob

import (
	"bytes"
	"context"
	"errors"
	"math"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Ref names a blob (Snapshot 0: the base blob).
type Ref struct {
	Account, Container, Name string
	Snapshot                 int64
}

func getBlob(get func([]byte) ([]byte, error), cid uint64, name string, snap int64) (*Blob, error) {
	v, err := get(keys.Blob(cid, name, snap))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := decodeBlob(v)
	if err != nil {
		return nil, err
	}
	b.Name, b.Snapshot = name, snap
	return b, nil
}

// update runs fn on the blob's record under the container lock (shared: a container is not
// deleted under a write) and the blob's lock. fn gets the existing blob (nil: none) and
// returns the record to store (nil: delete it; the same pointer: store it).
func (s *Service) update(ctx context.Context, r Ref, fn func(tx store.Txn, c *Container, old *Blob, now int64) (*Blob, error)) (*Blob, error) {
	return s.updateBlob(ctx, r, false, fn)
}

// updateBlob is update; with cached, fn promises to modify neither old (which then may come
// from the cache of decoded records, its slices shared) nor, after it returns, the record it
// returns, which is then cached with the bytes stored. Put Blob does this: an upload that
// replaces a blob skips decoding the record it replaces (4-5% of a 1 KiB upload's server
// CPU when the blob is overwritten), and a read of what it stored skips decoding that.
func (s *Service) updateBlob(ctx context.Context, r Ref, cached bool, fn func(tx store.Txn, c *Container, old *Blob, now int64) (*Blob, error)) (*Blob, error) {
	var out *Blob
	var key, raw []byte
	locks := []store.Lock{{Name: containerLock(r.Account, r.Container).Name, Shared: true}, blobLock(r.Account, r.Container, r.Name)}
	err := s.st.Update(ctx, locks, func(tx store.Txn) error {
		key, raw = nil, nil // a retried Update starts over
		c, err := s.getContainer(tx.Get, r.Account, r.Container)
		if err != nil {
			return err
		}
		var old *Blob
		if cached {
			old, err = s.cachedBlob(tx.Get, c.ID, r.Name, r.Snapshot)
		} else {
			old, err = getBlob(tx.Get, c.ID, r.Name, r.Snapshot)
		}
		if err != nil {
			return err
		}
		nb, err := fn(tx, c, old, s.Now())
		if err == errKeep {
			out = nb
			return nil
		}
		if err != nil {
			return err
		}
		out = nb
		k := keys.Blob(c.ID, r.Name, r.Snapshot)
		if nb == nil {
			return tx.Delete(k)
		}
		v := nb.encode()
		if cached {
			key, raw = k, v
		}
		return tx.Set(k, v)
	})
	if err == nil && raw != nil {
		s.blobs.put(key, raw, decodedForm(out))
	}
	if out != nil {
		out.Name, out.Snapshot = r.Name, r.Snapshot
	}
	return out, err
}

// cachedBlob is getBlob through the cache of decoded records: the result's slices are shared
// with it and must not be modified.
func (s *Service) cachedBlob(get func([]byte) ([]byte, error), cid uint64, name string, snap int64) (*Blob, error) {
	k := keys.Blob(cid, name, snap)
	v, err := get(k)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := s.blobs.get(k, v)
	if err != nil {
		return nil, err
	}
	b.Name, b.Snapshot = name, snap
	return b, nil
}

// decodedForm is a copy of b as decodeBlob returns it from b.encode(): no name or snapshot
// (not stored), and nil for every empty slice (JSON omits them, and decodeBlob keeps no
// empty inline bytes).
func decodedForm(b *Blob) *Blob {
	cp := *b
	cp.Name, cp.Snapshot = "", 0
	if len(cp.Meta) == 0 {
		cp.Meta = nil
	}
	if len(cp.Tags) == 0 {
		cp.Tags = nil
	}
	if len(cp.Blocks) == 0 {
		cp.Blocks = nil
	}
	if len(cp.Pages) == 0 {
		cp.Pages = nil
	}
	if len(cp.Props.ContentMD5) == 0 {
		cp.Props.ContentMD5 = nil
	}
	if len(cp.inline) == 0 {
		cp.inline = nil
	}
	return &cp
}

// PutRequest is Put Blob (and, with Blocks, the commit of Put Block List).
type PutRequest struct {
	Type  string
	Props Props
	// SetMD5 is true when x-ms-blob-content-md5 was sent (Props.ContentMD5 holds it).
	SetMD5 bool
	Meta   Meta
	Tier   string
	Cond   Cond
	Body   Body
	// PageSize is a page blob's x-ms-blob-content-length, Seq its x-ms-blob-sequence-number.
	PageSize, Seq int64
	// Tags are x-ms-tags.
	Tags Tags
}

// Put is Put Blob: it replaces the blob entirely and drops its uncommitted blocks.
func (s *Service) Put(ctx context.Context, r Ref, p PutRequest) (*Blob, error) {
	if err := ValidBlobName(r.Name); err != nil {
		return nil, err
	}
	if err := ValidateMeta(p.Meta); err != nil {
		return nil, err
	}
	switch p.Type {
	case BlockBlob:
	case AppendBlob:
		if p.Body.Size > 0 {
			return nil, azerr.New(azerr.InvalidHeaderValue)
		}
	case PageBlob:
		if p.Body.Size > 0 || p.PageSize < 0 || p.PageSize%512 != 0 {
			return nil, azerr.New(azerr.InvalidHeaderValue)
		}
	default:
		return nil, azerr.New(azerr.InvalidHeaderValue)
	}
	// Fail fast, before streaming a large body, on what the commit will check again. A body
	// small enough to be read into memory is read first: the commit's checks then suffice,
	// and the precheck (a container and a blob read, a third of a 1 KiB upload's CPU) runs
	// only if the body fails, so that its errors still come first.
	small := p.Body.Size >= 0 && p.Body.Size <= inlineMax
	if !small {
		if err := s.precheck(ctx, r, p.Cond, true); err != nil {
			return nil, err
		}
	}
	w, err := s.write(ctx, p.Body, true)
	if err != nil {
		if small {
			if perr := s.precheck(ctx, r, p.Cond, true); perr != nil {
				return nil, perr
			}
		}
		return nil, err
	}
	defer s.release(w)
	garbage := false // a sweep is asked for only when the write freed something
	// Cached: this function modifies neither old nor, once returned, nb (updateBlob).
	nb, err := s.updateBlob(ctx, r, true, func(tx store.Txn, c *Container, old *Blob, now int64) (*Blob, error) {
		if err := s.checkWrite(old, p.Cond, now, true); err != nil {
			return nil, err
		}
		nb := s.fresh(old, p.Type, p.Props, p.Meta, p.Tier)
		nb.Tags = p.Tags
		if !p.SetMD5 && p.Type == BlockBlob {
			nb.Props.ContentMD5 = w.md5
		}
		nb.Size = w.size
		switch {
		case p.Type == PageBlob:
			nb.Size, nb.Seq = p.PageSize, p.Seq
		case w.ext != 0:
			nb.Blocks = []Block{{Size: w.size, Ext: w.ext}}
		default:
			nb.inline = w.inline
		}
		dropped, err := dropStaged(ctx, tx, c.ID, r.Name)
		garbage = dropped > 0 || (old != nil && (len(old.Blocks) > 0 || len(old.Pages) > 0))
		return nb, err
	})
	if err != nil {
		return nil, err
	}
	if garbage {
		s.gc.poke()
	}
	return nb, nil
}

// fresh starts the record that replaces old (properties and metadata from the request,
// creation time and snapshot count kept).
func (s *Service) fresh(old *Blob, typ string, props Props, meta Meta, tier string) *Blob {
	t := s.clk.tick()
	nb := &Blob{Type: typ, Created: t, Modified: t, Props: props, Meta: meta, Tier: tier}
	if nb.Props.ContentType == "" {
		nb.Props.ContentType = "application/octet-stream"
	}
	if old != nil {
		nb.Created, nb.Snapshots, nb.Lease = old.Created, old.Snapshots, old.Lease
	}
	return nb
}

// precheck reads the container and blob outside any lock and applies the write checks.
func (s *Service) precheck(ctx context.Context, r Ref, cond Cond, create bool) error {
	c, err := s.GetContainer(ctx, r.Account, r.Container)
	if err != nil {
		return err
	}
	old, err := getBlob(func(k []byte) ([]byte, error) { return s.st.Get(ctx, k) }, c.ID, r.Name, 0)
	if err != nil {
		return err
	}
	return s.checkWrite(old, cond, s.Now(), create)
}

// checkWrite applies lease then conditions to a write of old (nil: missing).
func (s *Service) checkWrite(old *Blob, cond Cond, now int64, create bool) error {
	if old == nil {
		if cond.LeaseID != "" {
			return azerr.New(azerr.LeaseNotPresentWithBlobOperation)
		}
		if cond.IfTags != nil {
			return azerr.New(azerr.ConditionNotMet)
		}
		return cond.check(false, "", 0, false, create)
	}
	if err := old.Lease.checkWrite(now, cond.LeaseID, false); err != nil {
		return err
	}
	if err := cond.check(true, old.ETag(), old.Modified, false, create); err != nil {
		return err
	}
	return cond.checkTags(old.Tags)
}

// Get returns a blob's record for reading (conditions and lease id checked). Missing →
// BlobNotFound. The record's slices (blocks, pages, metadata, inline bytes) may be shared
// with a cache of decoded records: callers must not modify them in place.
func (s *Service) Get(ctx context.Context, r Ref, cond Cond) (*Blob, error) {
	c, err := s.GetContainer(ctx, r.Account, r.Container)
	if err != nil {
		return nil, err
	}
	k := keys.Blob(c.ID, r.Name, r.Snapshot)
	v, err := s.st.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return nil, azerr.New(azerr.BlobNotFound)
	}
	if err != nil {
		return nil, err
	}
	b, err := s.blobs.get(k, v)
	if err != nil {
		return nil, err
	}
	b.Name, b.Snapshot = r.Name, r.Snapshot
	if err := b.Lease.checkRead(s.Now(), cond.LeaseID); err != nil {
		return nil, err
	}
	if err := cond.check(true, b.ETag(), b.Modified, true, false); err != nil {
		return nil, err
	}
	if err := cond.checkTags(b.Tags); err != nil {
		return nil, err
	}
	return b, nil
}

// existing is the common start of writes that need the blob to exist.
func (s *Service) existing(old *Blob, cond Cond, now int64) error {
	if old == nil {
		return azerr.New(azerr.BlobNotFound)
	}
	return s.checkWrite(old, cond, now, false)
}

// SetPropsRequest is Set Blob Properties.
type SetPropsRequest struct {
	Props Props
	// KeepProps leaves the content properties alone: the request carried none of them, only
	// a page blob's resize or sequence number headers.
	KeepProps bool
	// Resize is a page blob's new x-ms-blob-content-length (-1: unchanged).
	Resize int64
	// SeqAction is x-ms-sequence-number-action ("": none; max, update or increment) and Seq
	// its x-ms-blob-sequence-number.
	SeqAction string
	Seq       int64
}

// SetProperties replaces the six content properties (unsent ones are cleared) and, for a
// page blob, resizes it and sets its sequence number.
func (s *Service) SetProperties(ctx context.Context, r Ref, p SetPropsRequest, cond Cond) (*Blob, error) {
	if p.Resize >= 0 && p.Resize%pageSize != 0 {
		return nil, azerr.New(azerr.InvalidHeaderValue)
	}
	return s.update(ctx, r, func(_ store.Txn, _ *Container, old *Blob, now int64) (*Blob, error) {
		if err := s.existing(old, cond, now); err != nil {
			return nil, err
		}
		if (p.Resize >= 0 || p.SeqAction != "") && old.Type != PageBlob {
			return nil, azerr.New(azerr.InvalidBlobType)
		}
		if !p.KeepProps {
			old.Props = p.Props
		}
		if p.Resize >= 0 {
			if p.Resize < old.Size {
				old.Pages = cut(old.Pages, p.Resize, old.Size-p.Resize)
			}
			old.Size = p.Resize
		}
		switch p.SeqAction {
		case "max":
			old.Seq = max(old.Seq, p.Seq)
		case "update":
			old.Seq = p.Seq
		case "increment":
			if old.Seq == math.MaxInt64 {
				return nil, azerr.New(azerr.InvalidHeaderValue)
			}
			old.Seq++
		}
		old.Modified = s.clk.tick()
		return old, nil
	})
}

// SetMetadata replaces a blob's metadata.
func (s *Service) SetMetadata(ctx context.Context, r Ref, meta Meta, cond Cond) (*Blob, error) {
	if err := ValidateMeta(meta); err != nil {
		return nil, err
	}
	return s.update(ctx, r, func(_ store.Txn, _ *Container, old *Blob, now int64) (*Blob, error) {
		if err := s.existing(old, cond, now); err != nil {
			return nil, err
		}
		old.Meta, old.Modified = meta, s.clk.tick()
		return old, nil
	})
}

// SetTier stores an access tier (no rehydration is emulated).
func (s *Service) SetTier(ctx context.Context, r Ref, tier string, cond Cond) error {
	_, err := s.update(ctx, r, func(_ store.Txn, _ *Container, old *Blob, now int64) (*Blob, error) {
		if err := s.existing(old, cond, now); err != nil {
			return nil, err
		}
		old.Tier = tier
		return old, nil
	})
	return err
}

// Lease runs a lease action on a blob; the ETag does not change.
func (s *Service) Lease(ctx context.Context, r Ref, lr LeaseRequest, cond Cond) (*Blob, LeaseResult, error) {
	var res LeaseResult
	b, err := s.update(ctx, r, func(_ store.Txn, _ *Container, old *Blob, now int64) (*Blob, error) {
		if old == nil {
			return nil, azerr.New(azerr.BlobNotFound)
		}
		cond.LeaseID = ""
		if err := cond.check(true, old.ETag(), old.Modified, false, false); err != nil {
			return nil, err
		}
		if err := cond.checkTags(old.Tags); err != nil {
			return nil, err
		}
		var err error
		res, err = old.Lease.apply(now, lr)
		return old, err
	})
	return b, res, err
}

// DeleteSnapshots is x-ms-delete-snapshots: "", "include" or "only".
func (s *Service) Delete(ctx context.Context, r Ref, snapshots string, cond Cond) error {
	c, err := s.GetContainer(ctx, r.Account, r.Container)
	if err != nil {
		return err
	}
	if r.Snapshot != 0 {
		if snapshots != "" {
			return azerr.New(azerr.InvalidQueryParameterValue)
		}
		_, err := s.update(ctx, r, func(tx store.Txn, c *Container, old *Blob, now int64) (*Blob, error) {
			if old == nil {
				return nil, azerr.New(azerr.BlobNotFound)
			}
			base, err := getBlob(tx.Get, c.ID, r.Name, 0)
			if err != nil {
				return nil, err
			}
			if base != nil && base.Snapshots > 0 {
				base.Snapshots--
				if err := tx.Set(keys.Blob(c.ID, r.Name, 0), base.encode()); err != nil {
					return nil, err
				}
			}
			return nil, nil
		})
		if err == nil {
			s.gc.poke()
		}
		return err
	}
	_ = c
	_, err = s.update(ctx, r, func(tx store.Txn, c *Container, old *Blob, now int64) (*Blob, error) {
		if err := s.existing(old, cond, now); err != nil {
			// A blob with only uncommitted blocks is not found either.
			return nil, err
		}
		switch snapshots {
		case "":
			if old.Snapshots > 0 {
				return nil, azerr.New(azerr.SnapshotsPresent)
			}
		case "include", "only":
			lo := keys.Blob(c.ID, r.Name, 1)
			if err := tx.DeleteRange(lo, keys.Blob(c.ID, r.Name, 0)); err != nil {
				return nil, err
			}
			if snapshots == "only" {
				old.Snapshots = 0
				return old, nil
			}
		default:
			return nil, azerr.New(azerr.InvalidHeaderValue)
		}
		_, err := dropStaged(ctx, tx, c.ID, r.Name)
		return nil, err
	})
	if err == nil {
		s.gc.poke()
	}
	return err
}

// Snapshot records the blob's current state as a read-only snapshot and returns its time.
func (s *Service) Snapshot(ctx context.Context, r Ref, meta Meta, setMeta bool, cond Cond) (*Blob, int64, error) {
	if err := ValidateMeta(meta); err != nil {
		return nil, 0, err
	}
	var snap int64
	b, err := s.update(ctx, r, func(tx store.Txn, c *Container, old *Blob, now int64) (*Blob, error) {
		if old == nil {
			return nil, azerr.New(azerr.BlobNotFound)
		}
		if err := old.Lease.checkRead(now, cond.LeaseID); err != nil {
			return nil, err
		}
		if err := cond.check(true, old.ETag(), old.Modified, false, false); err != nil {
			return nil, err
		}
		if err := cond.checkTags(old.Tags); err != nil {
			return nil, err
		}
		snap = s.clk.tick()
		sb := *old
		sb.Lease, sb.Snapshots = Lease{}, 0
		if setMeta {
			sb.Meta = meta
		}
		if err := tx.Set(keys.Blob(c.ID, r.Name, snap), sb.encode()); err != nil {
			return nil, err
		}
		old.Snapshots++
		return old, nil
	})
	return b, snap, err
}

// dropStaged deletes a blob's uncommitted blocks, if it has any, and says how many. The
// caller holds the blob's lock, so none is staged meanwhile. Checking first matters: a range
// deletion on every Put Blob would pile up range tombstones that every later read has to
// step over (1 KiB Put Blob from 16 writers: 1,375/s with one per put).
func dropStaged(ctx context.Context, tx store.Txn, cid uint64, name string) (int, error) {
	p := keys.BlobBlockPrefix(cid, name, false)
	snap, err := tx.Snapshot()
	if err != nil {
		return 0, err
	}
	var staged [][]byte
	err = snap.Scan(ctx, p, keys.PrefixEnd(p), func(k, v []byte) (bool, error) {
		staged = append(staged, bytes.Clone(k))
		return true, nil
	})
	snap.Close()
	if err != nil {
		return 0, err
	}
	return len(staged), deleteKeys(tx, staged)
}

// deleteKeys deletes keys one by one: point tombstones, not a range tombstone that reads
// would have to step over until a compaction drops it.
func deleteKeys(tx store.Txn, ks [][]byte) error {
	for _, k := range ks {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
