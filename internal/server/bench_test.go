package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/server"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/table"
)

// newBenchServer returns the Table service's handler over a durable on-disk engine (also
// used by tests).
func newBenchServer(b testing.TB) *server.Server {
	// Mirror cmd/tablo's GC target so allocation costs are weighed as in production.
	b.Cleanup(func(old int) func() { return func() { debug.SetGCPercent(old) } }(debug.SetGCPercent(400)))
	db, err := pebblestore.Open(pebblestore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	svc := table.New(db, table.Options{})
	h := server.New(server.Options{Service: svc, Accounts: []auth.Account{auth.DevAccount()}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, signed("POST", "/devstoreaccount1/Tables", `{"TableName":"bench"}`, nil))
	if rec.Code != 201 {
		b.Fatalf("create table: %d %s", rec.Code, rec.Body)
	}
	return h
}

// newPreloadedBenchServer is newBenchServer with entities p0..p9/r0..r999 written.
func newPreloadedBenchServer(b *testing.B) *server.Server {
	h := newBenchServer(b)
	for i := range 1000 {
		body := fmt.Sprintf(`{"PartitionKey":"p%d","RowKey":"r%d"`, i%10, i) + benchEntity
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, signed("PUT", fmt.Sprintf("/devstoreaccount1/bench(PartitionKey='p%d',RowKey='r%d')", i%10, i), body, nil))
		if rec.Code != 204 {
			b.Fatalf("preload: %d %s", rec.Code, rec.Body)
		}
	}
	return h
}

var key = auth.DevAccount().Keys[0]

func signed(method, path, body string, hdr map[string]string) *http.Request {
	r := httptest.NewRequest(method, "http://127.0.0.1:10002"+path, strings.NewReader(body))
	r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	r.Header.Set("x-ms-version", "2019-02-02")
	r.Header.Set("Accept", "application/json;odata=minimalmetadata")
	r.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	raw := r.URL.EscapedPath()
	info := auth.RequestInfo{Method: method, RawPath: raw, RawQuery: r.URL.RawQuery, Header: r.Header, Account: "devstoreaccount1", PathStyle: true}
	r.Header.Set("Authorization", auth.SignSharedKey(auth.SchemeSharedKeyLite, info, key))
	return r
}

const benchEntity = `,"Name":"someone","Age":42,"Score":3.5,"Active":true,"Big@odata.type":"Edm.Int64","Big":"1234567890123","Data":"` +
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `"}`

// BenchmarkHandler measures the server's own work per request (routing, auth, JSON, engine,
// durable commit) without the network, from parallel clients.
func BenchmarkHandler(b *testing.B) {
	for _, op := range []string{"insert", "upsert-merge", "get"} {
		b.Run(op, func(b *testing.B) {
			h := newPreloadedBenchServer(b)
			var seq atomic.Int64
			seq.Store(1000)
			b.SetParallelism(8)
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := seq.Add(1)
					var r *http.Request
					want := 204
					switch op {
					case "insert":
						r = signed("POST", "/devstoreaccount1/bench", fmt.Sprintf(`{"PartitionKey":"p%d","RowKey":"r%d"`, i%10, i)+benchEntity, map[string]string{"Prefer": "return-no-content"})
					case "upsert-merge":
						j := i % 1000
						r = signed("MERGE", fmt.Sprintf("/devstoreaccount1/bench(PartitionKey='p%d',RowKey='r%d')", j%10, j), `{"PartitionKey":"x","RowKey":"y"`+benchEntity, nil)
					case "get":
						j := i % 1000
						r = signed("GET", fmt.Sprintf("/devstoreaccount1/bench(PartitionKey='p%d',RowKey='r%d')", j%10, j), "", nil)
						want = 200
					}
					// fasthttp's parse of the request is part of the server's work.
					fc := server.RequestCtxFor(r, false)
					h.Handle(fc)
					if code := fc.Response.StatusCode(); code != want {
						b.Fatalf("%s: %d %s", op, code, fc.Response.Body())
					}
				}
			})
			// CPU time of the whole process (server work plus the in-process client's request
			// building and signing) per operation: the figure that matters on a busy machine.
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBatchInsert measures one entity group transaction of 100 inserts per op.
func BenchmarkBatchInsert(b *testing.B) {
	h := newBenchServer(b)
	var seq atomic.Int64
	body := func(n int64) string {
		var sb strings.Builder
		sb.WriteString("--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n")
		for i := range 100 {
			sb.WriteString("--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
			sb.WriteString("POST http://127.0.0.1:10002/devstoreaccount1/bench HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\nDataServiceVersion: 3.0\r\n\r\n")
			fmt.Fprintf(&sb, `{"PartitionKey":"b%d","RowKey":"r%03d"`, n, i)
			sb.WriteString(benchEntity + "\r\n")
		}
		sb.WriteString("--changeset_c--\r\n--batch_b--\r\n")
		return sb.String()
	}
	b.SetParallelism(4)
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := signed("POST", "/devstoreaccount1/$batch", body(seq.Add(1)), map[string]string{"Content-Type": "multipart/mixed; boundary=batch_b"})
			fc := server.RequestCtxFor(r, false)
			h.Handle(fc)
			if code := fc.Response.StatusCode(); code != 202 || strings.Contains(string(fc.Response.Body()), "odata.error") {
				b.Fatalf("batch: %d %s", code, fc.Response.Body())
			}
		}
	})
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N*100), "cpu-ns/entity")
}
