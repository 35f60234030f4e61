//go:build !unix

package pebble

import (
	"io"
	"os"
)

// writeSection writes n bytes of f from off to w (fewer if f is shorter: the caller reports
// that).
func writeSection(w io.Writer, f *os.File, off, n int64) (int64, error) {
	return io.Copy(w, io.NewSectionReader(f, off, n))
}
