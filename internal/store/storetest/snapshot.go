package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/store"
)

// testSnapshotIsolation: a snapshot sees exactly the data committed before it was taken,
// through Scan and Lookup, whatever is written or deleted afterwards.
func testSnapshotIsolation(t *testing.T, s store.Store) {
	defer s.Close()
	for i := range 10 {
		set(t, s, fmt.Sprintf("k%02d", i), "old")
	}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	set(t, s, "k03", "new")
	set(t, s, "k10", "new")
	err = s.Update(ctx, nil, func(tx store.Txn) error { return tx.DeleteRange([]byte("k05"), []byte("k08")) })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = snap.Scan(ctx, []byte("k02"), []byte("k09"), func(k, v []byte) (bool, error) {
		got = append(got, string(k)+"="+string(v))
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "[k02=old k03=old k04=old k05=old k06=old k07=old k08=old]"
	if fmt.Sprint(got) != want {
		t.Fatalf("snapshot scan = %v, want %s", got, want)
	}
	// Ascending lookups, present and missing keys interleaved, then a backward one.
	for _, c := range []struct{ key, want string }{
		{"k00", "old"}, {"k03", "old"}, {"k03a", ""}, {"k06", "old"}, {"k10", ""}, {"k09", "old"}, {"k01", "old"},
	} {
		v, err := snap.Lookup([]byte(c.key))
		switch {
		case c.want == "" && !errors.Is(err, store.ErrNotFound):
			t.Fatalf("Lookup(%s) = %q, %v; want ErrNotFound", c.key, v, err)
		case c.want != "" && (err != nil || string(v) != c.want):
			t.Fatalf("Lookup(%s) = %q, %v; want %q", c.key, v, err, c.want)
		}
	}
	// The live store sees the new data.
	if fmt.Sprint(scanAll(t, s, []byte("k02"), []byte("k09"))) != "[k02=old k03=new k04=old k08=old]" {
		t.Fatalf("live scan = %v", scanAll(t, s, []byte("k02"), []byte("k09")))
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if err := snap.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// testTxnSnapshot: a snapshot taken inside an Update excludes the Update's own writes and
// includes everything committed before; holding the Update's lock, no conflicting writer
// straddles it.
func testTxnSnapshot(t *testing.T, s store.Store) {
	defer s.Close()
	set(t, s, "a", "1")
	var snap store.Snapshot
	err := s.Update(ctx, []store.Lock{{Name: "L"}}, func(tx store.Txn) error {
		if err := tx.Set([]byte("b"), []byte("own")); err != nil {
			return err
		}
		var err error
		snap, err = tx.Snapshot()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if v, err := snap.Lookup([]byte("a")); err != nil || string(v) != "1" {
		t.Fatalf("Lookup(a) = %q, %v", v, err)
	}
	if _, err := snap.Lookup([]byte("b")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the Update's own write is in its snapshot: %v", err)
	}

	// Writers under lock L shared, a snapshot under L exclusive: the snapshot holds either
	// all or none of each writer's pair of keys.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("w%d-%04d", w, i)
				err := s.Update(ctx, []store.Lock{{Name: "L", Shared: true}}, func(tx store.Txn) error {
					if err := tx.Set([]byte(k+"a"), nil); err != nil {
						return err
					}
					return tx.Set([]byte(k+"b"), nil)
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 20 {
		var snap store.Snapshot
		err := s.Update(ctx, []store.Lock{{Name: "L"}}, func(tx store.Txn) error {
			var err error
			snap, err = tx.Snapshot()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		err = snap.Scan(ctx, []byte("w"), []byte("x"), func(k, v []byte) (bool, error) {
			n++
			return true, nil
		})
		snap.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n%2 != 0 {
			t.Fatalf("snapshot under the exclusive lock holds half a write (%d keys)", n)
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
}

// testCloseWaitsForSnapshots: Close waits until open snapshots are closed.
func testCloseWaitsForSnapshots(t *testing.T, s store.Store) {
	set(t, s, "a", "1")
	snap, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	time.Sleep(20 * time.Millisecond)
	// Close has not finished: the snapshot still reads.
	if v, err := snap.Lookup([]byte("a")); err != nil || string(v) != "1" {
		t.Fatalf("Lookup during Close = %q, %v", v, err)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) with a snapshot open", err)
	default:
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snapshot(ctx); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Snapshot after Close: %v", err)
	}
}
