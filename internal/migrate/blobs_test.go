package migrate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/blob"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/store/postgres"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
	"github.com/tablo/tablo/internal/store/storetest"
)

// accounts the blob tests write to: every account's data is migrated.
var accounts = []string{"devstoreaccount1", "second"}

func random(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func bodyOf(b []byte) blob.Body { return blob.Body{R: bytes.NewReader(b), Size: int64(len(b))} }

func blockID(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// openPebbleBlobs opens the Blob service over a Pebble directory, without a background sweep.
func openPebbleBlobs(t *testing.T, dir string) (*blob.Service, store.Store) {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return blob.New(db, blob.Options{SweepInterval: -1}), db
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// fillBlobs writes, through the Blob service, each kind of blob data into a Pebble
// directory: block blobs of several MiB in several blocks, a snapshot sharing blocks with
// its base, a copy, uncommitted blocks (on a committed blob and on one that has none),
// a single-shot blob, an append blob, a page blob with cleared pages, small inline blobs,
// in two accounts. Garbage made first (an overwritten blob, dropped blocks) leaves extents no
// record names, so source and destination ids differ.
func fillBlobs(t *testing.T, dir string) {
	t.Helper()
	s, db := openPebbleBlobs(t, dir)
	defer db.Close()
	defer s.Close()
	for ai, acct := range accounts {
		ref := func(c, name string) blob.Ref { return blob.Ref{Account: acct, Container: c, Name: name} }
		for _, c := range []string{"data", "more"} {
			if _, err := s.CreateContainer(ctx, acct, c, "", blob.Meta{{"owner", acct}}); err != nil {
				t.Fatal(err)
			}
		}
		seed := uint64(ai * 100)
		put := func(r blob.Ref, b []byte, p blob.PutRequest) {
			t.Helper()
			if p.Type == "" {
				p.Type = blob.BlockBlob
			}
			p.Body = bodyOf(b)
			if _, err := s.Put(ctx, r, p); err != nil {
				t.Fatal(err)
			}
		}
		stage := func(r blob.Ref, id string, b []byte) {
			t.Helper()
			if _, err := s.PutBlock(ctx, r, blockID(id), bodyOf(b), blob.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		commit := func(r blob.Ref, ids ...string) {
			t.Helper()
			var list []blob.BlockRef
			for _, id := range ids {
				list = append(list, blob.BlockRef{ID: blockID(id), Where: "Latest"})
			}
			if _, err := s.PutBlockList(ctx, r, list, blob.PutRequest{Props: blob.Props{ContentType: "application/x-test"}, Meta: blob.Meta{{"n", strconv.Itoa(len(ids))}}}); err != nil {
				t.Fatal(err)
			}
		}
		// Garbage first.
		put(ref("data", "churn"), random(200<<10, seed+1), blob.PutRequest{})
		put(ref("data", "churn"), random(150<<10, seed+2), blob.PutRequest{})
		stage(ref("data", "dropped"), "x", random(100<<10, seed+3))
		put(ref("data", "dropped"), []byte("replaced"), blob.PutRequest{})
		// A block blob of several MiB, its snapshot, then a new version sharing two blocks.
		big := ref("data", "big")
		stage(big, "b0", random(2<<20, seed+4))
		stage(big, "b1", random(1<<20+123, seed+5))
		stage(big, "b2", random(3<<20, seed+6))
		commit(big, "b0", "b1", "b2")
		must[*blob.Blob](t)(func() (*blob.Blob, error) {
			b, _, err := s.Snapshot(ctx, big, blob.Meta{{"snap", "1"}}, true, blob.Cond{})
			return b, err
		}())
		stage(big, "b3", random(1<<20, seed+7))
		commit(big, "b2", "b0", "b3")
		stage(big, "pending", random(300<<10, seed+8)) // uncommitted on a committed blob
		must[*blob.Blob](t)(s.Copy(ctx, ref("more", "copy-of-big"), blob.CopyRequest{Source: big, SourceURL: "http://x/data/big", CopyID: "cid"}))
		// Only uncommitted blocks.
		stage(ref("data", "staged-only"), "s0", random(500<<10, seed+9))
		stage(ref("data", "staged-only"), "s1", random(70<<10, seed+10))
		// Single shot, append, page, inline.
		put(ref("data", "single"), random(3<<20+5, seed+11), blob.PutRequest{Props: blob.Props{ContentType: "text/plain", CacheControl: "no-cache"}, Meta: blob.Meta{{"k", "v"}}})
		put(ref("data", "log"), nil, blob.PutRequest{Type: blob.AppendBlob})
		for i := range 3 {
			if _, err := s.AppendBlock(ctx, ref("data", "log"), blob.AppendRequest{Body: bodyOf(random(100<<10+i, seed+12+uint64(i))), AppendPos: -1, MaxSize: -1}); err != nil {
				t.Fatal(err)
			}
		}
		put(ref("more", "disk"), nil, blob.PutRequest{Type: blob.PageBlob, PageSize: 1 << 20})
		for _, p := range [][2]int64{{0, 64 << 10}, {128 << 10, 64 << 10}} {
			b := bodyOf(random(int(p[1]), seed+20+uint64(p[0])))
			if _, err := s.PutPage(ctx, ref("more", "disk"), p[0], p[1], &b, blob.Cond{}, blob.NoSeqCond); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.PutPage(ctx, ref("more", "disk"), 16<<10, 16<<10, nil, blob.Cond{}, blob.NoSeqCond); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			put(ref("more", fmt.Sprintf("small-%d", i)), random(1000*i, seed+30+uint64(i)), blob.PutRequest{Meta: blob.Meta{{"i", strconv.Itoa(i)}}})
		}
	}
}

// dumpBlobs describes, through the Blob service, every container and blob (snapshots and
// uncommitted blocks too) of st: properties, ETags, block lists, page ranges and a hash of
// the bytes read back.
func dumpBlobs(t *testing.T, st store.Store) string {
	t.Helper()
	s := blob.New(st, blob.Options{SweepInterval: -1})
	defer s.Close()
	var out strings.Builder
	for _, acct := range accounts {
		cs, _, err := s.ListContainers(ctx, acct, "", "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			fmt.Fprintf(&out, "container %s/%s etag=%s meta=%v\n", acct, c.Name, c.ETag(), c.Meta)
			items, _, err := s.List(ctx, acct, c.Name, blob.ListRequest{Snapshots: true, Uncommitted: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				b := it.Blob
				fmt.Fprintf(&out, "  %s@%d %s size=%d etag=%s created=%d props=%+v meta=%v copy=%+v appends=%d\n",
					b.Name, b.Snapshot, b.Type, b.Size, b.ETag(), b.Created, b.Props, b.Meta, b.Copy, b.Appends)
				rc := s.Open(ctx, b, 0, b.Size)
				h := sha256.New()
				n, err := io.Copy(h, rc)
				rc.Close()
				if err != nil || n != b.Size {
					t.Fatalf("read %s/%s/%s@%d: %d of %d bytes: %v", acct, c.Name, b.Name, b.Snapshot, n, b.Size, err)
				}
				fmt.Fprintf(&out, "    sha256=%x\n", h.Sum(nil))
				r := blob.Ref{Account: acct, Container: c.Name, Name: b.Name, Snapshot: b.Snapshot}
				switch b.Type {
				case blob.BlockBlob:
					_, committed, uncommitted, err := s.GetBlockList(ctx, r, blob.Cond{})
					if err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&out, "    committed=%v uncommitted=%v\n", committed, uncommitted)
				case blob.PageBlob:
					fmt.Fprintf(&out, "    pages=%v\n", blob.PageRanges(b, 0, -1))
				}
			}
		}
	}
	return out.String()
}

func dumpPebble(t *testing.T, dir string) string {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return dumpBlobs(t, db)
}

func dumpPostgres(t *testing.T, url string) string {
	t.Helper()
	db, err := postgres.Open(ctx, postgres.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return dumpBlobs(t, db)
}

// referenced counts the extents a source's records name, and their bytes.
func referenced(t *testing.T, dir string) (n, size, all int64) {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sizes := map[uint64]int64{}
	if err := db.Extents().ListExtents(ctx, func(id uint64, sz int64) error { sizes[id] = sz; all++; return nil }); err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	err = db.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) {
		_, _, err := blob.RewriteExtents(k, v, func(id uint64, _ int64) (uint64, error) {
			if !seen[id] {
				seen[id] = true
				n++
				size += sizes[id]
			}
			return id, nil
		})
		return true, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, size, all
}

// Blob data of every kind is copied with its extents, Pebble to Pebble and (with
// PostgreSQL) Pebble → PostgreSQL → Pebble, and reads back identical through the Blob
// service at each stop: bytes, ETags, properties, block lists, page ranges.
func TestBlobsMigrate(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	fillBlobs(t, src)
	want := dumpPebble(t, src)
	if n := strings.Count(want, "sha256="); n != 24 {
		t.Fatalf("the source dump shows %d blobs, want 24:\n%s", n, want)
	}
	nExt, extBytes, all := referenced(t, src)
	if all <= nExt {
		t.Fatalf("the source holds %d extents, %d of them referenced: the fill made no garbage", all, nExt)
	}
	check := func(from, to string, dump func(*testing.T, string) string) {
		t.Helper()
		var out bytes.Buffer
		res, err := Run(ctx, Options{From: from, To: to, Progress: &out})
		if err != nil {
			t.Fatalf("migrate %s -> %s: %v\n%s", from, to, err, out.String())
		}
		if res.Extents != nExt || res.ExtentBytes != extBytes || res.Blobs == 0 || res.Blocks != int64(3*len(accounts)) {
			t.Errorf("result %+v, want %d extents of %d bytes (garbage left behind) and %d uncommitted blocks", res, nExt, extBytes, 3*len(accounts))
		}
		if !strings.Contains(out.String(), fmt.Sprintf("%d blob extents (%d bytes), every extent read back", nExt, extBytes)) {
			t.Errorf("no blob verification line:\n%s", out.String())
		}
		if got := dump(t, to); got != want {
			t.Fatalf("%s reads differently after the migration:\n--- source\n%s\n--- %s\n%s", to, want, to, got)
		}
	}
	dst := filepath.Join(t.TempDir(), "dst")
	check(src, dst, dumpPebble)
	if os.Getenv(pgtest.Env) == "" && os.Getenv(pgtest.RequireEnv) == "" {
		t.Log("Pebble -> PostgreSQL -> Pebble not run: " + pgtest.Env + " is not set")
		return
	}
	url := pgtest.URL(t)
	check(src, url, dumpPostgres)
	back := filepath.Join(t.TempDir(), "back")
	check(url, back, dumpPebble)
}

// fillForFailure writes extent-bearing and inline blobs, enough that the copy has written
// to the destination (keys and extents) before it reaches "zz", the last blob, and returns
// the id of zz's extent.
func fillForFailure(t *testing.T, dir string) uint64 {
	t.Helper()
	s, db := openPebbleBlobs(t, dir)
	defer db.Close()
	defer s.Close()
	if _, err := s.CreateContainer(ctx, "acct", "box", "", nil); err != nil {
		t.Fatal(err)
	}
	put := func(name string, b []byte) *blob.Blob {
		t.Helper()
		return must[*blob.Blob](t)(s.Put(ctx, blob.Ref{Account: "acct", Container: "box", Name: name}, blob.PutRequest{Type: blob.BlockBlob, Body: bodyOf(b)}))
	}
	put("00-big", random(300<<10, 1))
	for i := range 1200 {
		put(fmt.Sprintf("a%04d", i), []byte("x"))
	}
	put("zz", random(200<<10, 2))
	var last uint64
	if err := db.Extents().ListExtents(ctx, func(id uint64, _ int64) error { last = id; return nil }); err != nil {
		t.Fatal(err)
	}
	return last
}

// assertEmpty checks that a failed migration left nothing in a Pebble destination.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := checkEmpty(ctx, db); err != nil {
		t.Errorf("after a failed migration the destination %v", err)
	}
	if err := Unfinished(ctx, db); err != nil {
		t.Errorf("after a failed migration: %v", err)
	}
}

// A blob whose extent the source lost fails the migration with a message naming the blob,
// and the destination is left empty, not holding the data up to the failure.
func TestBlobsMissingExtentFails(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	id := fillForFailure(t, src)
	if err := os.Remove(filepath.Join(src, "extents", strconv.FormatUint(id, 10))); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	var out bytes.Buffer
	_, err := Run(ctx, Options{From: src, To: dst, Progress: &out})
	if err == nil || !strings.Contains(err.Error(), `blob "zz"`) || !strings.Contains(err.Error(), "does not hold") ||
		!strings.Contains(err.Error(), "nothing was migrated") {
		t.Fatalf("migrate with a missing extent: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "verified") {
		t.Errorf("a failed migration printed a verification:\n%s", out.String())
	}
	assertEmpty(t, dst)
}

// A blob whose extent is shorter than its record says fails the same way.
func TestBlobsTruncatedExtentFails(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	id := fillForFailure(t, src)
	if err := os.Truncate(filepath.Join(src, "extents", strconv.FormatUint(id, 10)), 1000); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	_, err := Run(ctx, Options{From: src, To: dst})
	if err == nil || !strings.Contains(err.Error(), `blob "zz"`) || !strings.Contains(err.Error(), "holds 1000 bytes") {
		t.Fatalf("migrate with a truncated extent: %v", err)
	}
	assertEmpty(t, dst)
}

// A destination a migration left unfinished is refused by the next one and reported by
// Unfinished (which Tablo checks at start).
func TestUnfinishedDestination(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	db, err := pebblestore.Open(pebblestore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := Unfinished(ctx, db); err != nil {
		t.Fatalf("an empty store: %v", err)
	}
	if err := db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set(unfinishedKey, nil) }); err != nil {
		t.Fatal(err)
	}
	if err := Unfinished(ctx, db); err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Fatalf("a marked store: %v", err)
	}
	db.Close()
	src := filepath.Join(t.TempDir(), "s")
	fill(t, src, 3)
	if _, err := Run(ctx, Options{From: src, To: dir}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("into an unfinished destination: %v", err)
	}
}

// cancelOnWrite cancels a context at the first progress line after the header.
type cancelOnWrite struct {
	cancel func()
	lines  int
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	if w.lines++; w.lines == 2 {
		w.cancel()
	}
	return len(p), nil
}

// A migration interrupted half way (here its context is cancelled, as by Ctrl-C; a kill
// leaves the same) cannot empty the destination again: it stays marked unfinished, and
// Unfinished, which Tablo checks at start, says so.
func TestBlobsInterruptedLeavesMark(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	fillForFailure(t, src)
	dst := filepath.Join(t.TempDir(), "dst")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err := Run(cctx, Options{From: src, To: dst, Progress: &cancelOnWrite{cancel: cancel}, ProgressEvery: time.Nanosecond})
	if err == nil || !strings.Contains(err.Error(), "marked unfinished") {
		t.Fatalf("interrupted migration: %v", err)
	}
	db, err := pebblestore.Open(pebblestore.Options{Dir: dst})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := Unfinished(ctx, db); err == nil {
		t.Fatal("an interrupted destination is not reported unfinished")
	}
}

// A destination holding blob data but no keys is not empty either.
func TestRefusesDestinationWithExtents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	db, err := pebblestore.Open(pebblestore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	storetest.PutExtent(t, db.Extents(), []byte("bulk"))
	db.Close()
	src := filepath.Join(t.TempDir(), "s")
	fill(t, src, 3)
	if _, err := Run(ctx, Options{From: src, To: dir}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("into a destination holding an extent: %v", err)
	}
}
