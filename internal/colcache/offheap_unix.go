//go:build unix && !linux

package colcache

import (
	"fmt"
	"syscall"
)

// allocOffHeap returns n zeroed bytes outside the Go heap. The cache's arrays live there so
// that the garbage collector neither scans them nor counts them toward its heap target
// (with a GC target of 400%, 40 MB of cache on the heap would let the heap grow by 160 MB).
// They hold no Go pointers. freeOffHeap must be called exactly once, when nothing
// references the memory any more.
func allocOffHeap(n int) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("colcache: mmap %d bytes: %w", n, err)
	}
	return b, nil
}

func freeOffHeap(b []byte) {
	_ = syscall.Munmap(b[:cap(b)]) // an empty b (never mapped) is refused: nothing to unmap
}

// growOffHeap returns b's contents in a region of n bytes; b must not be used afterwards.
func growOffHeap(b []byte, n int) ([]byte, error) { return copyGrow(b, n) }
