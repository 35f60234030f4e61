package entity

import "testing"

// BenchmarkDecodeJSONSmall decodes the small entity of the server's batch benchmark.
func BenchmarkDecodeJSONSmall(b *testing.B) {
	body := []byte(`{"PartitionKey":"b1","RowKey":"r042","Name":"someone","Age":42,"Score":3.5,"Active":true,"Big@odata.type":"Edm.Int64","Big":"1234567890123","Data":"` +
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `"}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeJSON(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeJSONStringSmall is BenchmarkDecodeJSONSmall for a body already held as a
// string (a batch sub-request): no copy.
func BenchmarkDecodeJSONStringSmall(b *testing.B) {
	body := `{"PartitionKey":"b1","RowKey":"r042","Name":"someone","Age":42,"Score":3.5,"Active":true,"Big@odata.type":"Edm.Int64","Big":"1234567890123","Data":"` +
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `"}`
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeJSONString(body); err != nil {
			b.Fatal(err)
		}
	}
}
