package blob

import (
	"context"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/store"
)

// CopyRequest is Copy Blob within the account (synchronous: it always completes at once).
type CopyRequest struct {
	Source    Ref
	SourceURL string
	Meta      Meta
	SetMeta   bool
	Tier      string
	Cond      Cond
	// SourceCond are the x-ms-source-if-* conditions.
	SourceCond Cond
	CopyID     string
	// Tags are x-ms-tags: the destination's tags (the source's are not copied).
	Tags Tags
}

// Copy copies a blob (or snapshot) onto dst. The destination shares the source's extents:
// copying costs one record write whatever the size, and the sweep frees an extent only when
// no record names it.
func (s *Service) Copy(ctx context.Context, dst Ref, r CopyRequest) (*Blob, error) {
	if err := ValidBlobName(dst.Name); err != nil {
		return nil, err
	}
	src, err := s.Get(ctx, r.Source, Cond{})
	if err != nil {
		if azerr.Is(err, azerr.BlobNotFound) || azerr.Is(err, azerr.ContainerNotFound) {
			return nil, azerr.New(azerr.CannotVerifyCopySource)
		}
		return nil, err
	}
	if err := r.SourceCond.check(true, src.ETag(), src.Modified, false, false); err != nil {
		return nil, azerr.New(azerr.SourceConditionNotMet)
	}
	var ids []uint64
	for _, b := range src.Blocks {
		ids = append(ids, b.Ext)
	}
	for _, p := range src.Pages {
		ids = append(ids, p.Ext)
	}
	s.gc.hold(ids...) // the source may be deleted meanwhile: keep its extents until committed
	defer s.gc.unhold(ids...)
	return s.update(ctx, dst, func(_ store.Txn, _ *Container, old *Blob, now int64) (*Blob, error) {
		if err := s.checkWrite(old, r.Cond, now, true); err != nil {
			return nil, err
		}
		meta := src.Meta
		if r.SetMeta {
			meta = r.Meta
		}
		nb := s.fresh(old, src.Type, src.Props, meta, r.Tier)
		nb.Size, nb.Blocks, nb.Pages, nb.inline, nb.Appends = src.Size, src.Blocks, src.Pages, src.inline, src.Appends
		nb.Tags = r.Tags
		nb.Copy = &Copy{ID: r.CopyID, Source: r.SourceURL, Completed: nb.Modified, Size: src.Size}
		return nb, nil
	})
}
