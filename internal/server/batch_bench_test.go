package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// sdkBatchBody is a changeset of 100 inserts shaped byte for byte as the Go SDK
// (aztables) sends them: an encoded $format on every sub-request URL, Content-Length, and
// empty DataServiceVersion and x-ms-version headers.
func sdkBatchBody(n int) string {
	var sb strings.Builder
	sb.WriteString("--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n")
	for i := range 100 {
		ent := fmt.Sprintf(`{"PartitionKey":"b%d","RowKey":"r%03d"`, n, i) + benchEntity
		sb.WriteString("--changeset_c\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n")
		sb.WriteString("POST http://127.0.0.1:10002/devstoreaccount1/bench?%24format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1\r\n")
		sb.WriteString("Accept: application/json;odata=minimalmetadata\r\n")
		fmt.Fprintf(&sb, "Content-Length: %d\r\n", len(ent))
		sb.WriteString("Content-Type: application/json\r\nDataServiceVersion: \r\nPrefer: return-no-content\r\nx-ms-version: \r\n\r\n")
		sb.WriteString(ent + "\r\n")
	}
	sb.WriteString("--changeset_c--\r\n--batch_b--\r\n")
	return sb.String()
}

// BenchmarkBatchInsertSDK is the server's work alone (requests built and signed before the
// timer starts) for one Go-SDK-shaped changeset of 100 inserts per op, from one goroutine.
func BenchmarkBatchInsertSDK(b *testing.B) {
	h := newBenchServer(b)
	reqs := make([]*http.Request, b.N)
	for i := range reqs {
		reqs[i] = signed("POST", "/devstoreaccount1/$batch", sdkBatchBody(i), map[string]string{"Content-Type": "multipart/mixed; boundary=batch_b"})
	}
	cpu := serveEach(b, h, reqs, func(code int, body []byte) {
		if code != 202 || strings.Contains(string(body), "odata.error") {
			b.Fatalf("batch: %d %s", code, body)
		}
	})
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*100), "cpu-ns/entity")
}
