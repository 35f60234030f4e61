package blob

import "io"

// copyHashing copies src to dst through pooled chunks and writes the same bytes to hashes,
// returning how many bytes it copied. For a body of more than one chunk the hashing runs in
// a goroutine of its own, one chunk behind the copy: while chunk i is hashed, chunk i+1 is
// read from the socket and written to the extent. MD5, which a Put Blob must compute, runs
// at under 1 GB/s per core, so done in turn with the copy it set a single large upload's
// pace; overlapped, the upload goes at the pace of the slower of the two. Memory per upload:
// two chunks.
func copyHashing(dst io.Writer, src io.Reader, hashes io.Writer, size int64) (int64, error) {
	bp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bp)
	if hashes == nil || (size >= 0 && size <= copyChunk) {
		w := dst
		if hashes != nil {
			w = io.MultiWriter(dst, hashes)
		}
		return io.CopyBuffer(w, readerOnly{src}, *bp)
	}
	bp2 := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bp2)
	bufs := [2][]byte{*bp, *bp2}
	work := make(chan []byte)
	done := make(chan struct{})
	go func() {
		for p := range work {
			hashes.Write(p) // hash.Hash writes never fail
			done <- struct{}{}
		}
	}()
	pending := false
	// Before returning (and putting the chunks back in the pool), wait for the hashing.
	defer func() {
		if pending {
			<-done
		}
		close(work)
	}()
	var total int64
	for i := 0; ; i = 1 - i {
		n, rerr, werr := fillWriting(dst, src, bufs[i])
		total += int64(n)
		if werr != nil {
			return total, werr
		}
		if n > 0 {
			if pending {
				<-done // the other chunk is hashed: it may be read into next
			}
			work <- bufs[i][:n]
			pending = true
		}
		if rerr == io.EOF {
			return total, nil // a short body is the caller's to detect, by its size
		}
		if rerr != nil {
			return total, rerr
		}
	}
}

// fillWriting reads src into p until p is full (nil errors), src ends (rerr io.EOF) or
// fails, writing each piece to dst as it arrives: the copy into the extent then reads bytes
// still in the CPU's cache (filling a 1 MiB chunk first and writing it whole made the file
// writes cost twice the CPU per byte). Unlike io.ReadFull, an io.ErrUnexpectedEOF is only
// ever src's own. n counts the bytes read and written.
func fillWriting(dst io.Writer, src io.Reader, p []byte) (n int, rerr, werr error) {
	for n < len(p) {
		m, err := src.Read(p[n:])
		if m > 0 {
			if _, werr = dst.Write(p[n : n+m]); werr != nil {
				return n, nil, werr
			}
			n += m
		}
		if err != nil {
			return n, err, nil
		}
	}
	return n, nil, nil
}
