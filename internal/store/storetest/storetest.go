// Package storetest is the conformance suite every store.Store engine must pass. It uses a
// sorted map as the oracle. Engines call Run from their own tests.
package storetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/tablo/tablo/internal/store"
)

// Opener opens a fresh, empty engine for one test.
type Opener func(t *testing.T) store.Store

// Run runs every conformance test against engines made by open.
func Run(t *testing.T, open Opener) {
	t.Run("GetSetDelete", func(t *testing.T) { testGetSetDelete(t, open(t)) })
	t.Run("ScanOrderAndBounds", func(t *testing.T) { testScan(t, open(t)) })
	t.Run("UpdateAtomic", func(t *testing.T) { testAtomic(t, open(t)) })
	t.Run("ReadOwnWrites", func(t *testing.T) { testReadOwnWrites(t, open(t)) })
	t.Run("TxnLookup", func(t *testing.T) { testTxnLookup(t, open(t)) })
	t.Run("DeleteRange", func(t *testing.T) { testDeleteRange(t, open(t)) })
	t.Run("LockedCounters", func(t *testing.T) { testLockedCounters(t, open(t)) })
	t.Run("RandomOracle", func(t *testing.T) { testRandomOracle(t, open(t)) })
	t.Run("Close", func(t *testing.T) { testClose(t, open(t)) })
	t.Run("SnapshotIsolation", func(t *testing.T) { testSnapshotIsolation(t, open(t)) })
	t.Run("TxnSnapshot", func(t *testing.T) { testTxnSnapshot(t, open(t)) })
	t.Run("CloseWaitsForSnapshots", func(t *testing.T) { testCloseWaitsForSnapshots(t, open(t)) })
	t.Run("Extents", func(t *testing.T) { testExtents(t, open(t)) })
	t.Run("ScanKeys", func(t *testing.T) { testScanKeys(t, open(t)) })
	t.Run("GuardedInsert", func(t *testing.T) { testGuardedInsert(t, open(t)) })
	t.Run("GuardedWrite", func(t *testing.T) { testGuardedWrite(t, open(t)) })
	t.Run("ScanLimit", func(t *testing.T) { testScanLimit(t, open(t)) })
}

var ctx = context.Background()

func set(t *testing.T, s store.Store, k, v string) {
	t.Helper()
	err := s.Update(ctx, []store.Lock{{Name: k}}, func(tx store.Txn) error { return tx.Set([]byte(k), []byte(v)) })
	if err != nil {
		t.Fatal(err)
	}
}

func scanAll(t *testing.T, s store.Store, start, end []byte) []string {
	t.Helper()
	var out []string
	err := s.Scan(ctx, start, end, func(k, v []byte) (bool, error) {
		out = append(out, string(k)+"="+string(v))
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testGetSetDelete(t *testing.T, s store.Store) {
	defer s.Close()
	if _, err := s.Get(ctx, []byte("a")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}
	set(t, s, "a", "1")
	v, err := s.Get(ctx, []byte("a"))
	if err != nil || string(v) != "1" {
		t.Fatalf("get: %q %v", v, err)
	}
	v[0] = 'x' // caller owns the copy
	if v2, _ := s.Get(ctx, []byte("a")); string(v2) != "1" {
		t.Fatal("Get must return a copy")
	}
	err = s.Update(ctx, nil, func(tx store.Txn) error { return tx.Delete([]byte("a")) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, []byte("a")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted key: %v", err)
	}
}

func testScan(t *testing.T, s store.Store) {
	defer s.Close()
	for _, k := range []string{"b", "a", "c\x00", "c", "\xff", "ab"} {
		set(t, s, k, "v"+k)
	}
	got := scanAll(t, s, nil, nil)
	want := []string{"a=va", "ab=vab", "b=vb", "c=vc", "c\x00=vc\x00", "\xff=v\xff"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("full scan %q, want %q", got, want)
	}
	if got := scanAll(t, s, []byte("ab"), []byte("c\x00")); fmt.Sprint(got) != "[ab=vab b=vb c=vc]" {
		t.Fatalf("bounded scan %q", got)
	}
	n := 0
	err := s.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) { n++; return n < 2, nil })
	if err != nil || n != 2 {
		t.Fatalf("early stop: n=%d err=%v", n, err)
	}
	boom := errors.New("boom")
	if err := s.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) { return true, boom }); !errors.Is(err, boom) {
		t.Fatalf("callback error: %v", err)
	}
}

func testAtomic(t *testing.T, s store.Store) {
	defer s.Close()
	set(t, s, "keep", "1")
	boom := errors.New("boom")
	err := s.Update(ctx, nil, func(tx store.Txn) error {
		for i := range 50 {
			if err := tx.Set(fmt.Appendf(nil, "k%02d", i), []byte("x")); err != nil {
				return err
			}
		}
		if err := tx.Delete([]byte("keep")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update error: %v", err)
	}
	if got := scanAll(t, s, nil, nil); fmt.Sprint(got) != "[keep=1]" {
		t.Fatalf("failed Update left writes: %q", got)
	}
}

func testReadOwnWrites(t *testing.T, s store.Store) {
	defer s.Close()
	set(t, s, "a", "1")
	err := s.Update(ctx, nil, func(tx store.Txn) error {
		if v, err := tx.Get([]byte("a")); err != nil || string(v) != "1" {
			return fmt.Errorf("committed read: %q %v", v, err)
		}
		if err := tx.Set([]byte("a"), []byte("2")); err != nil {
			return err
		}
		if v, err := tx.Get([]byte("a")); err != nil || string(v) != "2" {
			return fmt.Errorf("own write: %q %v", v, err)
		}
		if err := tx.Delete([]byte("a")); err != nil {
			return err
		}
		if _, err := tx.Get([]byte("a")); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("own delete: %v", err)
		}
		return tx.Set([]byte("b"), []byte("3"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := scanAll(t, s, nil, nil); fmt.Sprint(got) != "[b=3]" {
		t.Fatalf("after txn: %q", got)
	}
}

func testDeleteRange(t *testing.T, s store.Store) {
	defer s.Close()
	for _, k := range []string{"a", "b1", "b2", "b3", "c"} {
		set(t, s, k, "v")
	}
	err := s.Update(ctx, nil, func(tx store.Txn) error { return tx.DeleteRange([]byte("b"), []byte("c")) })
	if err != nil {
		t.Fatal(err)
	}
	if got := scanAll(t, s, nil, nil); fmt.Sprint(got) != "[a=v c=v]" {
		t.Fatalf("after DeleteRange: %q", got)
	}
	set(t, s, "b2", "new") // writes after a range delete are visible
	if got := scanAll(t, s, nil, nil); fmt.Sprint(got) != "[a=v b2=new c=v]" {
		t.Fatalf("after rewrite: %q", got)
	}
}

// testLockedCounters checks that read-modify-write under a lock loses no update, and that a
// shared lock taken together with an exclusive one works.
func testLockedCounters(t *testing.T, s store.Store) {
	defer s.Close()
	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []byte{'c', byte('0' + w%2)}
			locks := []store.Lock{{Name: "table", Shared: true}, {Name: string(key)}}
			for range rounds {
				err := s.Update(ctx, locks, func(tx store.Txn) error {
					var n uint64
					if v, err := tx.Get(key); err == nil {
						n = binary.BigEndian.Uint64(v)
					} else if !errors.Is(err, store.ErrNotFound) {
						return err
					}
					return tx.Set(key, binary.BigEndian.AppendUint64(nil, n+1))
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, k := range []string{"c0", "c1"} {
		v, err := s.Get(ctx, []byte(k))
		if err != nil || binary.BigEndian.Uint64(v) != workers/2*rounds {
			t.Fatalf("%s = %x (%v), want %d", k, v, err, workers/2*rounds)
		}
	}
}

func testRandomOracle(t *testing.T, s store.Store) {
	defer s.Close()
	r := rand.New(rand.NewPCG(9, 9))
	oracle := map[string]string{}
	key := func() []byte { return []byte{byte('a' + r.IntN(6)), byte(r.IntN(3))} }
	for i := range 300 {
		k, v := key(), fmt.Sprint(i)
		switch r.IntN(4) {
		case 0:
			if err := s.Update(ctx, nil, func(tx store.Txn) error { return tx.Delete(k) }); err != nil {
				t.Fatal(err)
			}
			delete(oracle, string(k))
		case 1:
			lo, hi := key(), key()
			if bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			if err := s.Update(ctx, nil, func(tx store.Txn) error { return tx.DeleteRange(lo, hi) }); err != nil {
				t.Fatal(err)
			}
			for ok := range oracle {
				if ok >= string(lo) && ok < string(hi) {
					delete(oracle, ok)
				}
			}
		default:
			set(t, s, string(k), v)
			oracle[string(k)] = v
		}
	}
	var want []string
	for k, v := range oracle {
		want = append(want, k+"="+v)
	}
	sort.Strings(want)
	if got := scanAll(t, s, nil, nil); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("engine %q\noracle %q", got, want)
	}
}

func testClose(t *testing.T, s store.Store) {
	set(t, s, "a", "1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Get(ctx, []byte("a")); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	err := s.Update(ctx, nil, func(tx store.Txn) error { return nil })
	if !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Update after Close: %v", err)
	}
}

// testTxnLookup checks Lookup against an oracle while one Txn mixes lookups of one or several
// keys with its own writes, on keys that are prefixes of one another (a lookup of "a" must
// not find "ab"). Keys out of order are an error.
func testTxnLookup(t *testing.T, s store.Store) {
	defer s.Close()
	names := []string{"a", "ab", "abc", "b", "ba", "c", "c\x00", "d"}
	oracle := map[string]string{}
	rng := rand.New(rand.NewPCG(7, 7))
	for _, k := range names {
		if rng.IntN(2) == 0 {
			set(t, s, k, "committed-"+k)
			oracle[k] = "committed-" + k
		}
	}
	err := s.Update(ctx, nil, func(tx store.Txn) error {
		for step := range 2000 {
			k := names[rng.IntN(len(names))]
			switch op := rng.IntN(10); {
			case op < 5:
				// An ascending subset of names: sometimes one key, sometimes several.
				var ks [][]byte
				for _, n := range names {
					if rng.IntN(3) == 0 {
						ks = append(ks, []byte(n))
					}
				}
				seen := 0
				expect := store.Expect(rng.IntN(2)) // the answers must not depend on it
				err := tx.Lookup(ks, expect, func(i int, v []byte, found bool) error {
					if i != seen {
						return fmt.Errorf("step %d: Lookup called back for key %d, want %d", step, i, seen)
					}
					seen++
					want, ok := oracle[string(ks[i])]
					if found != ok || string(v) != want {
						return fmt.Errorf("step %d: Lookup(%q) = %q, %v; want %q, %v", step, ks[i], v, found, want, ok)
					}
					return nil
				})
				if err != nil {
					return err
				}
				if seen != len(ks) {
					return fmt.Errorf("step %d: Lookup answered %d of %d keys", step, seen, len(ks))
				}
			case op < 7:
				v := fmt.Sprintf("v%d", step)
				if err := tx.Set([]byte(k), []byte(v)); err != nil {
					return err
				}
				oracle[k] = v
			case op < 9:
				if err := tx.Delete([]byte(k)); err != nil {
					return err
				}
				delete(oracle, k)
			default:
				hi := names[rng.IntN(len(names))]
				if hi <= k {
					continue
				}
				if err := tx.DeleteRange([]byte(k), []byte(hi)); err != nil {
					return err
				}
				for n := range oracle {
					if n >= k && n < hi {
						delete(oracle, n)
					}
				}
			}
		}
		bad := [][]byte{[]byte("b"), []byte("a")}
		if err := tx.Lookup(bad, store.ExpectPresent, func(int, []byte, bool) error { return nil }); err == nil {
			return errors.New("lookup accepted keys out of order")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range names {
		v, err := s.Get(ctx, []byte(k))
		want, ok := oracle[k]
		if ok != (err == nil) || (ok && string(v) != want) {
			t.Fatalf("after commit: Get(%q) = %q, %v; want %q (present %v)", k, v, err, want, ok)
		}
	}
}
