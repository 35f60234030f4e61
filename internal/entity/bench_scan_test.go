package entity

import (
	"strings"
	"testing"
)

// BenchmarkScanMatchJSON encodes the entity shape of the load generator's filter-scan (a short
// Category, an Int32 and 256 ASCII characters of Data) at minimal metadata as a collection
// element: one op is one matched entity of a filtered scan.
func BenchmarkScanMatchJSON(b *testing.B) {
	e := &Entity{
		PartitionKey: "p00007",
		RowKey:       "r00000707",
		Timestamp:    mustTicks(b, "2024-05-01T10:20:30.1234567Z"),
		Props: []Property{
			prop("Category", StringValue("c07")),
			prop("N", Int32Value(707)),
			prop("Data", StringValue(strings.Repeat("abcdefghijklmnopqrstuvwxyzABCDEF", 8))),
		},
	}
	stored := AppendBinary(nil, e)
	o := EncodeOptions{Level: MinimalMetadata}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewRaw(stored, e.PartitionKey, e.RowKey)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = AppendJSONRaw(buf[:0], r, o); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}
