package partition

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkAdmitFinish is the per-request cost of the layer on a point operation.
func BenchmarkAdmitFinish(b *testing.B) {
	l := New(Options{})
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "p" + strconv.Itoa(i)
	}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		op := Op{Service: Table, Account: "devstoreaccount1", Container: "bench", Key: keys[i&255], Kind: KindPointRead}
		tk := l.Admit(&op, now)
		l.Finish(&tk, Result{Status: 200, Entities: 1, Now: now})
	}
}
