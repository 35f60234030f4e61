//go:build !unix

package colcache

// allocOffHeap falls back to the Go heap where mmap is not available.
func allocOffHeap(n int) ([]byte, error) { return make([]byte, n), nil }

func freeOffHeap([]byte) {}
