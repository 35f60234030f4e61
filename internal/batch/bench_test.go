package batch

import (
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"
)

// reportCPU adds the process CPU time per op since cpu0 (from processCPU), which a shared
// machine disturbs much less than wall time.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchBody is a changeset of n inserts like the server's BenchmarkBatchInsert (the same
// headers in every part). With goSDK, each sub-request also carries its Content-Length and the
// bodies differ in length, as Go aztables sends them, so no two header blocks are identical.
func benchBody(n int, goSDK bool) []byte {
	var sb strings.Builder
	sb.WriteString("--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n")
	for i := range n {
		body := fmt.Sprintf(`{"PartitionKey":"b1","RowKey":"r%03d","Name":"someone","Age":42}`, i)
		if goSDK {
			body = fmt.Sprintf(`{"PartitionKey":"b1","RowKey":"r%03d","Name":"%s","Age":42}`, i, strings.Repeat("n", i))
		}
		sb.WriteString("--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		sb.WriteString("POST http://127.0.0.1:10002/devstoreaccount1/bench HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\n")
		if goSDK {
			fmt.Fprintf(&sb, "Content-Length: %d\r\n", len(body))
		}
		sb.WriteString("Prefer: return-no-content\r\nDataServiceVersion: 3.0\r\n\r\n")
		sb.WriteString(body + "\r\n")
	}
	sb.WriteString("--changeset_c--\r\n--batch_b--\r\n")
	return []byte(sb.String())
}

// BenchmarkParse parses a changeset of 100 inserts per op.
func BenchmarkParse(b *testing.B) {
	for _, goSDK := range []bool{false, true} {
		name := "same-headers"
		if goSDK {
			name = "distinct-headers"
		}
		b.Run(name, func(b *testing.B) {
			body := benchBody(100, goSDK)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			defer reportCPU(b, processCPU())
			for b.Loop() {
				if _, err := Parse("multipart/mixed; boundary=batch_b", body, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchSubs is the answer to 100 inserts under return-no-content.
func benchSubs() []SubResponse {
	subs := make([]SubResponse, 100)
	for i := range subs {
		loc := fmt.Sprintf("http://127.0.0.1:10002/devstoreaccount1/bench(PartitionKey='b1',RowKey='r%03d')", i)
		subs[i] = InsertedNoContent(loc, `W/"datetime'2025-01-01T00%3A00%3A01.1234567Z'"`)
	}
	return subs
}

func BenchmarkWriteResponse(b *testing.B) {
	subs := benchSubs()
	outer, cs := NewBoundary(BatchResponsePrefix), NewBoundary(ChangesetResponsePrefix)
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		if err := WriteResponse(io.Discard, outer, cs, subs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendResponse renders into a reused buffer, as the server does.
func BenchmarkAppendResponse(b *testing.B) {
	subs := benchSubs()
	outer, cs := NewBoundary(BatchResponsePrefix), NewBoundary(ChangesetResponsePrefix)
	var buf []byte
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		var err error
		if buf, err = AppendResponse(buf[:0], outer, cs, subs); err != nil {
			b.Fatal(err)
		}
	}
}
