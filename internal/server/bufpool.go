package server

import "sync"

// maxPooledBuffer caps the buffers kept for reuse, so one huge page does not pin its memory.
const maxPooledBuffer = 4 << 20

// pageBuffer is a reusable response buffer.
type pageBuffer struct{ b []byte }

// bufferPool recycles response buffers between requests.
type bufferPool struct {
	p sync.Pool
	// size is the capacity of a new buffer (query pages grow to ~1 MB for 1 KiB entities;
	// a single entity is usually under 4 KiB).
	size int
}

func (bp *bufferPool) get() *pageBuffer {
	if b, ok := bp.p.Get().(*pageBuffer); ok {
		return b
	}
	return &pageBuffer{b: make([]byte, 0, bp.size)}
}

func (bp *bufferPool) put(b *pageBuffer) {
	if cap(b.b) <= maxPooledBuffer {
		bp.p.Put(b)
	}
}
