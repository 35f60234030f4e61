package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/tablo/tablo/internal/store"
)

// testGuardedInsert checks store.GuardedInserter on engines that offer it: the insert lands
// only when the key is absent and the guard holds exactly its value, and an insert that
// reported success is never lost to a concurrent deletion of its guard (it is ordered before
// the deletion, so a scan after the deletion finds it).
func testGuardedInsert(t *testing.T, s store.Store) {
	defer s.Close()
	gi, ok := s.(store.GuardedInserter)
	if !ok {
		t.Skip("engine has no guarded insert")
	}
	insert := func(k, v, gk, gv string) bool {
		t.Helper()
		done, err := gi.InsertIf(ctx, nil, []byte(k), []byte(v), []byte(gk), []byte(gv))
		if err != nil {
			t.Fatal(err)
		}
		return done
	}
	set(t, s, "g", "1")
	for _, c := range []struct {
		k, gk, gv string
		want      bool
	}{
		{"k1", "g", "1", true},
		{"k1", "g", "1", false},  // exists
		{"k2", "g", "2", false},  // guard holds another value
		{"k3", "nog", "", false}, // guard absent
		{"k4", "g", "", false},
	} {
		if got := insert(c.k, "new", c.gk, c.gv); got != c.want {
			t.Errorf("InsertIf(%s, guard %s=%q) = %v, want %v", c.k, c.gk, c.gv, got, c.want)
		}
	}
	if got := scanAll(t, s, []byte("k"), []byte("l")); fmt.Sprint(got) != "[k1=new]" {
		t.Fatalf("after inserts: %v", got)
	}
	set(t, s, "k1", "old")
	if insert("k1", "new", "g", "1") {
		t.Fatal("InsertIf replaced an existing key")
	}
	if v, _ := s.Get(ctx, []byte("k1")); string(v) != "old" {
		t.Fatalf("k1 = %q after a refused insert", v)
	}

	// Inserters race a deletion of their guard, which then scans what landed.
	for round := range 10 {
		guard := fmt.Sprintf("guard%02d", round)
		prefix := fmt.Sprintf("r%02d/", round)
		set(t, s, guard, "live")
		var mu sync.Mutex
		var acked []string
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
					k := fmt.Sprintf("%s%d-%04d", prefix, w, i)
					done, err := gi.InsertIf(ctx, nil, []byte(k), []byte("v"), []byte(guard), []byte("live"))
					if err != nil {
						t.Error(err)
						return
					}
					if !done {
						return // the guard is gone: so is every later attempt's
					}
					mu.Lock()
					acked = append(acked, k)
					mu.Unlock()
				}
			})
		}
		err := s.Update(ctx, nil, func(tx store.Txn) error {
			if _, err := tx.Get([]byte(guard)); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			return tx.Delete([]byte(guard))
		})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, kv := range scanAll(t, s, []byte(prefix), []byte(prefix+"\xff")) {
			seen[kv[:len(kv)-2]] = true
		}
		close(stop)
		wg.Wait()
		mu.Lock()
		for _, k := range acked {
			if !seen[k] {
				t.Fatalf("round %d: insert of %s succeeded but is missing from a scan after its guard's deletion", round, k)
			}
		}
		mu.Unlock()
	}
}

// testScanKeys: store.ScanKeys visits exactly the keys Scan visits, in order, bounded and
// stoppable like Scan.
func testScanKeys(t *testing.T, s store.Store) {
	defer s.Close()
	err := s.Update(ctx, nil, func(tx store.Txn) error {
		for i := range 300 {
			if err := tx.Set(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "value %d", i)); err != nil {
				return err
			}
		}
		return tx.Set([]byte("l"), []byte("after"))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		start, end string
		stop       int
	}{{"k", "l", 0}, {"k100", "k2", 0}, {"k", "", 0}, {"k", "l", 7}} {
		var end []byte
		if c.end != "" {
			end = []byte(c.end)
		}
		var want, got []string
		err := s.Scan(ctx, []byte(c.start), end, func(k, _ []byte) (bool, error) {
			want = append(want, string(k))
			return c.stop == 0 || len(want) < c.stop, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = store.ScanKeys(ctx, s, []byte(c.start), end, func(k []byte) (bool, error) {
			got = append(got, string(k))
			return c.stop == 0 || len(got) < c.stop, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("ScanKeys(%q, %q) = %d keys %v…, Scan saw %d", c.start, c.end, len(got), got[:min(3, len(got))], len(want))
		}
	}
}
