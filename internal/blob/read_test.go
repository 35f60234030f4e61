package blob

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/tablo/tablo/internal/store"
)

// putBlocks commits a block blob of one extent per part and returns its bytes.
func putBlocks(t *testing.T, s *Service, r Ref, sizes ...int) []byte {
	t.Helper()
	ctx := context.Background()
	var all []byte
	var list []BlockRef
	for i, n := range sizes {
		part := bytes.Repeat([]byte{byte('a' + i)}, n)
		for j := range part {
			part[j] += byte(j % 7)
		}
		id := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("block-%03d", i)))
		if _, err := s.PutBlock(ctx, r, id, body(part), Cond{}); err != nil {
			t.Fatal(err)
		}
		list = append(list, BlockRef{ID: id, Where: "Uncommitted"})
		all = append(all, part...)
	}
	if _, err := s.PutBlockList(ctx, r, list, PutRequest{}); err != nil {
		t.Fatal(err)
	}
	return all
}

// onlyRead hides a reader's WriteTo, so that io.Copy uses Read.
type onlyRead struct{ io.Reader }

// A blob of several block extents reads the same through Read and through WriteTo (the
// server sends bodies with WriteTo) from every kind of start (the blob's, inside a block,
// exactly at a block boundary, in a later block) to every kind of end, on the in-memory
// engine (extents copied through a buffer) and on disk (extents that write themselves).
func TestBlockReadsAcrossExtents(t *testing.T) {
	for _, disk := range []bool{false, true} {
		t.Run(fmt.Sprintf("disk=%v", disk), func(t *testing.T) {
			dir := ""
			if disk {
				dir = t.TempDir()
			}
			s, _ := openService(t, dir, nil)
			ctx := context.Background()
			s.CreateContainer(ctx, "a", "reads", "", nil)
			r := Ref{Account: "a", Container: "reads", Name: "b"}
			data := putBlocks(t, s, r, 1000, 1, 2000, 700)
			b, err := s.Get(ctx, r, Cond{})
			if err != nil || len(b.Blocks) != 4 {
				t.Fatalf("%+v %v", b, err)
			}
			size := int64(len(data))
			for _, off := range []int64{0, 1, 999, 1000, 1001, 1002, 3001, size - 1, size} {
				for _, end := range []int64{off, off + 1, 1000, 1001, 3001, 3002, size - 1, size} {
					if end < off || end > size {
						continue
					}
					want := data[off:end]
					var viaRead, viaWriteTo bytes.Buffer
					rc := s.Open(ctx, b, off, end-off)
					if _, err := io.Copy(&viaRead, onlyRead{rc}); err != nil {
						t.Errorf("Read [%d, %d): %v", off, end, err)
					}
					rc.Close()
					rc = s.Open(ctx, b, off, end-off)
					n, err := io.Copy(&viaWriteTo, rc) // rc's WriteTo
					rc.Close()
					if err != nil || n != end-off {
						t.Errorf("WriteTo [%d, %d): %d bytes, %v", off, end, n, err)
					}
					if !bytes.Equal(viaRead.Bytes(), want) || !bytes.Equal(viaWriteTo.Bytes(), want) {
						t.Errorf("[%d, %d): Read gave %d bytes, WriteTo %d, want %d (equal: %v, %v)", off, end,
							viaRead.Len(), viaWriteTo.Len(), len(want), bytes.Equal(viaRead.Bytes(), want), bytes.Equal(viaWriteTo.Bytes(), want))
					}
				}
			}
		})
	}
}

// failWriter is a client that went away after accepting limit bytes.
type failWriter struct {
	limit int
	got   int
	err   error
}

func (w *failWriter) Write(p []byte) (int, error) {
	if w.got+len(p) > w.limit {
		n := w.limit - w.got
		w.got = w.limit
		return n, w.err
	}
	w.got += len(p)
	return len(p), nil
}

// A blob whose second extent is gone (a lost file) reads the first block's bytes and then
// fails with the store's error, through Read and through WriteTo: never a panic, never a
// body that looks complete. A client that goes away is reported as its own error, not as an
// extent shorter than its record (which would say the stored data is damaged).
func TestBlockReadErrors(t *testing.T) {
	for _, disk := range []bool{false, true} {
		t.Run(fmt.Sprintf("disk=%v", disk), func(t *testing.T) {
			dir := ""
			if disk {
				dir = t.TempDir()
			}
			s, st := openService(t, dir, nil)
			ctx := context.Background()
			s.CreateContainer(ctx, "a", "reads", "", nil)
			r := Ref{Account: "a", Container: "reads", Name: "b"}
			data := putBlocks(t, s, r, 1000, 2000, 700)
			b, err := s.Get(ctx, r, Cond{})
			if err != nil {
				t.Fatal(err)
			}
			gone := errors.New("client went away")
			for _, limit := range []int{0, 10, 1000, 1500} {
				w := &failWriter{limit: limit, err: gone}
				rc := s.Open(ctx, b, 0, int64(len(data)))
				n, err := rc.(io.WriterTo).WriteTo(w)
				rc.Close()
				if !errors.Is(err, gone) || n != int64(limit) {
					t.Errorf("WriteTo a client that takes %d bytes: %d, %v; want %d, %v", limit, n, err, limit, gone)
				}
			}
			if err := st.Extents().DeleteExtents(ctx, []uint64{b.Blocks[1].Ext}); err != nil {
				t.Fatal(err)
			}
			rc := s.Open(ctx, b, 0, int64(len(data)))
			got, err := io.ReadAll(onlyRead{rc})
			rc.Close()
			if !errors.Is(err, store.ErrExtentNotFound) || !bytes.Equal(got, data[:1000]) {
				t.Errorf("Read of a lost extent: %d bytes, %v; want the first block's 1000, %v", len(got), err, store.ErrExtentNotFound)
			}
			var buf bytes.Buffer
			rc = s.Open(ctx, b, 0, int64(len(data)))
			n, err := rc.(io.WriterTo).WriteTo(&buf)
			rc.Close()
			if !errors.Is(err, store.ErrExtentNotFound) || n != 1000 || !bytes.Equal(buf.Bytes(), data[:1000]) {
				t.Errorf("WriteTo of a lost extent: %d bytes, %v; want the first block's 1000, %v", n, err, store.ErrExtentNotFound)
			}
		})
	}
}

// A block blob record whose blocks hold fewer bytes than its size (damaged) reads its blocks'
// bytes and then fails with io.ErrUnexpectedEOF, through Read and through WriteTo: never a
// panic, never a body that looks complete.
func TestBlockReadOfShortRecord(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "reads", "", nil)
	r := Ref{Account: "a", Container: "reads", Name: "b"}
	data := putBlocks(t, s, r, 1000, 2000)
	_, err := s.update(ctx, r, func(_ store.Txn, _ *Container, old *Blob, _ int64) (*Blob, error) {
		old.Size += 10
		return old, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Get(ctx, r, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Open(ctx, b, 0, b.Size)
	got, err := io.ReadAll(onlyRead{rc})
	rc.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) || !bytes.Equal(got, data) {
		t.Errorf("Read: %d bytes, %v; want %d, %v", len(got), err, len(data), io.ErrUnexpectedEOF)
	}
	var buf bytes.Buffer
	rc = s.Open(ctx, b, 0, b.Size)
	n, err := rc.(io.WriterTo).WriteTo(&buf)
	rc.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) || n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("WriteTo: %d bytes, %v; want %d, %v", n, err, len(data), io.ErrUnexpectedEOF)
	}
}

// Read never answers 0 bytes without an error (io.Reader discourages it: a caller may take
// it for no progress), at the end of an extent or of a page run either.
func TestReadsAlwaysProgress(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "reads", "", nil)
	br := Ref{Account: "a", Container: "reads", Name: "b"}
	putBlocks(t, s, br, 1000, 24, 700)
	pr := Ref{Account: "a", Container: "reads", Name: "p"}
	if _, err := s.Put(ctx, pr, PutRequest{Type: PageBlob, PageSize: 6 * pageSize}); err != nil {
		t.Fatal(err)
	}
	for _, w := range [][2]int64{{0, 2}, {2, 1}, {4, 1}} {
		if _, err := s.PutPage(ctx, pr, w[0]*pageSize, w[1]*pageSize, pageBody(byte('a'+w[0]), int(w[1]*pageSize)), Cond{}, NoSeqCond); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []Ref{br, pr} {
		b, err := s.Get(ctx, r, Cond{})
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 100, 512, 4096} {
			rc := s.Open(ctx, b, 0, b.Size)
			buf := make([]byte, size)
			var total int64
			for {
				n, err := rc.Read(buf)
				total += int64(n)
				if n == 0 && err == nil {
					t.Fatalf("%s, reads of %d bytes: 0 bytes without an error after %d", r.Name, size, total)
				}
				if err != nil {
					if err != io.EOF || total != b.Size {
						t.Errorf("%s, reads of %d bytes: %d bytes, %v", r.Name, size, total, err)
					}
					break
				}
			}
			rc.Close()
		}
	}
}
