package blob

import (
	"context"
	"encoding/base64"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Limits (blob.md §16).
const (
	MaxCommittedBlocks = 50_000
	maxBlockIDBytes    = 64
)

// ValidBlockID checks a block id (base64 of at most 64 bytes), as received after one
// level of URL decoding.
func ValidBlockID(id string) error {
	raw, err := base64.StdEncoding.DecodeString(id)
	if err != nil || len(raw) == 0 || len(raw) > maxBlockIDBytes {
		return azerr.New(azerr.InvalidQueryParameterValue)
	}
	return nil
}

// StageResult is what Put Block and Append Block answer.
type StageResult struct {
	MD5, CRC64 []byte
	// Append Block: the offset written at and the block count after it.
	Offset int64
	Count  int
	Blob   *Blob
}

// PutBlock stages a block. The blob itself is untouched until Put Block List.
func (s *Service) PutBlock(ctx context.Context, r Ref, blockID string, body Body, cond Cond) (StageResult, error) {
	if err := ValidBlobName(r.Name); err != nil {
		return StageResult{}, err
	}
	if err := ValidBlockID(blockID); err != nil {
		return StageResult{}, err
	}
	if err := s.precheckLease(ctx, r, cond); err != nil {
		return StageResult{}, err
	}
	w, err := s.write(ctx, body, false)
	if err != nil {
		return StageResult{}, err
	}
	defer s.release(w)
	_, err = s.update(ctx, r, func(tx store.Txn, c *Container, old *Blob, now int64) (*Blob, error) {
		if old != nil {
			if err := old.Lease.checkWrite(now, cond.LeaseID, false); err != nil {
				return nil, err
			}
			if old.Type != BlockBlob {
				return nil, azerr.New(azerr.InvalidBlobType)
			}
		}
		sb := staged{Size: w.size, Ext: w.ext, Staged: s.clk.tick()}
		if err := tx.Set(keys.BlobBlock(c.ID, r.Name, blockID), encodeRecord(&sb, nil)); err != nil {
			return nil, err
		}
		return old, errKeep
	})
	if err != nil && err != errKeep {
		return StageResult{}, err
	}
	s.gc.poke() // a re-staged id leaves its old extent behind
	return StageResult{MD5: w.md5, CRC64: crcWire(w.crc)}, nil
}

// errKeep makes update commit fn's other writes without storing the blob record.
var errKeep = keepErr{}

type keepErr struct{}

func (keepErr) Error() string { return "keep" }

func (s *Service) precheckLease(ctx context.Context, r Ref, cond Cond) error {
	c, err := s.GetContainer(ctx, r.Account, r.Container)
	if err != nil {
		return err
	}
	old, err := getBlob(func(k []byte) ([]byte, error) { return s.st.Get(ctx, k) }, c.ID, r.Name, 0)
	if err != nil || old == nil {
		return err
	}
	return old.Lease.checkWrite(s.Now(), cond.LeaseID, false)
}

// BlockRef is one entry of a Put Block List body.
type BlockRef struct {
	ID string
	// Where is "Committed", "Uncommitted" or "Latest".
	Where string
}

// PutBlockList commits a block list (blob.md §6.3): Committed ids from the current
// committed list, Uncommitted from the staged blocks, Latest the staged block if there is
// one, else the committed one. Every other staged block is discarded.
func (s *Service) PutBlockList(ctx context.Context, r Ref, list []BlockRef, p PutRequest) (*Blob, error) {
	if err := ValidBlobName(r.Name); err != nil {
		return nil, err
	}
	if err := ValidateMeta(p.Meta); err != nil {
		return nil, err
	}
	if len(list) > MaxCommittedBlocks {
		return nil, azerr.New(azerr.BlockCountExceedsLimit)
	}
	nb, err := s.update(ctx, r, func(tx store.Txn, c *Container, old *Blob, now int64) (*Blob, error) {
		if err := s.checkWrite(old, p.Cond, now, true); err != nil {
			return nil, err
		}
		committed := map[string]Block{}
		if old != nil {
			for _, b := range old.Blocks {
				if b.ID != "" {
					committed[b.ID] = b
				}
			}
		}
		uncommitted := map[string]Block{}
		prefix := keys.BlobBlockPrefix(c.ID, r.Name, false)
		snap, err := tx.Snapshot()
		if err != nil {
			return nil, err
		}
		err = snap.Scan(ctx, prefix, keys.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
			sb := &staged{}
			if _, err := decodeRecord(v, sb); err != nil {
				return false, err
			}
			uncommitted[string(k[len(prefix):])] = Block{Size: sb.Size, Ext: sb.Ext}
			return true, nil
		})
		snap.Close()
		if err != nil {
			return nil, err
		}
		nb := s.fresh(old, BlockBlob, p.Props, p.Meta, p.Tier)
		nb.Tags = p.Tags
		if !p.SetMD5 {
			nb.Props.ContentMD5 = nil
		}
		nb.Blocks = make([]Block, 0, len(list))
		for _, ref := range list {
			var b Block
			var ok bool
			switch ref.Where {
			case "Committed":
				b, ok = committed[ref.ID]
			case "Uncommitted":
				b, ok = uncommitted[ref.ID]
			default:
				if b, ok = uncommitted[ref.ID]; !ok {
					b, ok = committed[ref.ID]
				}
			}
			if !ok {
				return nil, azerr.New(azerr.InvalidBlockList)
			}
			b.ID = ref.ID
			nb.Blocks = append(nb.Blocks, b)
			nb.Size += b.Size
		}
		ks := make([][]byte, 0, len(uncommitted))
		for id := range uncommitted {
			ks = append(ks, keys.BlobBlock(c.ID, r.Name, id))
		}
		return nb, deleteKeys(tx, ks)
	})
	if err != nil {
		return nil, err
	}
	s.gc.poke()
	return nb, nil
}

// BlockInfo is one listed block.
type BlockInfo struct {
	ID   string
	Size int64
}

// GetBlockList lists a blob's committed and/or uncommitted blocks. blob is nil when the
// blob has only uncommitted blocks.
func (s *Service) GetBlockList(ctx context.Context, r Ref, cond Cond) (blob *Blob, committed, uncommitted []BlockInfo, err error) {
	c, err := s.GetContainer(ctx, r.Account, r.Container)
	if err != nil {
		return nil, nil, nil, err
	}
	snap, err := s.st.Snapshot(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	defer snap.Close()
	get := func(k []byte) ([]byte, error) {
		v, err := snap.Lookup(k)
		return append([]byte(nil), v...), err
	}
	blob, err = getBlob(get, c.ID, r.Name, r.Snapshot)
	if err != nil {
		return nil, nil, nil, err
	}
	if blob != nil {
		if err := blob.Lease.checkRead(s.Now(), cond.LeaseID); err != nil {
			return nil, nil, nil, err
		}
		if err := cond.check(true, blob.ETag(), blob.Modified, false, false); err != nil {
			return nil, nil, nil, err
		}
		if err := cond.checkTags(blob.Tags); err != nil {
			return nil, nil, nil, err
		}
		committed = []BlockInfo{}
		for _, b := range blob.Blocks {
			if b.ID != "" {
				committed = append(committed, BlockInfo{b.ID, b.Size})
			}
		}
	}
	uncommitted = []BlockInfo{}
	if r.Snapshot == 0 {
		prefix := keys.BlobBlockPrefix(c.ID, r.Name, false)
		err = snap.Scan(ctx, prefix, keys.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
			sb := &staged{}
			if _, err := decodeRecord(v, sb); err != nil {
				return false, err
			}
			uncommitted = append(uncommitted, BlockInfo{string(k[len(prefix):]), sb.Size})
			return true, nil
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if blob == nil && len(uncommitted) == 0 {
		return nil, nil, nil, azerr.New(azerr.BlobNotFound)
	}
	return blob, committed, uncommitted, nil
}

// AppendRequest is Append Block.
type AppendRequest struct {
	Body Body
	Cond Cond
	// AppendPos and MaxSize are the x-ms-blob-condition-* headers (-1: absent).
	AppendPos, MaxSize int64
}

// maxAppendBlock is Append Block's body limit (100 MiB from x-ms-version 2022-11-02).
const maxAppendBlock = 100 << 20

// AppendBlock appends a block to an append blob; appends to one blob are serialised by the
// blob's lock, so their bytes never interleave.
func (s *Service) AppendBlock(ctx context.Context, r Ref, a AppendRequest) (StageResult, error) {
	if a.Body.Size > maxAppendBlock {
		return StageResult{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	check := func(old *Blob, now int64, size int64) error {
		if old == nil {
			return azerr.New(azerr.BlobNotFound)
		}
		if old.Type != AppendBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		if err := s.checkWrite(old, a.Cond, now, false); err != nil {
			return err
		}
		if a.AppendPos >= 0 && old.Size != a.AppendPos {
			return azerr.New(azerr.AppendPositionConditionNotMet)
		}
		if a.MaxSize >= 0 && old.Size+size > a.MaxSize {
			return azerr.New(azerr.MaxBlobSizeConditionNotMet)
		}
		if old.Appends >= MaxCommittedBlocks {
			return azerr.New(azerr.BlockCountExceedsLimit)
		}
		return nil
	}
	c, err := s.GetContainer(ctx, r.Account, r.Container)
	if err != nil {
		return StageResult{}, err
	}
	old, err := getBlob(func(k []byte) ([]byte, error) { return s.st.Get(ctx, k) }, c.ID, r.Name, 0)
	if err != nil {
		return StageResult{}, err
	}
	if err := check(old, s.Now(), max(a.Body.Size, 0)); err != nil {
		return StageResult{}, err
	}
	w, err := s.write(ctx, a.Body, false)
	if err != nil {
		return StageResult{}, err
	}
	defer s.release(w)
	var res StageResult
	nb, err := s.update(ctx, r, func(_ store.Txn, _ *Container, old *Blob, now int64) (*Blob, error) {
		if err := check(old, now, w.size); err != nil {
			return nil, err
		}
		res.Offset = old.Size
		if old.inline != nil { // never: appends start empty; kept for safety
			return nil, azerr.New(azerr.InvalidBlobType)
		}
		old.Blocks = append(old.Blocks, Block{Size: w.size, Ext: w.ext})
		old.Size += w.size
		old.Appends++
		old.Modified = s.clk.tick()
		res.Count = old.Appends
		return old, nil
	})
	if err != nil {
		return StageResult{}, err
	}
	res.MD5, res.CRC64, res.Blob = w.md5, crcWire(w.crc), nb
	return res, nil
}
