package blob

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"hash"
	"hash/crc64"
	"io"
	"sync"

	"github.com/tablo/tablo/internal/azerr"
)

// Body is a request body streamed into the service, with the checksums a client sent.
type Body struct {
	R io.Reader
	// Size is Content-Length (-1 unknown).
	Size int64
	// MD5 is the request's Content-MD5 (nil: none) and CRC64 its x-ms-content-crc64.
	MD5, CRC64 []byte
}

// inlineMax is the largest body kept inside the blob record instead of an extent: one
// engine write and one sync instead of a file, its sync and the directory's.
const inlineMax = 64 << 10

// copyChunk is the buffer bodies stream through: memory per upload stays at this, whatever
// the blob's size.
const copyChunk = 1 << 20

var chunkPool = sync.Pool{New: func() any { b := make([]byte, copyChunk); return &b }}

// written is a body that has been stored: in an extent (ext != 0, held in the collector
// until the caller's record commits) or inline.
type written struct {
	ext    uint64
	inline []byte
	size   int64
	md5    []byte
	crc    []byte
}

// write streams a body into an extent (or, when whole and small, into memory), computing
// the checksums the request needs on the way, and verifies the client's checksums before the
// extent is committed. whole says the body is a whole blob (Put Blob): it may be kept inline
// and its MD5 is stored as the blob's Content-MD5. The caller must release w.ext after
// committing its record.
//
// Checksums cost most of an upload's CPU (MD5 alone was half of it for 256 MiB blobs), so
// only the needed ones are computed: MD5 for a whole blob or when the client sent one (it is
// then checked and echoed), CRC-64 when the client sent one, or for a block or page the
// client sent no MD5 for (its response carries the CRC-64). An unneeded sum is nil.
func (s *Service) write(ctx context.Context, b Body, whole bool) (w written, err error) {
	var mh, ch hash.Hash
	var sums []io.Writer
	if whole || b.MD5 != nil {
		mh = md5.New()
		sums = append(sums, mh)
	}
	if b.CRC64 != nil || (!whole && b.MD5 == nil) {
		ch = crc64.New(CRC64Table)
		sums = append(sums, ch)
	}
	hashes := io.MultiWriter(sums...)
	if whole && b.Size >= 0 && b.Size <= inlineMax {
		buf := make([]byte, b.Size)
		if _, err := io.ReadFull(b.R, buf); err != nil {
			return w, bodyErr(err)
		}
		hashes.Write(buf)
		w = written{inline: buf, size: b.Size}
	} else {
		ew, err := s.ext.NewExtent(ctx)
		if err != nil {
			return w, err
		}
		// Held from before it can be listed until the record naming it commits (gc.go).
		s.gc.hold(ew.ID())
		// Every way out before the commit discards the extent and drops its hold (a flag, not
		// err: the err of this block shadows the result, and a short body sets neither).
		committed := false
		defer func() {
			if !committed {
				ew.Abort()
				s.gc.unhold(ew.ID())
			}
		}()
		bp := chunkPool.Get().(*[]byte)
		defer chunkPool.Put(bp)
		src := b.R
		if b.Size >= 0 {
			src = io.LimitReader(b.R, b.Size)
		}
		n, err := io.CopyBuffer(io.MultiWriter(ew, hashes), readerOnly{src}, *bp)
		if err != nil {
			return w, bodyErr(err)
		}
		if b.Size >= 0 && n != b.Size {
			return w, bodyErr(io.ErrUnexpectedEOF)
		}
		w.size = n
		if err = verify(mh, ch, b); err != nil {
			return w, err
		}
		id, err := ew.Commit()
		if err != nil {
			return w, err
		}
		committed = true
		w.ext = id
		w.md5, w.crc = sum(mh), sum(ch)
		return w, nil
	}
	if err := verify(mh, ch, b); err != nil {
		return w, err
	}
	w.md5, w.crc = sum(mh), sum(ch)
	return w, nil
}

// sum is h's sum, or nil for a checksum that was not computed.
func sum(h hash.Hash) []byte {
	if h == nil {
		return nil
	}
	return h.Sum(nil)
}

// readerOnly hides WriterTo/ReaderFrom so that CopyBuffer uses the pooled buffer.
type readerOnly struct{ io.Reader }

func verify(mh, ch hash.Hash, b Body) error {
	if b.MD5 != nil && !bytes.Equal(mh.Sum(nil), b.MD5) {
		return azerr.New(azerr.MD5Mismatch)
	}
	if b.CRC64 != nil {
		sum := ch.Sum(nil) // big-endian; the wire form is little-endian
		for i, j := 0, len(sum)-1; i < j; i, j = i+1, j-1 {
			sum[i], sum[j] = sum[j], sum[i]
		}
		if !bytes.Equal(sum, b.CRC64) {
			return azerr.New(azerr.CRC64Mismatch)
		}
	}
	return nil
}

// crcWire turns hash/crc64's big-endian Sum into the wire's little-endian bytes.
func crcWire(sum []byte) []byte {
	out := make([]byte, len(sum))
	for i := range sum {
		out[len(sum)-1-i] = sum[i]
	}
	return out
}

func bodyErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return azerr.Newf(azerr.InvalidInput, "The request body is shorter than its Content-Length.")
	}
	return err
}

// release lets the sweep see w's extent (its record has committed, or it never will).
func (s *Service) release(w written) {
	if w.ext != 0 {
		s.gc.unhold(w.ext)
	}
}
