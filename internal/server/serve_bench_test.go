package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/server"
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
			cpu := serveEach(b, h, reqs, func(code int, body []byte) {
				if code != want {
					b.Fatalf("%s: %d %s", op, code, body)
				}
			})
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// serveEach serves reqs (parsed by fasthttp before the timer starts) one after the other,
// checks each response's status and body, and returns the CPU time the process used
// meanwhile.
func serveEach(b *testing.B, h *server.Server, reqs []*http.Request, check func(code int, body []byte)) time.Duration {
	ctxs := make([]*fasthttp.RequestCtx, len(reqs))
	for i, r := range reqs {
		ctxs[i] = server.RequestCtxFor(r, false)
		reqs[i] = nil
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	for i, fc := range ctxs {
		h.Handle(fc)
		check(fc.Response.StatusCode(), fc.Response.Body())
		ctxs[i] = nil
	}
	b.StopTimer()
	return processCPU() - cpu0
}
