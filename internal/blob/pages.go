package blob

import (
	"context"
	"io"
	"slices"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/store"
)

// Page blobs: the written pages are a sorted list of non-overlapping runs, each pointing into
// the extent its Put Page wrote; a later write or a clear cuts the runs it overlaps. Pages
// never written read as zeros.

// Page is one run of written pages.
type Page struct {
	Off    int64  `json:"o"`
	Len    int64  `json:"n"`
	Ext    uint64 `json:"e"`
	ExtOff int64  `json:"x,omitempty"`
}

const pageSize = 512

// maxPutPage is Put Page's body limit.
const maxPutPage = 4 << 20

// cut removes [off, off+n) from runs.
func cut(runs []Page, off, n int64) []Page {
	end := off + n
	out := make([]Page, 0, len(runs)+1)
	for _, r := range runs {
		rend := r.Off + r.Len
		if rend <= off || r.Off >= end {
			out = append(out, r)
			continue
		}
		if r.Off < off {
			out = append(out, Page{Off: r.Off, Len: off - r.Off, Ext: r.Ext, ExtOff: r.ExtOff})
		}
		if rend > end {
			out = append(out, Page{Off: end, Len: rend - end, Ext: r.Ext, ExtOff: r.ExtOff + (end - r.Off)})
		}
	}
	return out
}

// SeqCond holds the x-ms-if-sequence-number-le|lt|eq conditions of Put Page (-1: absent).
type SeqCond struct{ LE, LT, EQ int64 }

// NoSeqCond is a SeqCond without conditions.
var NoSeqCond = SeqCond{-1, -1, -1}

func (c SeqCond) check(seq int64) error {
	if c.LE >= 0 && seq > c.LE || c.LT >= 0 && seq >= c.LT || c.EQ >= 0 && seq != c.EQ {
		return azerr.New(azerr.SequenceNumberConditionNotMet)
	}
	return nil
}

// PutPage writes (body != nil) or clears pages [off, off+n).
func (s *Service) PutPage(ctx context.Context, r Ref, off, n int64, body *Body, cond Cond, seq SeqCond) (StageResult, error) {
	if off%pageSize != 0 || n <= 0 || n%pageSize != 0 {
		return StageResult{}, azerr.New(azerr.InvalidPageRange)
	}
	if body != nil && (body.Size != n || n > maxPutPage) {
		if n > maxPutPage {
			return StageResult{}, azerr.New(azerr.RequestBodyTooLarge)
		}
		return StageResult{}, azerr.New(azerr.InvalidPageRange)
	}
	check := func(old *Blob, now int64) error {
		if old == nil {
			return azerr.New(azerr.BlobNotFound)
		}
		if old.Type != PageBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		if err := s.checkWrite(old, cond, now, false); err != nil {
			return err
		}
		if err := seq.check(old.Seq); err != nil {
			return err
		}
		if off+n > old.Size {
			return azerr.New(azerr.InvalidPageRange)
		}
		return nil
	}
	if err := s.precheckWith(ctx, r, check); err != nil {
		return StageResult{}, err
	}
	var w written
	if body != nil {
		var err error
		if w, err = s.write(ctx, *body, false); err != nil {
			return StageResult{}, err
		}
		defer s.release(w)
	}
	var res StageResult
	nb, err := s.update(ctx, r, func(_ store.Txn, _ *Container, old *Blob, now int64) (*Blob, error) {
		if err := check(old, now); err != nil {
			return nil, err
		}
		old.Pages = cut(old.Pages, off, n)
		if body != nil {
			old.Pages = append(old.Pages, Page{Off: off, Len: n, Ext: w.ext})
			slices.SortFunc(old.Pages, func(a, b Page) int { return int(a.Off - b.Off) })
		}
		old.Modified = s.clk.tick()
		return old, nil
	})
	if err != nil {
		return StageResult{}, err
	}
	s.gc.poke()
	res.MD5, res.CRC64, res.Blob = w.md5, crcWire(w.crc), nb
	return res, nil
}

// precheckWith reads the blob outside any lock and applies check.
func (s *Service) precheckWith(ctx context.Context, r Ref, check func(old *Blob, now int64) error) error {
	c, err := s.GetContainer(ctx, r.Account, r.Container)
	if err != nil {
		return err
	}
	old, err := getBlob(func(k []byte) ([]byte, error) { return s.st.Get(ctx, k) }, c.ID, r.Name, r.Snapshot)
	if err != nil {
		return err
	}
	return check(old, s.Now())
}

// PageRanges returns the written ranges of a page blob within [off, off+n) (n < 0: all),
// adjacent runs merged, as [start, end] inclusive pairs.
func PageRanges(b *Blob, off, n int64) [][2]int64 {
	end := b.Size
	if n >= 0 {
		end = min(end, off+n)
	}
	var out [][2]int64
	for _, p := range b.Pages {
		s, e := max(p.Off, off), min(p.Off+p.Len, end)
		if s >= e {
			continue
		}
		if k := len(out); k > 0 && out[k-1][1]+1 == s {
			out[k-1][1] = e - 1
			continue
		}
		out = append(out, [2]int64{s, e - 1})
	}
	return out
}

// pageReader reads a page blob's range: runs from their extents, gaps as zeros.
type pageReader struct {
	s      *Service
	ctx    context.Context
	runs   []Page
	pos    int64
	end    int64
	cur    io.ReadCloser
	curEnd int64
	ids    []uint64
	closed bool
}

func (r *pageReader) Read(p []byte) (int, error) {
	for {
		if r.pos >= r.end {
			return 0, io.EOF
		}
		if r.cur != nil {
			k := min(int64(len(p)), r.curEnd-r.pos)
			n, err := r.cur.Read(p[:k])
			r.pos += int64(n)
			if r.pos >= r.curEnd || err == io.EOF {
				r.cur.Close()
				r.cur = nil
				if n > 0 {
					return n, nil
				}
				continue
			}
			return n, err
		}
		for len(r.runs) > 0 && r.runs[0].Off+r.runs[0].Len <= r.pos {
			r.runs = r.runs[1:]
		}
		next := r.end
		if len(r.runs) > 0 {
			next = min(next, r.runs[0].Off)
		}
		if r.pos < next { // a gap: zeros
			k := min(int64(len(p)), next-r.pos)
			clear(p[:k])
			r.pos += k
			return int(k), nil
		}
		run := r.runs[0]
		r.curEnd = min(run.Off+run.Len, r.end)
		rc, err := r.s.ext.ReadExtent(r.ctx, run.Ext, run.ExtOff+(r.pos-run.Off), r.curEnd-r.pos)
		if err != nil {
			r.s.log.Error("blob read", "extent", run.Ext, "err", err)
			return 0, err
		}
		r.cur = rc
	}
}

func (r *pageReader) Close() error {
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

// PageDiff compares a page blob with an older snapshot of it (Get Page Ranges with
// prevsnapshot) within [off, off+n) (n < 0: to the end): changed are the ranges written
// since prev (their bytes come from another extent or extent offset than prev's, as every
// Put Page writes a new extent), cleared the ranges prev had written that b no longer has.
// Both as [start, end] inclusive pairs, adjacent ranges merged.
func PageDiff(b, prev *Blob, off, n int64) (changed, cleared [][2]int64) {
	end := b.Size
	if n >= 0 {
		end = min(end, off+n)
	}
	cuts := []int64{off, end}
	for _, runs := range [][]Page{b.Pages, prev.Pages} {
		for _, p := range runs {
			for _, x := range []int64{p.Off, p.Off + p.Len} {
				if x > off && x < end {
					cuts = append(cuts, x)
				}
			}
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	add := func(out [][2]int64, a, z int64) [][2]int64 {
		if k := len(out); k > 0 && out[k-1][1]+1 == a {
			out[k-1][1] = z - 1
			return out
		}
		return append(out, [2]int64{a, z - 1})
	}
	for i := 0; i+1 < len(cuts); i++ {
		a, z := cuts[i], cuts[i+1]
		cur, curOK := runAt(b.Pages, a)
		old, oldOK := runAt(prev.Pages, a)
		switch {
		case curOK && (!oldOK || cur.Ext != old.Ext || cur.ExtOff-cur.Off != old.ExtOff-old.Off):
			changed = add(changed, a, z)
		case !curOK && oldOK:
			cleared = add(cleared, a, z)
		}
	}
	return changed, cleared
}

// runAt returns the run holding byte x, if any.
func runAt(runs []Page, x int64) (Page, bool) {
	i, _ := slices.BinarySearchFunc(runs, x, func(p Page, x int64) int {
		switch {
		case p.Off+p.Len <= x:
			return -1
		case p.Off > x:
			return 1
		}
		return 0
	})
	if i < len(runs) && runs[i].Off <= x && x < runs[i].Off+runs[i].Len {
		return runs[i], true
	}
	return Page{}, false
}
