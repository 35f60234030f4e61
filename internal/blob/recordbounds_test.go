package blob

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// The cache of decoded records is bounded: it never holds more than maxEntries records,
// keeps a record of exactly maxRecord bytes (from a read or a write) and none longer, and
// answers a read of a record it cannot decode with the error, caching nothing.
func TestRecordCacheBounds(t *testing.T) {
	rc := &recordCache[Container]{maxEntries: 3, maxRecord: 64, decode: newContainerCache().decode}
	rec := func(name string, size int) []byte {
		c := &Container{Name: name}
		b := encodeRecord(c, nil)
		if len(b) > size {
			t.Fatalf("record of %d bytes wanted, %d made", size, len(b))
		}
		c.Name += string(bytes.Repeat([]byte("n"), size-len(b)))
		return encodeRecord(c, nil)
	}
	for i := range 10 {
		k := []byte(fmt.Sprint("k", i))
		if _, err := rc.get(k, rec("c", 40)); err != nil {
			t.Fatal(err)
		}
		if len(rc.m) > rc.maxEntries {
			t.Fatalf("%d entries after %d reads, bound %d", len(rc.m), i+1, rc.maxEntries)
		}
		if _, ok := rc.m[string(k)]; !ok {
			t.Fatalf("read %d not cached", i)
		}
		c := &Container{Name: "p"}
		rc.put([]byte(fmt.Sprint("p", i)), encodeRecord(c, nil), c)
		if len(rc.m) > rc.maxEntries {
			t.Fatalf("%d entries after %d writes, bound %d", len(rc.m), i+1, rc.maxEntries)
		}
	}
	// below the bound every record read or written stays
	rc.m = nil
	for i := range rc.maxEntries {
		if _, err := rc.get([]byte(fmt.Sprint("k", i)), rec("c", 40)); err != nil {
			t.Fatal(err)
		}
	}
	if len(rc.m) != rc.maxEntries {
		t.Errorf("%d of %d records read kept", len(rc.m), rc.maxEntries)
	}
	rc.m = nil
	for i := range rc.maxEntries {
		c := &Container{Name: "p"}
		rc.put([]byte(fmt.Sprint("p", i)), encodeRecord(c, nil), c)
	}
	if len(rc.m) != rc.maxEntries {
		t.Errorf("%d of %d records written kept", len(rc.m), rc.maxEntries)
	}
	for _, c := range []struct {
		size int
		kept bool
	}{{64, true}, {65, false}} {
		rc.m = nil
		raw := rec("c", c.size)
		if _, err := rc.get([]byte("exact"), raw); err != nil {
			t.Fatal(err)
		}
		if _, ok := rc.m["exact"]; ok != c.kept {
			t.Errorf("read of a record of %d bytes (bound 64): cached %v", c.size, ok)
		}
		rc.m = nil
		v, _ := rc.decode(raw)
		rc.put([]byte("exact"), raw, v)
		if _, ok := rc.m["exact"]; ok != c.kept {
			t.Errorf("write of a record of %d bytes (bound 64): cached %v", c.size, ok)
		}
	}
	rc.m = nil
	if got, err := rc.get([]byte("bad"), []byte{0, 0, 0, 9, '{'}); err == nil || got != nil || len(rc.m) != 0 {
		t.Errorf("undecodable record: %v %v, %d cached", got, err, len(rc.m))
	}
}

// A stored record that does not decode is an error for the request that reads it, never a
// panic, for a container and for a blob.
func TestCorruptRecordsAreErrors(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	c, err := s.CreateContainer(ctx, "a", "ccc", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := []byte{0, 0, 0, 9, '{'}
	if err := setRaw(ctx, s, keys.Blob(c.ID, "b", 0), corrupt); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, Ref{Account: "a", Container: "ccc", Name: "b"}, Cond{}); err == nil {
		t.Error("Get of a corrupt blob record succeeded")
	}
	if err := setRaw(ctx, s, keys.BlobCatalog("a", "bad"), corrupt); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetContainer(ctx, "a", "bad"); err == nil {
		t.Error("a corrupt container record read")
	}
}

func setRaw(ctx context.Context, s *Service, k, v []byte) error {
	return s.st.Update(ctx, nil, func(tx store.Txn) error { return tx.Set(k, v) })
}
