//go:build unix

package pebble

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tablo/tablo/internal/store/storetest"
)

// readFromRecorder is a writer with ReadFrom (as a connection's buffered writer has) that
// records whether it was used.
type readFromRecorder struct {
	bytes.Buffer
	used bool
}

func (r *readFromRecorder) ReadFrom(src io.Reader) (int64, error) {
	r.used = true
	return r.Buffer.ReadFrom(src)
}

// A disk extent larger than one mapping window, read from unaligned offsets, arrives whole
// through WriteTo, also after part of it was taken with Read, and then with Read again:
// through the mapping while few sends run, through the writer's ReadFrom (sendfile) beyond.
func TestExtentWriteToAcrossWindows(t *testing.T) {
	for _, sendfile := range []bool{false, true} {
		t.Run(fmt.Sprintf("sendfile=%v", sendfile), func(t *testing.T) { testExtentWriteTo(t, sendfile) })
	}
}

func testExtentWriteTo(t *testing.T, sendfile bool) {
	d, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if sendfile {
		d.extents.sendfileAt = 0
	} else {
		d.extents.sendfileAt = 1
	}
	ctx := context.Background()
	data := make([]byte, 2*mapWindow+12345)
	for i := range data {
		data[i] = byte(i*31 + i>>13)
	}
	id := storetest.PutExtent(t, d.Extents(), data)
	for _, c := range []struct{ off, n, read int64 }{
		{0, -1, 0}, {1, mapWindow, 0}, {4095, 2*mapWindow + 1, 0}, {mapWindow - 1, 2, 0},
		{7, mapWindow + 100, 5000}, {int64(len(data)) - 3, 3, 1},
	} {
		r, err := d.Extents().ReadExtent(ctx, id, c.off, c.n)
		if err != nil {
			t.Fatal(err)
		}
		end := int64(len(data))
		if c.n >= 0 {
			end = c.off + c.n
		}
		head := make([]byte, c.read)
		if _, err := io.ReadFull(r, head); err != nil {
			t.Fatal(err)
		}
		var buf readFromRecorder
		n, err := r.(io.WriterTo).WriteTo(&buf)
		if buf.used != sendfile {
			t.Errorf("%+v: ReadFrom used: %v", c, buf.used)
		}
		// Nothing is left: Read says so, wherever WriteTo left the file's offset.
		if k, rerr := r.Read(make([]byte, 10)); k != 0 || rerr != io.EOF {
			t.Errorf("%+v: Read after WriteTo: %d, %v; want 0, EOF", c, k, rerr)
		}
		r.Close()
		got := append(head, buf.Bytes()...)
		if err != nil || n != int64(buf.Len()) || !bytes.Equal(got, data[c.off:end]) {
			t.Fatalf("%+v: %d bytes (n %d, %v), want %d", c, len(got), n, err, end-c.off)
		}
	}
}

// A fault on a mapped page (here: a page past the end of the file) is an error, not a
// crash of the server.
func TestWriteWindowFaultIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(path, []byte("one page at most"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	var buf bytes.Buffer // copies in this process: the second page faults here
	if _, err := writeWindow(&buf, rc, 0, 2*page, 0); err == nil {
		t.Fatal("writing a mapping past the end of the file succeeded")
	}
}
