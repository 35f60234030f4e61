package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/tablo/tablo/internal/store"
)

// testGuardedInsert checks store.GuardedInserter on engines that offer it: the insert lands
// only when the key is absent and the guard holds exactly its value, one of several racing
// inserts of a key lands and the others report not inserted, and an insert that
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

	// Inserters of one key race each other: exactly one reports the insert, none fails, and
	// the key holds the winner's value.
	for round := range 20 {
		k := fmt.Sprintf("same%02d", round)
		var mu sync.Mutex
		var won []string
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range 6 {
			wg.Go(func() {
				<-start
				v := fmt.Sprint(w)
				done, err := gi.InsertIf(ctx, nil, []byte(k), []byte(v), []byte("g"), []byte("1"))
				if err != nil {
					t.Error(err)
					return
				}
				if done {
					mu.Lock()
					won = append(won, v)
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("round %d: %d racing inserts of one key reported success %v, want 1", round, len(won), won)
		}
		if v, err := s.Get(ctx, []byte(k)); err != nil || string(v) != won[0] {
			t.Fatalf("round %d: %s = %q (%v), winner wrote %q", round, k, v, err, won[0])
		}
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

// fillNumberedKeys writes k000…k299 and one key after them, "l", for the scan tests.
func fillNumberedKeys(t *testing.T, s store.Store) {
	t.Helper()
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
}

// testScanKeys: store.ScanKeys visits exactly the keys Scan visits, in order, bounded and
// stoppable like Scan.
func testScanKeys(t *testing.T, s store.Store) {
	defer s.Close()
	fillNumberedKeys(t, s)
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

// testGuardedWrite checks store.GuardedWriter on engines that offer it: a write lands only
// when the key holds exactly the expected value (or is absent, as expected) and the guard
// holds its value; read-modify-writes through it lose no update under concurrency; a write
// that starts after its guard's deletion writes nothing; and no write outlives a purge of
// the keys that follows the deletion.
func testGuardedWrite(t *testing.T, s store.Store) {
	defer s.Close()
	gw, ok := s.(store.GuardedWriter)
	if !ok {
		t.Skip("engine has no guarded write")
	}
	write := func(w store.CondWrite) bool {
		t.Helper()
		done, err := gw.WriteIf(ctx, nil, w)
		if err != nil {
			t.Fatal(err)
		}
		return done
	}
	b := func(s string) []byte { return []byte(s) }
	set(t, s, "g", "1")
	set(t, s, "k1", "a")
	for i, c := range []struct {
		w    store.CondWrite
		want bool
		k1   string // k1 afterwards ("" absent)
	}{
		{store.CondWrite{Key: b("k1"), Exists: true, Old: b("x"), Value: b("b"), GuardKey: b("g"), GuardValue: b("1")}, false, "a"},
		{store.CondWrite{Key: b("k1"), Exists: true, Old: b("a"), Value: b("b"), GuardKey: b("g"), GuardValue: b("2")}, false, "a"},
		{store.CondWrite{Key: b("k1"), Exists: true, Old: b("a"), Value: b("b"), GuardKey: b("nog"), GuardValue: b("")}, false, "a"},
		{store.CondWrite{Key: b("k1"), Value: b("b"), GuardKey: b("g"), GuardValue: b("1")}, false, "a"}, // exists
		{store.CondWrite{Key: b("k1"), Exists: true, Old: b("a"), Value: b("b"), GuardKey: b("g"), GuardValue: b("1")}, true, "b"},
		{store.CondWrite{Key: b("k1"), Exists: true, Old: b("a"), Delete: true, GuardKey: b("g"), GuardValue: b("1")}, false, "b"},
		{store.CondWrite{Key: b("k1"), Exists: true, Old: b("b"), Delete: true, GuardKey: b("g"), GuardValue: b("2")}, false, "b"},
		{store.CondWrite{Key: b("k1"), Exists: true, Old: b("b"), Delete: true, GuardKey: b("g"), GuardValue: b("1")}, true, ""},
		{store.CondWrite{Key: b("k1"), Exists: true, Old: b("b"), Value: b("c"), GuardKey: b("g"), GuardValue: b("1")}, false, ""}, // absent
		{store.CondWrite{Key: b("k1"), Value: b("c"), GuardKey: b("g"), GuardValue: b("2")}, false, ""},
		{store.CondWrite{Key: b("k1"), Value: b("c"), GuardKey: b("g"), GuardValue: b("1")}, true, "c"},
	} {
		if got := write(c.w); got != c.want {
			t.Errorf("case %d: WriteIf = %v, want %v", i, got, c.want)
		}
		v, err := s.Get(ctx, b("k1"))
		if got := string(v); (err == nil) != (c.k1 != "") || got != c.k1 {
			t.Fatalf("case %d: k1 = %q (%v), want %q", i, got, err, c.k1)
		}
	}

	// Read-increment-write loops on one counter lose no increment.
	set(t, s, "counter", "0")
	const workers, each = 4, 25
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for done := 0; done < each; {
				v, err := s.Get(ctx, b("counter"))
				if err != nil {
					t.Error(err)
					return
				}
				var n int
				fmt.Sscan(string(v), &n)
				ok, err := gw.WriteIf(ctx, nil, store.CondWrite{Key: b("counter"), Exists: true, Old: v,
					Value: fmt.Appendf(nil, "%d", n+1), GuardKey: b("g"), GuardValue: b("1")})
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					done++
				}
			}
		})
	}
	wg.Wait()
	if v, _ := s.Get(ctx, b("counter")); string(v) != fmt.Sprint(workers*each) {
		t.Fatalf("counter = %s after %d acknowledged increments", v, workers*each)
	}

	// Writers race a deletion of their guard and then a purge of their keys (the table's
	// drop): a write that starts after the deletion writes nothing, and no key outlives the
	// purge, however the writes and the purge interleaved.
	for round := range 5 {
		guard := fmt.Sprintf("wguard%02d", round)
		prefix := fmt.Sprintf("w%02d/", round)
		set(t, s, guard, "live")
		for w := range 4 {
			set(t, s, fmt.Sprintf("%s%d", prefix, w), "0")
		}
		late := prefix + "late"
		set(t, s, late, "x")
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				k := b(fmt.Sprintf("%s%d", prefix, w))
				for i := 1; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					ok, err := gw.WriteIf(ctx, nil, store.CondWrite{Key: k, Exists: true, Old: fmt.Append(nil, i-1),
						Value: fmt.Append(nil, i), GuardKey: b(guard), GuardValue: b("live")})
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						return // the guard or the key is gone
					}
				}
			})
		}
		err := s.Update(ctx, nil, func(tx store.Txn) error {
			if _, err := tx.Get(b(guard)); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			return tx.Delete(b(guard))
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []store.CondWrite{
			{Key: b(late), Exists: true, Old: b("x"), Value: b("y"), GuardKey: b(guard), GuardValue: b("live")},
			{Key: b(late), Exists: true, Old: b("x"), Delete: true, GuardKey: b(guard), GuardValue: b("live")},
			{Key: b(prefix + "new"), Value: b("y"), GuardKey: b(guard), GuardValue: b("live")},
		} {
			if write(w) {
				t.Fatalf("round %d: %+v landed after its guard's deletion", round, w)
			}
		}
		err = s.Update(ctx, nil, func(tx store.Txn) error { return tx.DeleteRange(b(prefix), b(prefix+"\xff")) })
		if err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		if left := scanAll(t, s, b(prefix), b(prefix+"\xff")); len(left) > 0 {
			t.Fatalf("round %d: %v left after the purge", round, left)
		}
	}
}

// testScanLimit: store.ScanLimit visits what Scan visits, in order, but never more than
// limit keys, and stops when fn does.
func testScanLimit(t *testing.T, s store.Store) {
	defer s.Close()
	fillNumberedKeys(t, s)
	for _, c := range []struct {
		start, end  string
		limit, stop int
	}{{"k", "l", 1, 0}, {"k", "l", 7, 0}, {"k", "l", 300, 0}, {"k", "l", 1000, 0}, {"k100", "k2", 50, 0},
		{"k100", "k2", 150, 0}, {"k", "", 301, 0}, {"k", "", 5000, 0}, {"k", "l", 100, 7}, {"k", "l", 0, 0}} {
		var end []byte
		if c.end != "" {
			end = []byte(c.end)
		}
		var want, got []string
		err := s.Scan(ctx, []byte(c.start), end, func(k, v []byte) (bool, error) {
			if len(want) == c.limit {
				return false, nil
			}
			want = append(want, string(k)+"="+string(v))
			return c.stop == 0 || len(want) < c.stop, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = store.ScanLimit(ctx, s, []byte(c.start), end, c.limit, func(k, v []byte) (bool, error) {
			got = append(got, string(k)+"="+string(v))
			return c.stop == 0 || len(got) < c.stop, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("ScanLimit(%q, %q, %d) = %d keys %v…, want %d", c.start, c.end, c.limit, len(got), got[:min(3, len(got))], len(want))
		}
	}
	stop := errors.New("stop")
	if err := store.ScanLimit(ctx, s, []byte("k"), nil, 10, func(k, v []byte) (bool, error) { return true, stop }); err != stop {
		t.Fatalf("ScanLimit returned %v, want the callback's error", err)
	}
}
