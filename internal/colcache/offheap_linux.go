//go:build linux

package colcache

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// allocOffHeap returns n zeroed bytes outside the Go heap. The cache's arrays live there so
// that the garbage collector neither scans them nor counts them toward its heap target
// (with a GC target of 400%, 40 MB of cache on the heap would let the heap grow by 160 MB).
// They hold no Go pointers. freeOffHeap must be called exactly once, when nothing
// references the memory any more. Regions are mapped through x/sys/unix, whose Mremap only
// moves regions it mapped.
func allocOffHeap(n int) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("colcache: mmap %d bytes: %w", n, err)
	}
	return b, nil
}

// growOffHeap returns b's region (b from allocOffHeap or growOffHeap) grown to n bytes, its
// contents and length kept; b must not be used afterwards. The kernel moves the pages
// instead of copying them, so a base built by doubling its arrays copies nothing.
func growOffHeap(b []byte, n int) ([]byte, error) {
	if cap(b) == 0 {
		nb, err := allocOffHeap(n)
		return nb[:0], err
	}
	nb, err := unix.Mremap(b[:cap(b)], n, unix.MREMAP_MAYMOVE)
	if err != nil {
		return nil, fmt.Errorf("colcache: mremap %d bytes: %w", n, err)
	}
	return nb[:len(b)], nil
}

func freeOffHeap(b []byte) {
	_ = unix.Munmap(b[:cap(b)]) // an empty b (never mapped) is refused: nothing to unmap
}
