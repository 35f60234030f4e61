package queue

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// settle waits (up to a minute) until the engine has no flush or compaction running and no
// compaction debt, so a measurement after a large load is not one of the load's compactions.
func settle(s *Service) {
	db, ok := s.st.(*pebblestore.DB)
	if !ok {
		return
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		m := db.Metrics()
		if m.Compact.NumInProgress == 0 && m.Flush.NumInProgress == 0 && m.Compact.EstimatedDebt == 0 {
			return
		}
	}
}

// fill puts n messages into a queue, many per transaction (a test shortcut: Put is one
// transaction per message).
func fill(t testing.TB, s *Service, name string, n int) {
	t.Helper()
	for done := 0; done < n; {
		k := min(n-done, 10000)
		err := s.withQueue(ctx, acct, name, func(tx store.Txn, qid uint64) error {
			for i := 0; i < k; i++ {
				now := s.clock()
				m := &message{seq: s.nextSeq(now), inserted: now, expires: now + int64(DefaultTTL)*1e9, visibleAt: now, receipt: newReceipt(), text: "payload-payload-payload"}
				if err := writeMessage(tx, qid, m); err != nil {
					return err
				}
			}
			return s.addCount(ctx, tx, qid, int64(k))
		})
		if err != nil {
			t.Fatal(err)
		}
		done += k
	}
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time per operation since start (cpu-ns/op): on a
// shared machine wall time also counts waiting for a CPU, and a get+delete's wall time is
// mostly the WAL fsyncs it waits for.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkQueueDepth measures get+delete and peek on queues of different depths, on the
// durable engine, once the engine has settled after the fill. The figure that matters is
// the ratio between depths (flat is the goal), best read in CPU per operation (cpu-ns/op,
// the whole process's, fsyncs and background work included):
//
//	go test ./internal/queue -run - -bench QueueDepth -benchtime 3000x
//
// The in-memory engine ("mem/...") keeps Pebble's levels but syncs nothing, so there a
// get+delete's CPU is the walk and the writes, without the two fsyncs that dominate it on
// disk.
func BenchmarkQueueDepth(b *testing.B) {
	for _, inMemory := range []bool{false, true} {
		b.Run(map[bool]string{false: "disk", true: "mem"}[inMemory], func(b *testing.B) {
			benchmarkDepth(b, inMemory)
		})
	}
}

func benchmarkDepth(b *testing.B, inMemory bool) {
	for _, depth := range []int{100, 1000, 1000000} {
		s, _ := newService(b, inMemory)
		name := fmt.Sprintf("depth%d", depth)
		mustCreate(b, s, name)
		fill(b, s, name, depth)
		settle(s)
		b.Run(fmt.Sprintf("get-delete/%d", depth), func(b *testing.B) {
			var cpu time.Duration
			for range b.N {
				// Keep the depth: one put per get, outside the timing.
				b.StopTimer()
				if _, err := s.PutMessage(ctx, acct, name, "payload-payload-payload", 0, DefaultTTL); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				c0 := cpuTime()
				got, err := s.GetMessages(ctx, acct, name, 1, 30)
				if err != nil || len(got) != 1 {
					b.Fatal(got, err)
				}
				if err := s.DeleteMessage(ctx, acct, name, got[0].ID, got[0].PopReceipt); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - c0
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
		b.Run(fmt.Sprintf("peek/%d", depth), func(b *testing.B) {
			start := cpuTime()
			for range b.N {
				if got, err := s.PeekMessages(ctx, acct, name, 1); err != nil || len(got) != 1 {
					b.Fatal(got, err)
				}
			}
			reportCPU(b, start)
		})
	}
}

func BenchmarkPeekOnly(b *testing.B) {
	s, _ := newService(b, false)
	mustCreate(b, s, "peek")
	fill(b, s, "peek", 100)
	b.ResetTimer()
	for range b.N {
		if got, err := s.PeekMessages(ctx, acct, "peek", 1); err != nil || len(got) != 1 {
			b.Fatal(got, err)
		}
	}
}
