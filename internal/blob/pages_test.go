package blob

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

func pageBody(c byte, n int) *Body {
	b := body(bytes.Repeat([]byte{c}, n))
	return &b
}

// A page run that a later Put Page or Clear Page covers exactly, or covers from its start or
// up to its end, gives its extent back to the sweep: the blob keeps no run (not even an
// empty one) that still names it.
func TestPagesCoveredFreeTheirExtents(t *testing.T) {
	s, st := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "pages", "", nil)
	r := Ref{Account: "a", Container: "pages", Name: "p"}
	if _, err := s.Put(ctx, r, PutRequest{Type: PageBlob, PageSize: 8 * pageSize}); err != nil {
		t.Fatal(err)
	}
	put := func(off, n int64, b *Body) {
		t.Helper()
		if _, err := s.PutPage(ctx, r, off, n, b, Cond{}, NoSeqCond); err != nil {
			t.Fatal(err)
		}
	}
	runs := func() []Page {
		t.Helper()
		b, err := s.Get(ctx, r, Cond{})
		if err != nil {
			t.Fatal(err)
		}
		return b.Pages
	}
	put(pageSize, pageSize, pageBody('a', pageSize))
	put(pageSize, pageSize, pageBody('b', pageSize)) // exactly over 'a'
	if got := sweep2(t, s); got.Deleted != 1 {
		t.Errorf("a page overwritten exactly: sweep deleted %d extents, want 1", got.Deleted)
	}
	if p := runs(); len(p) != 1 || p[0].Off != pageSize || p[0].Len != pageSize {
		t.Errorf("after an exact overwrite: runs %+v", p)
	}
	// Two pages, then their first and their second overwritten: the run is cut from its
	// start, then up to its end.
	put(4*pageSize, 2*pageSize, pageBody('c', 2*pageSize))
	put(4*pageSize, pageSize, pageBody('d', pageSize))
	put(5*pageSize, pageSize, pageBody('e', pageSize))
	if got := sweep2(t, s); got.Deleted != 1 {
		t.Errorf("a run overwritten from its start and up to its end: sweep deleted %d, want 1", got.Deleted)
	}
	put(pageSize, pageSize, nil) // clear exactly over 'b'
	put(4*pageSize, 2*pageSize, nil)
	if got := sweep2(t, s); got.Deleted != 3 {
		t.Errorf("pages cleared exactly: sweep deleted %d, want 3", got.Deleted)
	}
	if p := runs(); len(p) != 0 {
		t.Errorf("after the clears: runs %+v", p)
	}
	if n, _ := countExtents(t, st); n != 0 {
		t.Errorf("%d extents left with no page written", n)
	}
	if got := readRange(t, s, r, 0, 8*pageSize); !bytes.Equal(got, make([]byte, 8*pageSize)) {
		t.Error("a cleared blob does not read as zeros")
	}
}

// Put Page and Clear Page answer with the blob as stored (its new ETag, which the next Get
// sees) and the checksum the response carries: the client's MD5, or the CRC-64 of the page.
func TestPutPageAnswers(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "pages", "", nil)
	r := Ref{Account: "a", Container: "pages", Name: "p"}
	if _, err := s.Put(ctx, r, PutRequest{Type: PageBlob, PageSize: 4 * pageSize}); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("page"), pageSize/2)
	etag := func() string {
		t.Helper()
		b, err := s.Get(ctx, r, Cond{})
		if err != nil {
			t.Fatal(err)
		}
		return b.ETag()
	}
	res, err := s.PutPage(ctx, r, pageSize, 2*pageSize, pageBody('x', 2*pageSize), Cond{}, NoSeqCond)
	if err != nil || res.Blob == nil || res.Blob.ETag() != etag() {
		t.Fatalf("Put Page: %+v, %v; stored ETag %s", res, err, etag())
	}
	if want := CRC64Bytes(crc64.Checksum(bytes.Repeat([]byte{'x'}, 2*pageSize), CRC64Table)); !bytes.Equal(res.CRC64, want) {
		t.Errorf("Put Page without an MD5: CRC-64 %x, want %x", res.CRC64, want)
	}
	sum := md5.Sum(data[:pageSize])
	b := body(data[:pageSize])
	b.MD5 = sum[:]
	if res, err = s.PutPage(ctx, r, 0, pageSize, &b, Cond{}, NoSeqCond); err != nil || !bytes.Equal(res.MD5, sum[:]) || res.Blob == nil || res.Blob.ETag() != etag() {
		t.Errorf("Put Page with an MD5: %+v, %v; want MD5 %x, ETag %s", res, err, sum, etag())
	}
	before := etag()
	if res, err = s.PutPage(ctx, r, pageSize, pageSize, nil, Cond{}, NoSeqCond); err != nil || res.Blob == nil || res.Blob.ETag() != etag() || etag() == before {
		t.Errorf("Clear Page: %+v, %v; stored ETag %s, before %s", res, err, etag(), before)
	}
}

// A Put Page whose body ends before its Content-Length (the client went away) or whose
// reader fails is refused, and no page is written: the blob reads as before.
func TestPutPageBodyFailsWritesNothing(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "pages", "", nil)
	r := Ref{Account: "a", Container: "pages", Name: "p"}
	if _, err := s.Put(ctx, r, PutRequest{Type: PageBlob, PageSize: 2 * pageSize}); err != nil {
		t.Fatal(err)
	}
	short := Body{R: bytes.NewReader(make([]byte, pageSize-1)), Size: pageSize}
	if _, err := s.PutPage(ctx, r, 0, pageSize, &short, Cond{}, NoSeqCond); !azerr.Is(err, azerr.InvalidInput) {
		t.Errorf("a body shorter than its length: %v, want InvalidInput", err)
	}
	gone := errors.New("connection reset")
	failing := Body{R: io.MultiReader(bytes.NewReader(make([]byte, 100)), goneReader{gone}), Size: pageSize}
	if _, err := s.PutPage(ctx, r, pageSize, pageSize, &failing, Cond{}, NoSeqCond); !errors.Is(err, gone) {
		t.Errorf("a body whose reader fails: %v, want %v", err, gone)
	}
	if b, err := s.Get(ctx, r, Cond{}); err != nil || len(b.Pages) != 0 {
		t.Errorf("after failed writes: %+v, %v; want no pages", b, err)
	}
}

type goneReader struct{ err error }

func (e goneReader) Read([]byte) (int, error) { return 0, e.err }

// At exactly 4 MiB a Put Page is within the body limit, so a body of another length is a
// wrong page range (InvalidPageRange), as below the limit; past it, the body is too large.
func TestPutPageLimitBeforeLength(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "pages", "", nil)
	r := Ref{Account: "a", Container: "pages", Name: "p"}
	if _, err := s.Put(ctx, r, PutRequest{Type: PageBlob, PageSize: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n, size int64
		want    azerr.Code
	}{
		{maxPutPage, maxPutPage - pageSize, azerr.InvalidPageRange},
		{maxPutPage, maxPutPage + 1, azerr.InvalidPageRange},
		{maxPutPage + pageSize, maxPutPage, azerr.RequestBodyTooLarge},
	} {
		b := Body{R: bytes.NewReader(nil), Size: c.size}
		if _, err := s.PutPage(ctx, r, 0, c.n, &b, Cond{}, NoSeqCond); !azerr.Is(err, c.want) {
			t.Errorf("Put Page of %d bytes with a body of %d: %v, want %s", c.n, c.size, err, c.want)
		}
	}
}

// A page run whose extent file is shorter than the run (damaged on disk) reads its bytes and
// then fails with io.ErrUnexpectedEOF: never a body that looks complete.
func TestPageReadOfShortExtent(t *testing.T) {
	dir := t.TempDir()
	s, _ := openService(t, dir, nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "pages", "", nil)
	r := Ref{Account: "a", Container: "pages", Name: "p"}
	if _, err := s.Put(ctx, r, PutRequest{Type: PageBlob, PageSize: 4 * pageSize}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutPage(ctx, r, pageSize, 2*pageSize, pageBody('x', 2*pageSize), Cond{}, NoSeqCond); err != nil {
		t.Fatal(err)
	}
	b, err := s.Get(ctx, r, Cond{})
	if err != nil || len(b.Pages) != 1 {
		t.Fatalf("%+v %v", b, err)
	}
	var path string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == strconv.FormatUint(b.Pages[0].Ext, 10) {
			path = p
		}
		return nil
	})
	if path == "" {
		t.Fatalf("no file for extent %d", b.Pages[0].Ext)
	}
	if err := os.Truncate(path, pageSize); err != nil {
		t.Fatal(err)
	}
	rc := s.Open(ctx, b, 0, b.Size)
	got, err := io.ReadAll(rc)
	rc.Close()
	want := append(make([]byte, pageSize), bytes.Repeat([]byte{'x'}, pageSize)...)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !bytes.Equal(got, want) {
		t.Errorf("read of a short extent: %d bytes, %v; want %d, %v", len(got), err, len(want), io.ErrUnexpectedEOF)
	}
}

// A read that starts inside a run whose first pages were overwritten (the run then starts
// past the beginning of its extent) reads the run's own bytes from the right place.
func TestPageReadInsideCutRun(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "pages", "", nil)
	r := Ref{Account: "a", Container: "pages", Name: "p"}
	if _, err := s.Put(ctx, r, PutRequest{Type: PageBlob, PageSize: 4 * pageSize}); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 4*pageSize)
	for i := range data {
		data[i] = byte('a' + i/pageSize)
	}
	b := body(data)
	if _, err := s.PutPage(ctx, r, 0, 4*pageSize, &b, Cond{}, NoSeqCond); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutPage(ctx, r, 0, pageSize, pageBody('z', pageSize), Cond{}, NoSeqCond); err != nil {
		t.Fatal(err)
	}
	copy(data, bytes.Repeat([]byte{'z'}, pageSize))
	for _, off := range []int64{pageSize, pageSize + 100, 2 * pageSize, 3*pageSize + 511} {
		if got := readRange(t, s, r, off, 4*pageSize-off); !bytes.Equal(got, data[off:]) {
			t.Errorf("read from %d: %q..., want %q...", off, got[:min(len(got), 8)], data[off:off+1])
		}
	}
}

// Get Page Ranges with prevsnapshot through every window of a blob whose runs are apart
// (so that run ends and starts rarely meet): the changed and cleared ranges are those a page
// model gives, clipped to the window; without prevsnapshot, the written ranges.
func TestPageDiffWindows(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "pages", "", nil)
	r := Ref{Account: "a", Container: "pages", Name: "p"}
	const pages = 12
	if _, err := s.Put(ctx, r, PutRequest{Type: PageBlob, PageSize: pages * pageSize}); err != nil {
		t.Fatal(err)
	}
	write := make([]int, pages) // the write that last set each page (0: none)
	apply := func(id int, first, count int64, clear bool) {
		t.Helper()
		var b *Body
		if !clear {
			b = pageBody(byte(id), int(count*pageSize))
		}
		if _, err := s.PutPage(ctx, r, first*pageSize, count*pageSize, b, Cond{}, NoSeqCond); err != nil {
			t.Fatal(err)
		}
		for p := first; p < first+count; p++ {
			write[p] = id
			if clear {
				write[p] = 0
			}
		}
	}
	apply(1, 1, 2, false)
	apply(2, 5, 1, false)
	apply(3, 8, 3, false)
	_, snap, err := s.Snapshot(ctx, r, nil, false, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	prev := append([]int(nil), write...)
	apply(4, 2, 1, false)
	apply(5, 8, 1, true)
	apply(6, 6, 1, false)
	apply(7, 10, 1, true)
	cur, err := s.Get(ctx, r, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	old, err := s.Get(ctx, Ref{Account: "a", Container: "pages", Name: "p", Snapshot: snap}, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off <= pages; off++ {
		for n := int64(-1); off+n <= pages; n++ {
			end := int64(pages)
			if n >= 0 {
				end = off + n
			}
			var changed, cleared, written [][2]int64
			for p := off; p < end; p++ {
				lo, hi := p*pageSize, (p+1)*pageSize-1
				switch {
				case write[p] != 0 && write[p] != prev[p]:
					changed = mergeAdd(changed, lo, hi)
				case write[p] == 0 && prev[p] != 0:
					cleared = mergeAdd(cleared, lo, hi)
				}
				if write[p] != 0 {
					written = mergeAdd(written, lo, hi)
				}
			}
			ln := n * pageSize
			if n < 0 {
				ln = -1
			}
			if c, cl := PageDiff(cur, old, off*pageSize, ln); fmt.Sprint(c, cl) != fmt.Sprint(changed, cleared) {
				t.Errorf("PageDiff(pages %d+%d) = %v %v, want %v %v", off, n, c, cl, changed, cleared)
			}
			if got := PageRanges(cur, off*pageSize, ln); fmt.Sprint(got) != fmt.Sprint(written) {
				t.Errorf("PageRanges(pages %d+%d) = %v, want %v", off, n, got, written)
			}
		}
	}
}
