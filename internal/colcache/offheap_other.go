//go:build !unix

package colcache

// allocOffHeap falls back to the Go heap where mmap is not available.
func allocOffHeap(n int) ([]byte, error) { return make([]byte, n), nil }

func freeOffHeap([]byte) {}

// growOffHeap returns b's contents in a region of n bytes; b must not be used afterwards.
func growOffHeap(b []byte, n int) ([]byte, error) { return copyGrow(b, n) }
