package pebble

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/store"
)

// ioWriteBytes is this process's bytes written to storage (/proc/self/io write_bytes).
func ioWriteBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "write_bytes: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// TestBulkWriteAmplification measures the bytes that reach the disk for N MiB of block data
// stored (a) as extents and (b) as 1 MiB chunk values in the LSM, the alternative the
// extents replace. Run with TABLO_WRITE_AMP=<MiB>; it logs the ratios.
func TestBulkWriteAmplification(t *testing.T) {
	mib, _ := strconv.Atoi(os.Getenv("TABLO_WRITE_AMP"))
	if mib <= 0 {
		t.Skip("set TABLO_WRITE_AMP=<MiB> to run")
	}
	ctx := context.Background()
	block := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(b []byte, n int) { // incompressible, like most blob data
		for i := 0; i+8 <= len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
		}
	}
	blocks := mib / 4
	measure := func(name string, write func(db *DB, i int) error) {
		db, err := Open(Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		before := ioWriteBytes(t)
		for i := 0; i < blocks; i++ {
			fill(block, i)
			if err := write(db, i); err != nil {
				t.Fatal(err)
			}
		}
		// Let the LSM do what it will do anyway: flush the memtable, finish compactions.
		if err := db.db.Flush(); err != nil {
			t.Fatal(err)
		}
		for db.db.Metrics().Compact.NumInProgress > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(time.Second)
		for db.db.Metrics().Compact.NumInProgress > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		got := ioWriteBytes(t) - before
		m := db.db.Metrics()
		tot := m.Total()
		t.Logf("%s: Pebble's own count: WAL %d MiB, flushed %d MiB, compacted %d MiB", name, m.WAL.BytesWritten>>20, tot.TableBytesFlushed>>20, tot.TableBytesCompacted>>20)
		t.Logf("%s: %d MiB of blocks -> %d MiB written to disk (write amplification %.2f)", name, blocks*4, got>>20, float64(got)/float64(blocks*4<<20))
	}
	measure("extents", func(db *DB, i int) error {
		w, err := db.Extents().NewExtent(ctx)
		if err != nil {
			return err
		}
		if _, err := w.Write(block); err != nil {
			return err
		}
		id, err := w.Commit()
		if err != nil {
			return err
		}
		return db.Update(ctx, nil, func(tx store.Txn) error {
			return tx.Set([]byte("ref"+strconv.Itoa(i)), binary.BigEndian.AppendUint64(nil, id))
		})
	})
	measure("LSM chunks", func(db *DB, i int) error {
		return db.Update(ctx, nil, func(tx store.Txn) error {
			for c := 0; c < 4; c++ {
				k := []byte("chunk" + strconv.Itoa(i) + "/" + strconv.Itoa(c))
				if err := tx.Set(k, block[c<<20:(c+1)<<20]); err != nil {
					return err
				}
			}
			return nil
		})
	})
}
