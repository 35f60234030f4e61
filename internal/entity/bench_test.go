package entity

import (
	"strings"
	"testing"
)

// benchEntity is a ~1 KiB entity with 10 properties of mixed types.
func benchEntity(b *testing.B) *Entity {
	return &Entity{
		PartitionKey: "customer-00042",
		RowKey:       "order-2024-05-01-000123",
		Timestamp:    mustTicks(b, "2024-05-01T10:20:30.1234567Z"),
		Props: []Property{
			prop("Name", StringValue("Contoso Ltd. — Großhandel 😀")),
			prop("Description", StringValue(strings.Repeat("lorem ipsum dolor sit amet ", 24))),
			prop("Age", Int32Value(23)),
			prop("AmountDue", DoubleValue(200.23)),
			prop("CustomerCode", GuidValue("c9da6455-213d-42c9-9a79-3e9149a57833")),
			prop("CustomerSince", DateTimeValue(mustTicks(b, "2008-07-10T00:00:00Z"))),
			prop("IsActive", BoolValue(true)),
			prop("NumberOfOrders", Int64Value(9007199254740993)),
			prop("Blob", BinaryValue([]byte(strings.Repeat("\x01\x02\x03\x04", 32)))),
			prop("Notes", StringValue("line one\nline \"two\"")),
		},
	}
}

func BenchmarkDecodeJSON(b *testing.B) {
	body := AppendJSON(nil, benchEntity(b), EncodeOptions{Level: MinimalMetadata})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeJSON(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	e := benchEntity(b)
	for _, level := range []MetadataLevel{NoMetadata, MinimalMetadata, FullMetadata} {
		b.Run(level.String(), func(b *testing.B) {
			opts := EncodeOptions{Level: level, BaseURL: "http://127.0.0.1:10002/devstoreaccount1", Account: "devstoreaccount1", Table: "orders"}
			buf := AppendJSON(nil, e, opts)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendJSON(buf[:0], e, opts)
			}
		})
	}
}

func BenchmarkAppendBinary(b *testing.B) {
	e := benchEntity(b)
	buf := AppendBinary(nil, e)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendBinary(buf[:0], e)
	}
}

func BenchmarkDecodeBinary(b *testing.B) {
	e := benchEntity(b)
	buf := AppendBinary(nil, e)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeBinary(buf, e.PartitionKey, e.RowKey); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRawGet(b *testing.B) {
	e := benchEntity(b)
	buf := AppendBinary(nil, e)
	for _, name := range []string{"Age", "NumberOfOrders", "Notes", "Missing"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := NewRaw(buf, e.PartitionKey, e.RowKey)
				if err != nil {
					b.Fatal(err)
				}
				r.Get(name)
			}
		})
	}
}

// BenchmarkStoredToJSON compares the two ways of answering a query from a stored entity:
// decode to an Entity then AppendJSON (the old path) against AppendJSONRaw. One op is one
// entity, so ns/op and allocs/op are per entity.
func BenchmarkStoredToJSON(b *testing.B) {
	e := benchEntity(b)
	stored := AppendBinary(nil, e)
	sel := []string{"RowKey", "Age", "Missing", "Description"}
	for _, level := range []MetadataLevel{NoMetadata, MinimalMetadata, FullMetadata} {
		for _, selName := range []string{"all", "select"} {
			o := EncodeOptions{Level: level, BaseURL: "http://127.0.0.1:10002/devstoreaccount1", Account: "devstoreaccount1", Table: "orders"}
			if selName == "select" {
				o.Select = sel
			}
			name := level.String() + "/" + selName
			b.Run(name+"/decode+AppendJSON", func(b *testing.B) {
				buf := make([]byte, 0, 4096)
				b.ReportAllocs()
				for b.Loop() {
					d, err := DecodeBinary(stored, e.PartitionKey, e.RowKey)
					if err != nil {
						b.Fatal(err)
					}
					buf = AppendJSON(buf[:0], d, o)
				}
			})
			b.Run(name+"/AppendJSONRaw", func(b *testing.B) {
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
			})
		}
	}
}
