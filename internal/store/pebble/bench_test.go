package pebble

import (
	"context"
	"encoding/binary"
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
