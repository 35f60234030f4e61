package pebble

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tablo/tablo/internal/store"
)

// BenchmarkLookupAbsent is an insert's existence check in a table larger than the block
// cache (300 k 700-byte values, ~205 MB), for keys that fall between stored ones, with each
// expectation: ExpectPresent is a Get, ExpectAbsent a seek that reads every level's Bloom
// filter.
func BenchmarkLookupAbsent(b *testing.B) {
	db := openBench(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 700) // random bytes: incompressible, so the table really is that large
	for f := range 60 {      // stored keys: even sequence numbers; looked-up keys: odd ones
		err := db.Update(ctx, nil, func(tx store.Txn) error {
			for i := range 5000 {
				for j := range val {
					val[j] = byte(rng.Uint32())
				}
				if err := tx.Set(fmt.Appendf(nil, "t/p0/w%03d-%09d", i%16, 2*(f*5000+i)), val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	db.db.Flush()
	db.db.Compact(ctx, []byte("t"), []byte("u"), true)
	keys := make([][]byte, 100000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "t/p0/w%03d-%09d", rng.IntN(16), 2*rng.IntN(300000)+1)
	}
	for _, expect := range []store.Expect{store.ExpectPresent, store.ExpectAbsent} {
		b.Run(map[store.Expect]string{store.ExpectPresent: "expect=present", store.ExpectAbsent: "expect=absent"}[expect], func(b *testing.B) {
			i := 0
			for b.Loop() {
				err := db.Update(ctx, nil, func(tx store.Txn) error {
					return tx.Lookup(keys[i%len(keys):i%len(keys)+1], expect, func(_ int, _ []byte, found bool) error {
						if found {
							return fmt.Errorf("found %q", keys[i%len(keys)])
						}
						return nil
					})
				})
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
