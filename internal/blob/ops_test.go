package blob

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// A model of a page blob: its bytes, and for each 512-byte page the write that last set it
// (0: never written or cleared).
type pageModel struct {
	data  []byte
	write []int
}

func (m *pageModel) ranges(off, end int64) [][2]int64 {
	var out [][2]int64
	for p := off / pageSize; p*pageSize < end; p++ {
		if m.write[p] == 0 {
			continue
		}
		s, e := p*pageSize, (p+1)*pageSize-1
		if k := len(out); k > 0 && out[k-1][1]+1 == s {
			out[k-1][1] = e
		} else {
			out = append(out, [2]int64{s, e})
		}
	}
	return out
}

func mergeAdd(out [][2]int64, s, e int64) [][2]int64 {
	if k := len(out); k > 0 && out[k-1][1]+1 == s {
		out[k-1][1] = e
		return out
	}
	return append(out, [2]int64{s, e})
}

func readRange(t *testing.T, s *Service, r Ref, off, n int64) []byte {
	t.Helper()
	b, err := s.Get(context.Background(), r, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Open(context.Background(), b, off, n)
	defer rc.Close()
	out, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Page writes and clears that overlap each other in every way (inside a run, across its
// start or end, over several runs, exactly on one) read back as a byte model says, and list
// the model's written ranges, whole and through windows that cut runs; the difference with
// a snapshot lists what was written and cleared since.
func TestPageWritesAgainstModel(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "pages", "", nil)
	r := Ref{Account: "a", Container: "pages", Name: "p"}
	const pages = 24
	if _, err := s.Put(ctx, r, PutRequest{Type: PageBlob, PageSize: pages * pageSize}); err != nil {
		t.Fatal(err)
	}
	m := &pageModel{data: make([]byte, pages*pageSize), write: make([]int, pages)}
	apply := func(n int, first, count int64, clear bool) {
		t.Helper()
		off, size := first*pageSize, count*pageSize
		var body *Body
		if !clear {
			b := body0(bytes.Repeat([]byte{byte('A' + n%26)}, int(size)))
			body = &b
		}
		if _, err := s.PutPage(ctx, r, off, size, body, Cond{}, NoSeqCond); err != nil {
			t.Fatalf("op %d: %v", n, err)
		}
		for p := first; p < first+count; p++ {
			fill := byte(0)
			if !clear {
				fill, m.write[p] = byte('A'+n%26), n
			} else {
				m.write[p] = 0
			}
			copy(m.data[p*pageSize:(p+1)*pageSize], bytes.Repeat([]byte{fill}, pageSize))
		}
	}
	check := func(what string) {
		t.Helper()
		if got := readAll(t, s, r); !bytes.Equal(got, m.data) {
			t.Fatalf("%s: bytes differ from the model", what)
		}
		b, _ := s.Get(ctx, r, Cond{})
		for _, w := range [][2]int64{{0, -1}, {0, pages * pageSize}, {pageSize, 3 * pageSize}, {700, 5000}, {5 * pageSize, 1}, {0, 0}, {4 * pageSize, -1}} {
			end := int64(pages * pageSize)
			if w[1] >= 0 {
				end = min(end, w[0]+w[1])
			}
			want := m.ranges(w[0]/pageSize*pageSize, end)
			// A window that starts or ends inside a page cuts its range there.
			if len(want) > 0 && want[0][0] < w[0] {
				want[0][0] = w[0]
			}
			if k := len(want); k > 0 && want[k-1][1] >= end {
				want[k-1][1] = end - 1
			}
			if k := len(want); k > 0 && want[k-1][0] > want[k-1][1] {
				want = want[:k-1]
			}
			if got := PageRanges(b, w[0], w[1]); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: PageRanges(%d, %d) = %v, want %v", what, w[0], w[1], got, want)
			}
		}
		for _, w := range [][2]int64{{0, 0}, {pageSize, 2 * pageSize}, {3 * pageSize, 9 * pageSize}} {
			if got := readRange(t, s, r, w[0], w[1]); !bytes.Equal(got, m.data[w[0]:w[0]+w[1]]) {
				t.Errorf("%s: bytes %d+%d differ", what, w[0], w[1])
			}
		}
	}
	apply(1, 2, 6, false)  // 2-7
	apply(2, 4, 2, false)  // inside: 4-5
	apply(3, 1, 2, false)  // across the start: 1-2
	apply(4, 7, 3, false)  // across the end: 7-9
	apply(5, 12, 2, false) // apart: 12-13
	check("writes")
	snapBlob, snap, err := s.Snapshot(ctx, r, nil, false, Cond{})
	if err != nil || snapBlob.Snapshots != 1 {
		t.Fatalf("snapshot: %v", err)
	}
	prev := &pageModel{data: bytes.Clone(m.data), write: append([]int(nil), m.write...)}
	apply(6, 3, 1, true)   // clear inside
	apply(7, 0, 2, true)   // clear across the start of 1-2
	apply(8, 9, 4, false)  // over the end of one run and the start of another
	apply(9, 12, 1, true)  // clear exactly a page of a run
	apply(10, 20, 4, true) // clear where nothing was written
	apply(11, 23, 1, false)
	apply(12, 5, 1, false)
	apply(13, 5, 1, true)
	check("writes and clears")
	var changed, cleared [][2]int64
	for p := int64(0); p < pages; p++ {
		switch {
		case m.write[p] != 0 && m.write[p] != prev.write[p]:
			changed = mergeAdd(changed, p*pageSize, (p+1)*pageSize-1)
		case m.write[p] == 0 && prev.write[p] != 0:
			cleared = mergeAdd(cleared, p*pageSize, (p+1)*pageSize-1)
		}
	}
	cur, _ := s.Get(ctx, r, Cond{})
	old, err := s.Get(ctx, Ref{Account: "a", Container: "pages", Name: "p", Snapshot: snap}, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	if c, cl := PageDiff(cur, old, 0, -1); fmt.Sprint(c, cl) != fmt.Sprint(changed, cleared) {
		t.Errorf("PageDiff = %v %v, want %v %v", c, cl, changed, cleared)
	}
	// The snapshot still reads as it was.
	if got := readAll(t, s, Ref{Account: "a", Container: "pages", Name: "p", Snapshot: snap}); !bytes.Equal(got, prev.data) {
		t.Error("snapshot changed")
	}
	// Shrinking cuts the runs past the new end; growing reads zeros there.
	if _, err := s.SetProperties(ctx, r, SetPropsRequest{Resize: 9 * pageSize, KeepProps: true}, Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetProperties(ctx, r, SetPropsRequest{Resize: pages * pageSize, KeepProps: true}, Cond{}); err != nil {
		t.Fatal(err)
	}
	for p := 9; p < pages; p++ {
		m.write[p] = 0
		copy(m.data[p*pageSize:], make([]byte, pageSize))
	}
	check("after a shrink and a grow")
}

func body0(b []byte) Body { return Body{R: bytes.NewReader(b), Size: int64(len(b))} }

// Put Page's checks at their edges: alignment, a range ending exactly at the blob's end or
// one page past it, the 4 MiB body limit, a body of another length, sequence number
// conditions at equality.
func TestPutPageEdges(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "pages", "", nil)
	r := Ref{Account: "a", Container: "pages", Name: "p"}
	const size = 4<<20 + 2*pageSize
	if _, err := s.Put(ctx, r, PutRequest{Type: PageBlob, PageSize: size, Seq: 5}); err != nil {
		t.Fatal(err)
	}
	page := func(n int64) *Body { b := body0(make([]byte, n)); return &b }
	for _, c := range []struct {
		off, n int64
		body   *Body
		seq    SeqCond
		want   azerr.Code
	}{
		{0, pageSize, page(pageSize), NoSeqCond, ""},
		{size - pageSize, pageSize, page(pageSize), NoSeqCond, ""},
		{size, pageSize, page(pageSize), NoSeqCond, azerr.InvalidPageRange},
		{size - pageSize, 2 * pageSize, nil, NoSeqCond, azerr.InvalidPageRange},
		{1, pageSize, page(pageSize), NoSeqCond, azerr.InvalidPageRange},
		{0, pageSize + 1, page(pageSize + 1), NoSeqCond, azerr.InvalidPageRange},
		{0, 0, page(0), NoSeqCond, azerr.InvalidPageRange},
		{0, pageSize, page(pageSize - 1), NoSeqCond, azerr.InvalidPageRange},
		{0, 4 << 20, page(4 << 20), NoSeqCond, ""},
		{0, 4<<20 + pageSize, page(4<<20 + pageSize), NoSeqCond, azerr.RequestBodyTooLarge},
		{0, 4<<20 + pageSize, nil, NoSeqCond, ""}, // a clear has no body limit
		{0, pageSize, nil, SeqCond{LE: 5, LT: 6, EQ: 5}, ""},
		{0, pageSize, nil, SeqCond{LE: 4, LT: -1, EQ: -1}, azerr.SequenceNumberConditionNotMet},
		{0, pageSize, nil, SeqCond{LE: -1, LT: 5, EQ: -1}, azerr.SequenceNumberConditionNotMet},
		{0, pageSize, nil, SeqCond{LE: -1, LT: -1, EQ: 6}, azerr.SequenceNumberConditionNotMet},
		{0, pageSize, nil, SeqCond{LE: -1, LT: -1, EQ: 4}, azerr.SequenceNumberConditionNotMet},
	} {
		_, err := s.PutPage(ctx, r, c.off, c.n, c.body, Cond{}, c.seq)
		if (c.want == "" && err != nil) || (c.want != "" && !azerr.Is(err, c.want)) {
			t.Errorf("PutPage(%d, %d, body %v, %+v): %v, want %q", c.off, c.n, c.body != nil, c.seq, err, c.want)
		}
	}
	if _, err := s.PutPage(ctx, Ref{Account: "a", Container: "pages", Name: "none"}, 0, pageSize, nil, Cond{}, NoSeqCond); !azerr.Is(err, azerr.BlobNotFound) {
		t.Errorf("page of a missing blob: %v", err)
	}
	s.Put(ctx, Ref{Account: "a", Container: "pages", Name: "block"}, PutRequest{Type: BlockBlob, Body: body0([]byte("x"))})
	if _, err := s.PutPage(ctx, Ref{Account: "a", Container: "pages", Name: "block"}, 0, pageSize, nil, Cond{}, NoSeqCond); !azerr.Is(err, azerr.InvalidBlobType) {
		t.Errorf("page of a block blob: %v", err)
	}
	if _, err := s.PutPage(ctx, r, 0, pageSize, nil, Cond{IfMatch: `"0x1"`}, NoSeqCond); !azerr.Is(err, azerr.ConditionNotMet) {
		t.Errorf("page with a failing If-Match: %v", err)
	}
	// A page blob of size 0 is allowed; negative and unaligned sizes are not.
	for _, c := range []struct {
		size int64
		ok   bool
	}{{0, true}, {-512, false}, {100, false}} {
		_, err := s.Put(ctx, Ref{Account: "a", Container: "pages", Name: "sized"}, PutRequest{Type: PageBlob, PageSize: c.size})
		if (err == nil) != c.ok {
			t.Errorf("page blob of %d bytes: %v", c.size, err)
		}
	}
}

// Writes and deletes of existing blobs: a failing condition on an existing blob refuses a
// write, the default content type, a block id of exactly 64 bytes, snapshots counted so that
// the base cannot be deleted without them, and the deletion of one snapshot.
func TestBlobWriteRules(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "rules", "", nil)
	r := Ref{Account: "a", Container: "rules", Name: "b"}
	b, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body0([]byte("x"))})
	if err != nil || b.Props.ContentType != "application/octet-stream" {
		t.Fatalf("default content type: %+v %v", b, err)
	}
	if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body0([]byte("y")), Cond: Cond{IfMatch: `"0x1"`}}); !azerr.Is(err, azerr.ConditionNotMet) {
		t.Errorf("overwrite with a failing If-Match: %v", err)
	}
	if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body0([]byte("y")), Cond: Cond{IfNoneMatch: "*"}}); !azerr.Is(err, azerr.BlobAlreadyExists) {
		t.Errorf("overwrite with If-None-Match *: %v", err)
	}
	for _, c := range []struct {
		raw int
		ok  bool
	}{{64, true}, {65, false}, {1, true}} {
		id := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("i", c.raw)))
		_, err := s.PutBlock(ctx, Ref{Account: "a", Container: "rules", Name: fmt.Sprint("ids", c.raw)}, id, body0([]byte("z")), Cond{})
		if (err == nil) != c.ok || (err != nil && !azerr.Is(err, azerr.InvalidQueryParameterValue)) {
			t.Errorf("block id of %d bytes: %v", c.raw, err)
		}
	}
	if _, err := s.PutBlock(ctx, r, "", body0([]byte("z")), Cond{}); !azerr.Is(err, azerr.InvalidQueryParameterValue) {
		t.Errorf("empty block id: %v", err)
	}
	// A block staged onto a blob of another type is refused.
	ap := Ref{Account: "a", Container: "rules", Name: "append"}
	if _, err := s.Put(ctx, ap, PutRequest{Type: AppendBlob}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlock(ctx, ap, "QUFB", body0([]byte("z")), Cond{}); !azerr.Is(err, azerr.InvalidBlobType) {
		t.Errorf("block onto an append blob: %v", err)
	}

	_, snap1, err := s.Snapshot(ctx, r, nil, false, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	_, snap2, err := s.Snapshot(ctx, r, nil, false, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, r, "", Cond{}); !azerr.Is(err, azerr.SnapshotsPresent) {
		t.Errorf("delete with two snapshots: %v", err)
	}
	if err := s.Delete(ctx, Ref{Account: "a", Container: "rules", Name: "b", Snapshot: snap1}, "include", Cond{}); !azerr.Is(err, azerr.InvalidQueryParameterValue) {
		t.Errorf("delete a snapshot with x-ms-delete-snapshots: %v", err)
	}
	if err := s.Delete(ctx, Ref{Account: "a", Container: "rules", Name: "b", Snapshot: snap1}, "", Cond{}); err != nil {
		t.Errorf("delete a snapshot: %v", err)
	}
	if err := s.Delete(ctx, Ref{Account: "a", Container: "rules", Name: "b", Snapshot: snap1}, "", Cond{}); !azerr.Is(err, azerr.BlobNotFound) {
		t.Errorf("delete a deleted snapshot: %v", err)
	}
	if _, err := s.Get(ctx, Ref{Account: "a", Container: "rules", Name: "b", Snapshot: snap2}, Cond{}); err != nil {
		t.Errorf("the other snapshot: %v", err)
	}
	if err := s.Delete(ctx, r, "", Cond{}); !azerr.Is(err, azerr.SnapshotsPresent) {
		t.Errorf("delete with one snapshot left: %v", err)
	}
	if err := s.Delete(ctx, r, "", Cond{IfMatch: `"0x1"`}); !azerr.Is(err, azerr.ConditionNotMet) {
		t.Errorf("delete with a failing If-Match: %v", err)
	}
	if err := s.Delete(ctx, r, "some", Cond{}); !azerr.Is(err, azerr.InvalidHeaderValue) {
		t.Errorf("delete, bad x-ms-delete-snapshots: %v", err)
	}
	if err := s.Delete(ctx, r, "only", Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, Ref{Account: "a", Container: "rules", Name: "b", Snapshot: snap2}, Cond{}); !azerr.Is(err, azerr.BlobNotFound) {
		t.Errorf("snapshot after delete only: %v", err)
	}
	if err := s.Delete(ctx, r, "", Cond{}); err != nil {
		t.Errorf("delete after its snapshots: %v", err)
	}
	if err := s.Delete(ctx, r, "", Cond{}); !azerr.Is(err, azerr.BlobNotFound) {
		t.Errorf("delete a deleted blob: %v", err)
	}
}
