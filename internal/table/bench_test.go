package table

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/query"
	"github.com/tablo/tablo/internal/store/pebble"
)

// Query scan benchmarks over ~10k entities of ~1 KiB, on an in-memory and an on-disk Pebble
// engine. They measure the scan path of QueryEntities (plan, scan, filter, key decoding);
// the /json variants also write every returned entity as minimal-metadata JSON, as the
// server does.
//
//	go test ./internal/table/ -run '^$' -bench Query -benchmem

const (
	benchEntities   = 10_000
	benchPartitions = 10 // partition "p00" … "p09", 1,000 entities each
)

// benchEntity builds an entity of about 1 KiB with a mix of property types. Cat is 0..99,
// so "Cat eq 7" selects 1%.
func benchEntity(i int) *entity.Entity {
	pad := strings.Repeat(string(rune('a'+i%26)), 96)
	props := []entity.Property{
		{Name: "Cat", Value: entity.Int32Value(int32(i % 100))},
		{Name: "Seq", Value: entity.Int64Value(int64(i))},
		{Name: "Price", Value: entity.DoubleValue(float64(i) / 7)},
		{Name: "Active", Value: entity.BoolValue(i%3 == 0)},
		{Name: "When", Value: entity.DateTimeValue(baseTicks + int64(i)*entity.TicksPerSecond)},
		{Name: "ID", Value: entity.GuidValue("c9da6455-213d-42c9-9a79-3e9149a57833")},
		{Name: "Blob", Value: entity.BinaryValue([]byte(pad[:64]))},
	}
	for j := range 8 {
		props = append(props, entity.Property{Name: fmt.Sprintf("Text%d", j), Value: entity.StringValue(pad)})
	}
	return &entity.Entity{
		PartitionKey: fmt.Sprintf("p%02d", i%benchPartitions),
		RowKey:       fmt.Sprintf("row-%08d", i),
		Props:        props,
	}
}

// benchService loads the benchmark table into a fresh engine; with columns, filtered scans
// are served from the column cache (built on first use).
func benchService(b *testing.B, onDisk, columns bool) *Service {
	b.Helper()
	o := pebble.Options{InMemory: true}
	if onDisk {
		o = pebble.Options{Dir: b.TempDir()}
	}
	db, err := pebble.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	so := Options{QueryBudget: time.Minute}
	if columns {
		so.ColumnCacheBytes, so.ColumnCacheBuildAfter = 64<<20, 1<<62
	}
	svc := New(db, so)
	b.Cleanup(svc.Close)
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, testAccount, "bench"); err != nil {
		b.Fatal(err)
	}
	// Batches are per partition: entity i is in partition i%benchPartitions.
	for p := range benchPartitions {
		var ops []Op
		for i := p; i < benchEntities; i += benchPartitions {
			ops = append(ops, Op{Kind: Insert, Entity: benchEntity(i)})
			if len(ops) == MaxBatchOps {
				if _, err := svc.Batch(ctx, testAccount, "bench", ops); err != nil {
					b.Fatal(err)
				}
				ops = nil
			}
		}
	}
	return svc
}

// benchQuery runs q to the end (following continuations) and returns entities scanned and
// returned.
func benchQuery(b *testing.B, svc *Service, q Query, encode bool) (scanned, returned int) {
	ctx := context.Background()
	o := entity.EncodeOptions{Level: entity.MinimalMetadata}
	var buf []byte
	for {
		info, err := svc.QueryEntities(ctx, testAccount, "bench", q, func(r entity.Raw) (bool, error) {
			if !encode {
				return true, nil
			}
			var err error
			buf, err = entity.AppendJSONRaw(buf[:0], r, o)
			return true, err
		})
		if err != nil {
			b.Fatal(err)
		}
		scanned += info.Scanned
		returned += info.Returned
		if info.Next == nil {
			return scanned, returned
		}
		q.HasNext, q.NextPartitionKey, q.NextRowKey = true, info.Next.PartitionKey, info.Next.RowKey
	}
}

func BenchmarkQuery(b *testing.B) {
	for _, engine := range []string{"mem", "disk", "disk+columns"} {
		svc := benchService(b, engine != "mem", engine == "disk+columns")
		cases := []struct {
			name, filter string
			scanned      int
		}{
			// A whole partition: every scanned entity is decoded and returned.
			{"partition", "PartitionKey eq 'p03'", benchEntities / benchPartitions},
			// A table scan filtered on a non-key property: 1% match.
			{"filtered-scan", "Cat eq 7", benchEntities},
			// A table scan filtered on a string property (the lazy reader copies strings).
			{"filtered-scan-string", "Text3 eq 'zzz'", benchEntities},
		}
		for _, c := range cases {
			for _, encode := range []bool{false, true} {
				q := Query{Filter: mustParse(b, c.filter)}
				if props := cacheableFilter(query.PlanQuery(q.Filter)); svc.cols != nil && props != nil {
					t, err := svc.GetTable(context.Background(), testAccount, "bench")
					if err != nil {
						b.Fatal(err)
					}
					if err := svc.cols.Build(t.ID, props); err != nil {
						b.Fatal(err)
					}
				}
				name := engine + "/" + c.name
				if encode {
					name += "/json" // the server's path: each returned entity written as JSON
				}
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					total := 0
					cpu0, cpuOK := processCPU()
					for b.Loop() {
						scanned, _ := benchQuery(b, svc, q, encode)
						if scanned != c.scanned {
							b.Fatalf("scanned %d, want %d", scanned, c.scanned)
						}
						total += scanned
					}
					b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "entities/s")
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/entity")
					if cpu1, ok := processCPU(); ok && cpuOK {
						b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(total), "cpu-ns/entity")
					}
				})
			}
		}
	}
}

// BenchmarkBatchInsert is the engine side of a $batch: 100 inserts of ~300-byte entities
// into a new partition per transaction, durable (on disk, fsynced), as `tablo bench
// --workloads batch-insert` sends them. It includes the compactions the writes cause.
func BenchmarkBatchInsert(b *testing.B) {
	db, err := pebble.Open(pebble.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	svc := New(db, Options{})
	b.Cleanup(svc.Close)
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, testAccount, "bench"); err != nil {
		b.Fatal(err)
	}
	data := entity.StringValue(strings.Repeat("x", 256))
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	n := 0
	for b.Loop() {
		n++
		ops := make([]Op, MaxBatchOps)
		for i := range ops {
			ops[i] = Op{Kind: Insert, Entity: &entity.Entity{
				PartitionKey: fmt.Sprintf("w%03d-%09d", n%16, n),
				RowKey:       fmt.Sprintf("r%03d", i),
				Props:        []entity.Property{{Name: "Seq", Value: entity.Int64Value(int64(i))}, {Name: "Data", Value: data}},
			}}
		}
		if _, err := svc.Batch(ctx, testAccount, "bench", ops); err != nil {
			b.Fatal(err)
		}
	}
	if cpu1, ok := processCPU(); ok && cpuOK {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(n*MaxBatchOps), "cpu-ns/entity")
	}
}
