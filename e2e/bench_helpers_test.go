package e2e

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Timing helpers of the in-process engine benchmark (TestBlobEngineBench); the Blob
// workloads against Tablo, Azurite and the ceilings are `tablo bench`'s.

type benchResult struct {
	ops   int64
	bytes int64
	dur   time.Duration
	lat   []time.Duration
}

func (r benchResult) String() string {
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	p := func(q float64) time.Duration { return r.lat[int(q*float64(len(r.lat)-1))] }
	return fmt.Sprintf("%8.1f MB/s %8.0f ops/s p50 %v p99 %v", float64(r.bytes)/r.dur.Seconds()/1e6, float64(r.ops)/r.dur.Seconds(), p(0.5).Round(time.Microsecond), p(0.99).Round(time.Microsecond))
}

// runBench runs op from clients goroutines for d (at least one op each).
func runBench(clients int, d time.Duration, size int64, op func(w, i int) error) (benchResult, error) {
	var ops atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr error
	began := time.Now()
	var wg sync.WaitGroup
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i == 0 || time.Since(began) < d; i++ {
				t0 := time.Now()
				if err := op(w, i); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				el := time.Since(t0)
				ops.Add(1)
				mu.Lock()
				lat = append(lat, el)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	dur := time.Since(began)
	return benchResult{ops: ops.Load(), bytes: ops.Load() * size, dur: dur, lat: lat}, firstErr
}
