//go:build unix

package pebble

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"syscall"
)

// mapWindow is how much of an extent is mapped at a time: a download's resident memory
// stays at this whatever the blob's size, and each window costs one mmap, write and munmap.
const mapWindow = 8 << 20

// writeSection writes n bytes of f from off to w (fewer if f is shorter: the caller reports
// that) straight from the page cache: each window of the file is mapped read-only and
// handed to w.Write, so the kernel copies the bytes once, into the socket
// (osSection.WriteTo says when this beats sendfile).
func writeSection(w io.Writer, f *os.File, off, n int64) (written int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("pebble: read extent: %w", err)
	}
	n = min(n, st.Size()-off)
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("pebble: read extent: %w", err)
	}
	page := int64(os.Getpagesize())
	for written < n {
		pos := off + written
		start := pos - pos%page
		size := min(n-written+pos-start, mapWindow)
		k, err := writeWindow(w, rc, start, int(size), int(pos-start))
		written += int64(k)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// writeWindow maps size bytes of the file from start (page-aligned) and writes them to w
// from skip on. A fault on the mapping (an I/O error, or a file that shrank after the size
// check, which extents never do) becomes an error instead of killing the process.
func writeWindow(w io.Writer, rc syscall.RawConn, start int64, size, skip int) (n int, err error) {
	var m []byte
	var merr error
	if err := rc.Control(func(fd uintptr) {
		m, merr = syscall.Mmap(int(fd), start, size, syscall.PROT_READ, syscall.MAP_SHARED)
	}); err != nil {
		return 0, fmt.Errorf("pebble: read extent: %w", err)
	}
	if merr != nil {
		return 0, fmt.Errorf("pebble: read extent: map: %w", merr)
	}
	defer syscall.Munmap(m)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = fmt.Errorf("pebble: read extent: %v", r)
		}
	}()
	return w.Write(m[skip:])
}
