package storetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/tablo/tablo/internal/store"
)

// The extents (bulk bytes) part of the contract.

// PutExtent writes data as a new committed extent of e, in several writes, and returns its id.
func PutExtent(t *testing.T, e store.Extents, data []byte) uint64 {
	t.Helper()
	w, err := e.NewExtent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Several writes: engines must concatenate them (SQL engines chunk them into rows).
	for len(data) > 0 {
		n := min(len(data), 100_000)
		if _, err := w.Write(data[:n]); err != nil {
			t.Fatal(err)
		}
		data = data[n:]
	}
	want := w.ID()
	id, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if id != want {
		t.Fatalf("Commit returned id %d, ID() said %d", id, want)
	}
	return id
}

func readExtent(e store.Extents, id uint64, off, n int64) ([]byte, error) {
	r, err := e.ReadExtent(context.Background(), id, off, n)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// writeExtentTo reads like readExtent through the reader's WriteTo, for engines whose
// readers have one (ok false otherwise).
func writeExtentTo(e store.Extents, id uint64, off, n int64) (got []byte, ok bool, err error) {
	r, err := e.ReadExtent(context.Background(), id, off, n)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	wt, ok := r.(io.WriterTo)
	if !ok {
		return nil, false, nil
	}
	var buf bytes.Buffer
	m, err := wt.WriteTo(&buf)
	if m != int64(buf.Len()) {
		return nil, true, errors.New("WriteTo's count differs from the bytes written")
	}
	return buf.Bytes(), true, err
}

func listExtents(t *testing.T, e store.Extents) map[uint64]int64 {
	t.Helper()
	m := map[uint64]int64{}
	var last uint64
	err := e.ListExtents(context.Background(), func(id uint64, size int64) error {
		if id <= last && len(m) > 0 {
			t.Errorf("ListExtents not ascending: %d after %d", id, last)
		}
		last = id
		m[id] = size
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func testExtents(t *testing.T, s store.Store) {
	defer s.Close()
	e := s.Extents()
	if w, err := e.NewExtent(context.Background()); errors.Is(err, store.ErrNotSupported) {
		t.Skip("the engine does not store extents (store.ErrNotSupported)")
	} else if err == nil {
		w.Abort()
	}
	data := make([]byte, 1<<20+17)
	for i := range data {
		data[i] = byte(i*7 + i>>11)
	}
	a := PutExtent(t, e, data)
	b := PutExtent(t, e, nil)
	if b <= a {
		t.Fatalf("ids must increase: %d then %d", a, b)
	}
	for _, c := range []struct{ off, n int64 }{{0, -1}, {0, int64(len(data))}, {5, 10}, {5, 0}, {1 << 20, 17}, {1<<20 + 17, 0}, {3, -1}} {
		got, err := readExtent(e, a, c.off, c.n)
		if err != nil {
			t.Fatalf("read %+v: %v", c, err)
		}
		end := int64(len(data))
		if c.n >= 0 {
			end = c.off + c.n
		}
		if !bytes.Equal(got, data[c.off:end]) {
			t.Fatalf("read %+v: got %d bytes, want %d", c, len(got), end-c.off)
		}
		got, ok, err := writeExtentTo(e, a, c.off, c.n)
		if ok && (err != nil || !bytes.Equal(got, data[c.off:end])) {
			t.Fatalf("WriteTo %+v: got %d bytes (%v), want %d", c, len(got), err, end-c.off)
		}
	}
	if _, err := readExtent(e, a, int64(len(data))-1, 5); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read past the end: %v, want ErrUnexpectedEOF", err)
	}
	if got, ok, err := writeExtentTo(e, a, int64(len(data))-1, 5); ok && (!errors.Is(err, io.ErrUnexpectedEOF) || !bytes.Equal(got, data[len(data)-1:])) {
		t.Errorf("WriteTo past the end: %d bytes, %v; want the 1 byte there and ErrUnexpectedEOF", len(got), err)
	}
	if got, err := readExtent(e, b, 0, -1); err != nil || len(got) != 0 {
		t.Errorf("empty extent: %q, %v", got, err)
	}

	// An extent being written is not listed before Commit (a sweep that saw it could delete
	// it from under its writer).
	pw, err := e.NewExtent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pw.Write([]byte("pending"))
	if m := listExtents(t, e); len(m) != 2 {
		t.Fatalf("ListExtents while %d is being written = %v, want only %d and %d", pw.ID(), m, a, b)
	}
	pw.Abort()

	// An aborted extent is never listed nor readable.
	w, err := e.NewExtent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("discarded"))
	w.Abort()
	w.Abort()
	if m := listExtents(t, e); len(m) != 2 || m[a] != int64(len(data)) || m[b] != 0 {
		t.Fatalf("ListExtents = %v, want {%d:%d %d:0}", m, a, len(data), b)
	}

	if err := e.DeleteExtents(context.Background(), []uint64{a, 999_999_999}); err != nil {
		t.Fatal(err)
	}
	if _, err := readExtent(e, a, 0, -1); !errors.Is(err, store.ErrExtentNotFound) {
		t.Errorf("read of a deleted extent: %v, want ErrExtentNotFound", err)
	}
	if m := listExtents(t, e); len(m) != 1 {
		t.Fatalf("after delete ListExtents = %v", m)
	}
	if c := PutExtent(t, e, []byte("x")); c <= b {
		t.Errorf("id %d reused or decreasing (after %d)", c, b)
	}
}
