package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkServeOnly is BenchmarkHandler without the client: the requests are built and
// signed before the timer starts, so cpu-µs/op is the server's work alone (handler, engine
// and its background commit work), from one goroutine.
func BenchmarkServeOnly(b *testing.B) {
	for _, op := range []string{"insert", "upsert-merge", "get"} {
		b.Run(op, func(b *testing.B) {
			h := newPreloadedBenchServer(b)
			reqs := make([]*http.Request, b.N)
			want := 204
			for i := range reqs {
				j := i % 1000
				switch op {
				case "insert":
					reqs[i] = signed("POST", "/devstoreaccount1/bench", fmt.Sprintf(`{"PartitionKey":"p%d","RowKey":"n%d"`, i%10, i)+benchEntity, map[string]string{"Prefer": "return-no-content"})
				case "upsert-merge":
					reqs[i] = signed("MERGE", fmt.Sprintf("/devstoreaccount1/bench(PartitionKey='p%d',RowKey='r%d')", j%10, j), `{"PartitionKey":"x","RowKey":"y"`+benchEntity, nil)
				case "get":
					reqs[i] = signed("GET", fmt.Sprintf("/devstoreaccount1/bench(PartitionKey='p%d',RowKey='r%d')", j%10, j), "", nil)
					want = 200
				}
			}
			cpu := serveEach(b, h, reqs, func(rec *httptest.ResponseRecorder) {
				if rec.Code != want {
					b.Fatalf("%s: %d %s", op, rec.Code, rec.Body)
				}
			})
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// serveEach serves reqs (built before the timer starts) one after the other into a reused
// body buffer, checks each response, and returns the CPU time the process used meanwhile.
func serveEach(b *testing.B, h http.Handler, reqs []*http.Request, check func(*httptest.ResponseRecorder)) time.Duration {
	var buf bytes.Buffer
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	for i := range reqs {
		rec := httptest.NewRecorder()
		rec.Body = &buf
		buf.Reset()
		h.ServeHTTP(rec, reqs[i])
		check(rec)
		reqs[i] = nil
	}
	b.StopTimer()
	return processCPU() - cpu0
}
