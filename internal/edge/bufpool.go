package edge

import "sync"

// maxPooledBuffer caps the buffers kept for reuse, so one huge page does not pin its memory.
const maxPooledBuffer = 4 << 20

// PageBuffer is a reusable response buffer.
type PageBuffer struct{ B []byte }

// BufferPool recycles response buffers between requests.
type BufferPool struct {
	p sync.Pool
	// Size is the capacity of a new buffer (query pages grow to ~1 MB for 1 KiB entities;
	// a single entity is usually under 4 KiB).
	Size int
}

// Get returns an empty buffer.
func (bp *BufferPool) Get() *PageBuffer {
	if b, ok := bp.p.Get().(*PageBuffer); ok {
		return b
	}
	return &PageBuffer{B: make([]byte, 0, bp.Size)}
}

// Put returns b for reuse.
func (bp *BufferPool) Put(b *PageBuffer) {
	if cap(b.B) <= maxPooledBuffer {
		bp.p.Put(b)
	}
}
