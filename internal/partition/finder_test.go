package partition

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestFinder(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	t.Run("uniform keys split near the middle", func(t *testing.T) {
		var f finder
		for range 5000 {
			k := fmt.Sprintf("k%03d", rnd.IntN(1000))
			f.record(rnd, k, k, false)
		}
		key, ok := f.key()
		if !ok || key < "k250" || key > "k750" {
			t.Fatalf("split key %q %v, want one near k500", key, ok)
		}
	})
	t.Run("append-only keys never split", func(t *testing.T) {
		var f finder
		for i := range 5000 {
			k := fmt.Sprintf("k%06d", i)
			f.record(rnd, k, k, false)
		}
		if key, ok := f.key(); ok {
			t.Fatalf("append-only load split at %q", key)
		}
	})
	t.Run("one partition never splits", func(t *testing.T) {
		var f finder
		for range 5000 {
			f.record(rnd, "hot", "hot", false)
		}
		if key, ok := f.key(); ok {
			t.Fatalf("single-key load split at %q", key)
		}
	})
	t.Run("table scans span every key", func(t *testing.T) {
		var f finder
		for i := range 5000 {
			if i%2 == 0 {
				k := fmt.Sprintf("k%03d", rnd.IntN(1000))
				f.record(rnd, k, k, false)
			} else {
				f.record(rnd, "", "", true)
			}
		}
		if key, ok := f.key(); ok {
			t.Fatalf("split at %q although half the load spans it", key)
		}
	})
}
