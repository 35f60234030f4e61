package blob

import (
	"bytes"
	"context"
	"encoding/base64"
	"testing"
)

// fillEveryKind writes one of each record that can name extents: a block blob of several
// blocks with a snapshot and a copy, staged blocks, a single-shot blob, an append blob, a
// page blob whose runs were cut, and an inline blob (which names none).
func fillEveryKind(t *testing.T, s *Service) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "acct", "box", "", nil); err != nil {
		t.Fatal(err)
	}
	ref := func(name string) Ref { return Ref{Account: "acct", Container: "box", Name: name} }
	big := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB: above the inline limit
	id := func(i int) string { return base64.StdEncoding.EncodeToString([]byte{byte(i)}) }
	for i := range 3 {
		if _, err := s.PutBlock(ctx, ref("blocks"), id(i), body(big[:100_000+i]), Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	list := []BlockRef{{id(0), "Latest"}, {id(1), "Latest"}, {id(2), "Latest"}}
	if _, err := s.PutBlockList(ctx, ref("blocks"), list, PutRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Snapshot(ctx, ref("blocks"), nil, false, Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Copy(ctx, ref("copy"), CopyRequest{Source: ref("blocks")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlock(ctx, ref("staged"), id(9), body(big), Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, ref("single"), PutRequest{Type: BlockBlob, Body: body(big)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, ref("inline"), PutRequest{Type: BlockBlob, Body: body([]byte("small"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, ref("log"), PutRequest{Type: AppendBlob}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.AppendBlock(ctx, ref("log"), AppendRequest{Body: body(big[:1000]), AppendPos: -1, MaxSize: -1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx, ref("disk"), PutRequest{Type: PageBlob, PageSize: 8192}); err != nil {
		t.Fatal(err)
	}
	pages := body(big[:4096])
	if _, err := s.PutPage(ctx, ref("disk"), 0, 4096, &pages, Cond{}, NoSeqCond); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutPage(ctx, ref("disk"), 1024, 512, nil, Cond{}, NoSeqCond); err != nil { // cuts the run in two
		t.Fatal(err)
	}
}

// RewriteExtents finds every extent id a record names, whatever the kind of record, with
// the bytes the record reads of it; records that name none come back unchanged.
func TestRewriteExtentsFindsEveryReference(t *testing.T) {
	s, st := openService(t, "", nil)
	fillEveryKind(t, s)
	held := map[uint64]int64{}
	if err := st.Extents().ListExtents(context.Background(), func(id uint64, size int64) error { held[id] = size; return nil }); err != nil {
		t.Fatal(err)
	}
	named := map[uint64]int64{} // the most bytes a record reads of each extent
	kinds := map[RecordKind]int{}
	err := st.Scan(context.Background(), nil, nil, func(k, v []byte) (bool, error) {
		var ids []uint64
		out, kind, err := RewriteExtents(k, v, func(id uint64, need int64) (uint64, error) {
			if size, ok := held[id]; !ok || need > size || need <= 0 {
				t.Errorf("%q names extent %d needing %d bytes; the engine holds %d", k, id, need, size)
			}
			named[id] = max(named[id], need)
			ids = append(ids, id)
			return id + 1000, nil
		})
		if err != nil {
			return false, err
		}
		kinds[kind]++
		if len(ids) == 0 {
			if len(v) > 0 && &out[0] != &v[0] {
				t.Errorf("%q names no extent but was re-encoded", k)
			}
			return true, nil
		}
		// The rewritten record names the mapped ids, and nothing else changed.
		var again []uint64
		back, _, err := RewriteExtents(k, out, func(id uint64, _ int64) (uint64, error) { again = append(again, id); return id - 1000, nil })
		if err != nil {
			return false, err
		}
		for i := range ids {
			if again[i] != ids[i]+1000 {
				t.Errorf("%q: rewritten ids %v, want %v + 1000", k, again, ids)
			}
		}
		if !bytes.Equal(back, v) {
			t.Errorf("%q: mapping the ids there and back changed the record:\n%q\n%q", k, v, back)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every extent here is read to its end by some record (the page blob's by the run after
	// the cleared pages).
	for id, size := range held {
		if named[id] != size {
			t.Errorf("extent %d of %d bytes: records read at most %d of it", id, size, named[id])
		}
	}
	// base blobs: blocks, copy, single, inline, log, disk; one snapshot; one staged block.
	if kinds[BlobRecord] != 7 || kinds[BlockRecord] != 1 {
		t.Errorf("record kinds %v, want 7 blob records and 1 uncommitted block", kinds)
	}
	if kinds[OtherRecord] == 0 {
		t.Error("no other record seen (the container's)")
	}
}
