package metrics

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestServiceRecordsOnlySeriesThatOccur(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	table := m.Service("table", []string{"Unknown", "GetEntity", "InsertEntity"})
	queue := m.Service("queue", []string{"Unknown", "PutMessage"})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				table.Observe(1, 200, time.Millisecond, 0, 120)
			}
		}()
	}
	wg.Wait()
	table.Observe(2, 409, time.Millisecond, 50, 200)
	table.Observe(99, 0, time.Millisecond, 0, 0) // unknown operation, no status: Unknown 5xx
	queue.Observe(1, 201, time.Millisecond, 10, 0)
	(*Service)(nil).Observe(1, 200, time.Millisecond, 0, 0)

	if n := testutil.CollectAndCount(m.requests); n != 4 {
		t.Fatalf("%d request series, want the 4 that occurred", n)
	}
	for _, c := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"table", "GetEntity", "2xx"}, 800},
		{[]string{"table", "InsertEntity", "4xx"}, 1},
		{[]string{"table", "Unknown", "5xx"}, 1},
		{[]string{"queue", "PutMessage", "2xx"}, 1},
	} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(c.labels...)); got != c.want {
			t.Errorf("%v: %v, want %v", c.labels, got, c.want)
		}
	}
	if got := testutil.ToFloat64(m.bytesOut.WithLabelValues("table")); got != 800*120+200 {
		t.Errorf("bytes out %v", got)
	}
	if got := testutil.ToFloat64(m.bytesIn.WithLabelValues("queue")); got != 10 {
		t.Errorf("queue bytes in %v", got)
	}
	m.Connections("table", func() int { return 3 })
	out, err := testutil.GatherAndCount(reg, "tablo_open_connections")
	if err != nil || out != 1 {
		t.Fatalf("connections: %d %v", out, err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader("# HELP tablo_open_connections Client connections open, by service.\n# TYPE tablo_open_connections gauge\ntablo_open_connections{service=\"table\"} 3\n"), "tablo_open_connections"); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkObserve(b *testing.B) {
	s := New(prometheus.NewRegistry()).Service("table", []string{"Unknown", "GetEntity"})
	for b.Loop() {
		s.Observe(1, 200, time.Millisecond, 0, 100)
	}
}
