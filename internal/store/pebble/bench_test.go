package pebble

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tablo/tablo/internal/store"
)

func openBench(b *testing.B) *DB {
	db, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkUpdateParallel measures durable read-check-write transactions from concurrent
// writers on distinct keys (the group-commit path). Run with -cpu to vary writers.
func BenchmarkUpdateParallel(b *testing.B) {
	db := openBench(b)
	ctx := context.Background()
	val := make([]byte, 1024)
	var seq atomic.Uint64
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := binary.BigEndian.AppendUint64([]byte("k"), seq.Add(1))
			err := db.Update(ctx, []store.Lock{{Name: string(k)}}, func(tx store.Txn) error {
				if _, err := tx.Get(k); err != nil && err != store.ErrNotFound {
					return err
				}
				return tx.Set(k, val)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkUpdateSameLock is the hot-partition case: every writer takes the same lock.
func BenchmarkUpdateSameLock(b *testing.B) {
	db := openBench(b)
	ctx := context.Background()
	val := make([]byte, 1024)
	var seq atomic.Uint64
	locks := []store.Lock{{Name: "table", Shared: true}, {Name: "partition"}}
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := binary.BigEndian.AppendUint64([]byte("k"), seq.Add(1))
			err := db.Update(ctx, locks, func(tx store.Txn) error { return tx.Set(k, val) })
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// preload writes n 1 KiB values under keys "k" + big-endian i.
func preload(b *testing.B, db *DB, n int) {
	val := make([]byte, 1024)
	err := db.Update(context.Background(), nil, func(tx store.Txn) error {
		for i := range n {
			if err := tx.Set(binary.BigEndian.AppendUint64([]byte("k"), uint64(i)), val); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func BenchmarkGet(b *testing.B) {
	db := openBench(b)
	ctx := context.Background()
	const n = 10000
	preload(b, db, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.Get(ctx, binary.BigEndian.AppendUint64([]byte("k"), uint64(i%n))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScan(b *testing.B) {
	db := openBench(b)
	ctx := context.Background()
	const n = 10000
	preload(b, db, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		seen := 0
		err := db.Scan(ctx, []byte("k"), []byte("l"), func(k, v []byte) (bool, error) { seen++; return true, nil })
		if err != nil || seen != n {
			b.Fatal(seen, err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkTxnReadMany is a write's read side: 1 or (a batch insert) 100 absent keys read in one Txn, with
// the DB's data spread over several flushed sstables (whose Bloom filters answer), per Get
// and per Lookup.
func BenchmarkTxnReadMany(b *testing.B) {
	db := openBench(b)
	ctx := context.Background()
	val := make([]byte, 256)
	for f := range 6 {
		err := db.Update(ctx, nil, func(tx store.Txn) error {
			for i := range 2000 {
				if err := tx.Set(fmt.Appendf(nil, "t/p%03d/r%06d", i%16, f*2000+i), val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := db.db.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	keys := make([][]byte, 100) // a batch's keys: one new partition, ascending
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "t/p%03d/new%06d", 7, i)
	}
	for _, n := range []int{1, 100} {
		for _, c := range []struct {
			name string
			read func(store.Txn, []byte) ([]byte, error)
		}{
			{"Get", store.Txn.Get},
			{"Lookup", nil},
		} {
			b.Run(fmt.Sprintf("%s/keys=%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					err := db.Update(ctx, nil, func(tx store.Txn) error {
						if c.read == nil {
							return tx.Lookup(keys[:n], store.ExpectAbsent, func(i int, _ []byte, found bool) error {
								if found {
									return fmt.Errorf("Lookup %q: found", keys[i])
								}
								return nil
							})
						}
						for _, k := range keys[:n] {
							if _, err := c.read(tx, k); err != store.ErrNotFound {
								return fmt.Errorf("%s %q: %v", c.name, k, err)
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkWritePath is the engine's share of a write (table.planOps): look the new keys up,
// then set them, in one Update; in memory, so that it measures CPU rather than fsync. One key
// is a point insert, a hundred a batch.
func BenchmarkWritePath(b *testing.B) {
	db, err := Open(Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	val := make([]byte, 700)
	seq := uint64(0)
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			keys := make([][]byte, n)
			b.ReportAllocs()
			for b.Loop() {
				for i := range keys {
					seq++
					keys[i] = binary.BigEndian.AppendUint64([]byte("k"), seq)
				}
				err := db.Update(ctx, nil, func(tx store.Txn) error {
					err := tx.Lookup(keys, store.ExpectPresent, func(i int, _ []byte, found bool) error {
						if found {
							return fmt.Errorf("found %x", keys[i])
						}
						return nil
					})
					if err != nil {
						return err
					}
					for _, k := range keys {
						if err := tx.Set(k, val); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
