package blob

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"hash/crc64"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

func openService(t testing.TB, dir string, now func() time.Time) (*Service, store.Store) {
	t.Helper()
	o := pebblestore.Options{InMemory: dir == "", Dir: dir}
	db, err := pebblestore.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	s := New(db, Options{SweepInterval: -1, Now: now})
	t.Cleanup(func() { s.Close(); db.Close() })
	return s, db
}

func body(b []byte) Body { return Body{R: bytes.NewReader(b), Size: int64(len(b))} }

func countExtents(t testing.TB, st store.Store) (n int, size int64) {
	t.Helper()
	err := st.Extents().ListExtents(context.Background(), func(id uint64, sz int64) error {
		n++
		size += sz
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, size
}

func readAll(t testing.TB, s *Service, r Ref) []byte {
	t.Helper()
	b, err := s.Get(context.Background(), r, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Open(context.Background(), b, 0, b.Size)
	defer rc.Close()
	out, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sweep2(t testing.TB, s *Service) SweepStats {
	t.Helper()
	if _, err := s.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Overwritten blobs, dropped staged blocks, expired staged blocks and deleted containers
// give their extents back; extents still named (a copy shares its source's) stay.
func TestSweepReclaims(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	s, st := openService(t, "", clock)
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "acct", "cc1", "", nil); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), inlineMax+1)
	r := Ref{Account: "acct", Container: "cc1", Name: "a"}
	for i := 0; i < 3; i++ {
		if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body(big)}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := countExtents(t, st); n != 3 {
		t.Fatalf("%d extents after three puts", n)
	}
	if got := sweep2(t, s); got.Deleted != 2 {
		t.Errorf("overwrites: deleted %d, want 2", got.Deleted)
	}
	// A copy shares the extent: deleting the source frees nothing.
	if _, err := s.Copy(ctx, Ref{Account: "acct", Container: "cc1", Name: "copy"}, CopyRequest{Source: r}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, r, "", Cond{}); err != nil {
		t.Fatal(err)
	}
	if got := sweep2(t, s); got.Deleted != 0 {
		t.Errorf("shared extent deleted")
	}
	if !bytes.Equal(readAll(t, s, Ref{Account: "acct", Container: "cc1", Name: "copy"}), big) {
		t.Error("copy lost its bytes")
	}
	// Staged blocks: one committed, one dropped by the commit, one left to expire.
	br := Ref{Account: "acct", Container: "cc1", Name: "blocks"}
	for _, id := range []string{"QUFB", "QkJC"} {
		if _, err := s.PutBlock(ctx, br, id, body([]byte(id)), Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutBlockList(ctx, br, []BlockRef{{ID: "QUFB", Where: "Latest"}}, PutRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlock(ctx, Ref{Account: "acct", Container: "cc1", Name: "never"}, "Q0ND", body([]byte("c")), Cond{}); err != nil {
		t.Fatal(err)
	}
	if got := sweep2(t, s); got.Deleted != 1 {
		t.Errorf("dropped staged block: deleted %d, want 1", got.Deleted)
	}
	now = now.Add(8 * 24 * time.Hour)
	if got, _ := s.Sweep(ctx); got.ExpiredBlocks != 1 {
		t.Errorf("expired staged block: %+v", got)
	}
	if got := sweep2(t, s); got.Deleted != 1 {
		t.Errorf("expired staged block's extent: %+v", got)
	}
	if string(readAll(t, s, br)) != "QUFB" {
		t.Error("committed block lost")
	}
	// Delete Container: everything goes.
	if err := s.DeleteContainer(ctx, "acct", "cc1", Cond{}); err != nil {
		t.Fatal(err)
	}
	sweep2(t, s)
	if n, _ := countExtents(t, st); n != 0 {
		t.Errorf("%d extents left after Delete Container", n)
	}
}

// A reader holds the extents it streams: a sweep while the blob is overwritten does not
// cut the download.
func TestSweepSparesReaders(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "ccc", "", nil)
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	big := bytes.Repeat([]byte("y"), 3*inlineMax)
	s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body(big)})
	b, _ := s.Get(ctx, r, Cond{})
	rc := s.Open(ctx, b, 0, b.Size)
	s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("new"))})
	sweep2(t, s)
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read across a sweep: %d bytes, %v", len(got), err)
	}
	if st := sweep2(t, s); st.Deleted != 1 {
		t.Errorf("after the read: deleted %d, want 1", st.Deleted)
	}
}

func TestPutBlockListLatestPrefersUncommitted(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "ccc", "", nil)
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	s.PutBlock(ctx, r, "QUFB", body([]byte("old")), Cond{})
	if _, err := s.PutBlockList(ctx, r, []BlockRef{{ID: "QUFB", Where: "Latest"}}, PutRequest{}); err != nil {
		t.Fatal(err)
	}
	s.PutBlock(ctx, r, "QUFB", body([]byte("new")), Cond{})
	s.PutBlock(ctx, r, "QkJC", body([]byte("!")), Cond{})
	if _, err := s.PutBlockList(ctx, r, []BlockRef{{ID: "QUFB", Where: "Latest"}, {ID: "QUFB", Where: "Committed"}}, PutRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := string(readAll(t, s, r)); got != "newold" {
		t.Errorf("Latest then Committed = %q, want newold", got)
	}
	_, _, unc, _ := s.GetBlockList(ctx, r, Cond{})
	if len(unc) != 0 {
		t.Errorf("uncommitted blocks kept after commit: %v", unc)
	}
	_, err := s.PutBlockList(ctx, r, []BlockRef{{ID: "QkJC", Where: "Uncommitted"}}, PutRequest{})
	if !azerr.Is(err, azerr.InvalidBlockList) {
		t.Errorf("discarded block committed: %v", err)
	}
}

// A fixed lease that ran out while the server was down reads expired after a restart.
func TestLeaseExpiresAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	clock := func() time.Time { return now }
	s, db := openService(t, dir, clock)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "ccc", "", nil)
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("x"))})
	if _, _, err := s.Lease(ctx, r, LeaseRequest{Action: "acquire", Duration: 15}, Cond{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db.Close()
	now = now.Add(16 * time.Second)
	s2, _ := openService(t, dir, clock)
	b, err := s2.Get(ctx, r, Cond{})
	if err != nil || b.Lease.State(s2.Now()) != Expired {
		t.Fatalf("lease state after restart: %v", err)
	}
	if _, err := s2.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("y"))}); err != nil {
		t.Errorf("write after expiry: %v", err)
	}
}

// TestSweepTime measures reclaiming a deleted container of TABLO_SWEEP_GIB GiB in 4 MiB
// blocks on disk (10 for the documented figure).
func TestSweepTime(t *testing.T) {
	gib, _ := strconv.Atoi(os.Getenv("TABLO_SWEEP_GIB"))
	if gib <= 0 {
		t.Skip("set TABLO_SWEEP_GIB to run")
	}
	s, _ := openService(t, t.TempDir(), nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "ccc", "", nil)
	blk := bytes.Repeat([]byte("z"), 4<<20)
	n := gib * 256
	var list []BlockRef
	for i := 0; i < n; i++ {
		id := base64.StdEncoding.EncodeToString([]byte("block-" + strconv.Itoa(100000+i)))
		list = append(list, BlockRef{ID: id, Where: "Latest"})
		if _, err := s.PutBlock(ctx, Ref{Account: "a", Container: "ccc", Name: "big" + strconv.Itoa(i/2000)}, id, body(blk), Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i*2000 < n; i++ {
		if _, err := s.PutBlockList(ctx, Ref{Account: "a", Container: "ccc", Name: "big" + strconv.Itoa(i)}, list[i*2000:min(n, (i+1)*2000)], PutRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	if err := s.DeleteContainer(ctx, "a", "ccc", Cond{}); err != nil {
		t.Fatal(err)
	}
	del := time.Since(began)
	began = time.Now()
	st1, _ := s.Sweep(ctx)
	mark := time.Since(began)
	began = time.Now()
	st2, _ := s.Sweep(ctx)
	free := time.Since(began)
	t.Logf("%d GiB in %d extents: Delete Container %v; sweep 1 (marks %d) %v; sweep 2 (deletes %d, %d MiB) %v", gib, n, del, st1.Candidates, mark, st2.Deleted, st2.DeletedBytes>>20, free)
}

// DeleteAccount drops one account's containers, blobs and settings (not those of an account
// whose name it prefixes), and the sweep then gives back that account's extents only.
func TestDeleteAccountReclaims(t *testing.T) {
	s, st := openService(t, "", nil)
	ctx := context.Background()
	big := bytes.Repeat([]byte("x"), inlineMax+1)
	for _, acct := range []string{"acct", "acct2"} {
		for _, c := range []string{"cc1", "cc2"} {
			if _, err := s.CreateContainer(ctx, acct, c, "", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, Ref{Account: acct, Container: c, Name: "a"}, PutRequest{Type: BlockBlob, Body: body(big)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.UpdateAccountSetting(ctx, acct, "properties", func([]byte) ([]byte, error) { return []byte("doc"), nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteAccount(ctx, "acct"); err != nil {
		t.Fatal(err)
	}
	if got := sweep2(t, s); got.Deleted != 2 {
		t.Errorf("deleted %d extents, want 2", got.Deleted)
	}
	if n, _ := countExtents(t, st); n != 2 {
		t.Errorf("%d extents left, want 2", n)
	}
	if cs, _, err := s.ListContainers(ctx, "acct", "", "", 10); err != nil || len(cs) != 0 {
		t.Errorf("acct's containers: %d %v", len(cs), err)
	}
	if doc, err := s.AccountSetting(ctx, "acct", "properties"); err != nil || doc != nil {
		t.Errorf("acct's settings: %q %v", doc, err)
	}
	if !bytes.Equal(readAll(t, s, Ref{Account: "acct2", Container: "cc2", Name: "a"}), big) {
		t.Error("acct2 lost its blob")
	}
	if doc, err := s.AccountSetting(ctx, "acct2", "properties"); err != nil || string(doc) != "doc" {
		t.Errorf("acct2's settings: %q %v", doc, err)
	}
}

// sharedStore stands for an engine several front ends share.
type sharedStore struct{ store.Store }

func (sharedStore) Traits() store.Traits { return store.Traits{Shared: true} }

// On a shared engine another front end's holds are invisible: a blob streamed by front end
// A and overwritten through front end B keeps its extent through B's sweeps until the grace
// has passed, and only then is it reclaimed.
func TestSweepOnSharedEngineWaitsTheGrace(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const grace = 300 * time.Millisecond
	a := New(sharedStore{db}, Options{SweepInterval: -1, SharedGrace: grace})
	b := New(sharedStore{db}, Options{SweepInterval: -1, SharedGrace: grace})
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	a.CreateContainer(ctx, "a", "ccc", "", nil)
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	big := bytes.Repeat([]byte("z"), 3*inlineMax)
	if _, err := a.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body(big)}); err != nil {
		t.Fatal(err)
	}
	bl, _ := a.Get(ctx, r, Cond{})
	rc := a.Open(ctx, bl, 0, bl.Size)
	defer rc.Close()
	began := time.Now()
	if _, err := b.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("new"))}); err != nil {
		t.Fatal(err)
	}
	st := sweep2(t, b)
	if time.Since(began) < grace && st.Deleted != 0 {
		t.Fatalf("deleted %d extents within the grace", st.Deleted)
	}
	got, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read on the other front end across its sweeps: %d bytes, %v", len(got), err)
	}
	time.Sleep(grace)
	if st, err := b.Sweep(ctx); err != nil || st.Deleted != 1 {
		t.Errorf("after the grace: deleted %d, want 1", st.Deleted)
	}
}

// The checksums a write returns are the ones its response needs, computed from the bytes: a
// block sent without an MD5 answers with its CRC-64, one sent with an MD5 echoes it, and a
// Put Blob stores the body's MD5 as the blob's Content-MD5 (inline and in an extent).
func TestWriteChecksums(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "ccc", "", nil)
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	data := bytes.Repeat([]byte("checksum"), 20000) // 160 KB: past the inline limit
	res, err := s.PutBlock(ctx, r, "QUFB", body(data), Cond{})
	if err != nil {
		t.Fatal(err)
	}
	if want := CRC64Bytes(crc64.Checksum(data, CRC64Table)); !bytes.Equal(res.CRC64, want) {
		t.Errorf("Put Block without an MD5: CRC-64 %x, want %x", res.CRC64, want)
	}
	sum := md5.Sum(data)
	b := body(data)
	b.MD5 = sum[:]
	if res, err = s.PutBlock(ctx, r, "QkJC", b, Cond{}); err != nil || !bytes.Equal(res.MD5, sum[:]) {
		t.Errorf("Put Block with an MD5: %x, %v; want %x", res.MD5, err, sum)
	}
	for _, size := range []int{100, len(data)} {
		got, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body(data[:size])})
		if want := md5.Sum(data[:size]); err != nil || !bytes.Equal(got.Props.ContentMD5, want[:]) {
			t.Errorf("Put Blob of %d bytes: Content-MD5 %x, %v; want %x", size, got.Props.ContentMD5, err, want)
		}
	}
}

// Put Blob answers the container's, the lease's and the conditions' errors before the
// body's (its checksum, its length), whether the body is small enough to be read before
// those checks are made or streamed after them.
func TestPutErrorOrder(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	leased := Ref{Account: "a", Container: "ccc", Name: "leased"}
	if _, err := s.Put(ctx, leased, PutRequest{Type: BlockBlob, Body: body([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Lease(ctx, leased, LeaseRequest{Action: "acquire", Duration: -1, ProposedID: "0f0f0f0f-0000-0000-0000-000000000000", BreakPeriod: -1}, Cond{}); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{100, inlineMax + 1} {
		data := bytes.Repeat([]byte("z"), size)
		badMD5 := body(data)
		badMD5.MD5 = make([]byte, 16)
		short := body(data)
		short.Size++
		for _, c := range []struct {
			name string
			r    Ref
			cond Cond
			b    Body
			want azerr.Code
		}{
			{"no container, bad MD5", Ref{Account: "a", Container: "none", Name: "b"}, Cond{}, badMD5, azerr.ContainerNotFound},
			{"no container, short body", Ref{Account: "a", Container: "none", Name: "b"}, Cond{}, short, azerr.ContainerNotFound},
			{"leased, bad MD5", leased, Cond{}, badMD5, azerr.LeaseIDMissing},
			{"If-Match fails, short body", Ref{Account: "a", Container: "ccc", Name: "new"}, Cond{IfMatch: `"0x1"`}, short, azerr.ConditionNotMet},
			{"bad MD5", Ref{Account: "a", Container: "ccc", Name: "new"}, Cond{}, badMD5, azerr.MD5Mismatch},
			{"short body", Ref{Account: "a", Container: "ccc", Name: "new"}, Cond{}, short, azerr.InvalidInput},
		} {
			c.b.R = bytes.NewReader(data)
			_, err := s.Put(ctx, c.r, PutRequest{Type: BlockBlob, Body: c.b, Cond: c.cond})
			if !azerr.Is(err, c.want) {
				t.Errorf("%d bytes, %s: %v, want %s", size, c.name, err, c.want)
			}
		}
	}
}
