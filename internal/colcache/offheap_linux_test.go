package colcache

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestFreeOffHeapUnmaps: freeOffHeap returns the region to the kernel (unmapping it again
// fails), and an empty region is nothing to free.
func TestFreeOffHeapUnmaps(t *testing.T) {
	b, err := allocOffHeap(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	freeOffHeap(b[:10])
	if err := unix.Munmap(b); err == nil {
		t.Fatal("the region was still mapped after freeOffHeap")
	}
	freeOffHeap(nil)
}
