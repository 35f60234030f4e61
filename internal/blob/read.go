package blob

import (
	"bytes"
	"context"
	"io"
)

// Open returns a reader of n bytes of b from off (the caller has clamped the range). The
// bytes stream extent by extent; the extents are held (the sweep skips them) until Close.
func (s *Service) Open(ctx context.Context, b *Blob, off, n int64) io.ReadCloser {
	if b.Type == PageBlob {
		ids := make([]uint64, 0, len(b.Pages))
		for _, p := range b.Pages {
			ids = append(ids, p.Ext)
		}
		s.gc.hold(ids...)
		return &pageReader{s: s, ctx: ctx, runs: b.Pages, pos: off, end: off + n, ids: ids}
	}
	if b.inline != nil || len(b.Blocks) == 0 {
		end := min(off+n, int64(len(b.inline)))
		return io.NopCloser(bytes.NewReader(b.inline[min(off, end):end]))
	}
	var ids []uint64
	for _, bl := range b.Blocks {
		ids = append(ids, bl.Ext)
	}
	s.gc.hold(ids...)
	return &blockReader{s: s, ctx: ctx, blocks: b.Blocks, ids: ids, off: off, left: n}
}

// blockReader reads a range across blocks, opening one extent at a time.
type blockReader struct {
	s      *Service
	ctx    context.Context
	blocks []Block
	ids    []uint64
	off    int64 // offset of the next byte within the remaining blocks
	left   int64
	cur    io.ReadCloser
	closed bool
}

func (r *blockReader) Read(p []byte) (int, error) {
	for {
		if r.left <= 0 {
			return 0, io.EOF
		}
		if r.cur == nil {
			if err := r.openNext(); err != nil {
				return 0, err
			}
		}
		if int64(len(p)) > r.left {
			p = p[:r.left]
		}
		n, err := r.cur.Read(p)
		r.left -= int64(n)
		if err != nil && err != io.EOF {
			r.s.log.Error("blob read", "extent", r.blocks[0].Ext, "err", err)
		}
		if err == io.EOF {
			r.cur.Close()
			r.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

// openNext opens the extent holding the next byte of the range as r.cur.
func (r *blockReader) openNext() error {
	for len(r.blocks) > 0 && r.off >= r.blocks[0].Size {
		r.off -= r.blocks[0].Size
		r.blocks = r.blocks[1:]
	}
	if len(r.blocks) == 0 {
		return io.ErrUnexpectedEOF
	}
	b := r.blocks[0]
	n := min(b.Size-r.off, r.left)
	rc, err := r.s.ext.ReadExtent(r.ctx, b.Ext, r.off, n)
	if err != nil {
		// The response has begun: the connection will be cut, so say why here.
		r.s.log.Error("blob read", "extent", b.Ext, "err", err)
		return err
	}
	r.cur = rc
	r.off += n
	return nil
}

// SupportsBodyWriteTo tells fasthttp to send the body with WriteTo (fasthttp.BodyWriterTo).
func (r *blockReader) SupportsBodyWriteTo() bool { return true }

// WriteTo sends the rest of the range to w. An extent reader that implements io.WriterTo
// writes itself (the disk engine's writes straight from the page cache, without a copy
// into this process); other extents are copied through the pooled 1 MiB buffer.
func (r *blockReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for r.left > 0 {
		if r.cur == nil {
			if err := r.openNext(); err != nil {
				return total, err
			}
		}
		var n int64
		var err error
		if wt, ok := r.cur.(io.WriterTo); ok {
			// The reader holds exactly the part of the range this extent has (openNext).
			n, err = wt.WriteTo(w)
		} else {
			bp := chunkPool.Get().(*[]byte)
			n, err = io.CopyBuffer(w, io.LimitReader(readerOnly{r.cur}, r.left), *bp)
			chunkPool.Put(bp)
		}
		if err == nil && n == 0 {
			err = io.ErrUnexpectedEOF // the extent is shorter than its record says
		}
		total += n
		r.left -= n
		if err != nil {
			r.s.log.Error("blob read", "extent", r.blocks[0].Ext, "err", err)
			return total, err
		}
		r.cur.Close()
		r.cur = nil
	}
	return total, nil
}

func (r *blockReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.cur != nil {
		r.cur.Close()
	}
	r.s.gc.unhold(r.ids...)
	return nil
}
