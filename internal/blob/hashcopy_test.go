package blob

import (
	"bytes"
	"crypto/md5"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// TestCopyHashing: bodies of one chunk, several chunks and a partial last chunk, read in
// odd-sized pieces, arrive whole and hash to the MD5 of the whole; a reader's error (even
// io.ErrUnexpectedEOF, which a cut connection gives) is returned, never taken for the end.
func TestCopyHashing(t *testing.T) {
	for _, n := range []int{0, 1, copyChunk, copyChunk + 1, 3*copyChunk + 12345} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rand.IntN(256))
		}
		for _, size := range []int64{int64(n), -1} {
			var dst bytes.Buffer
			h := md5.New()
			got, err := copyHashing(&dst, iotest.HalfReader(bytes.NewReader(data)), h, size)
			if err != nil || got != int64(n) || !bytes.Equal(dst.Bytes(), data) {
				t.Fatalf("n=%d size=%d: copied %d, err %v, same bytes %v", n, size, got, err, bytes.Equal(dst.Bytes(), data))
			}
			if want := md5.Sum(data); !bytes.Equal(h.Sum(nil), want[:]) {
				t.Fatalf("n=%d size=%d: MD5 differs", n, size)
			}
		}
	}
	cut := io.MultiReader(bytes.NewReader(make([]byte, 2*copyChunk+5)), iotest.ErrReader(io.ErrUnexpectedEOF))
	if _, err := copyHashing(io.Discard, cut, md5.New(), -1); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut body: err %v, want io.ErrUnexpectedEOF", err)
	}
	failing := errWriter{after: copyChunk + 1}
	if _, err := copyHashing(&failing, bytes.NewReader(make([]byte, 3*copyChunk)), md5.New(), 3*copyChunk); err == nil {
		t.Fatal("a failing extent write was not returned")
	}
}

type errWriter struct{ after int }

func (w *errWriter) Write(p []byte) (int, error) {
	if w.after -= len(p); w.after < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}
