package query

import "testing"

const benchFilter = "PartitionKey eq 'pk ''quoted''' or (StringVal ne 'it''s' and DateTimeVal ge datetime'2024-01-01T00:00:00Z' and GuidVal eq guid'c9da6455-213d-42c9-9a79-3e9149a57833' and Int64Val eq 9007199254740993L)"

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(benchFilter); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEval(b *testing.B) {
	f, err := Parse("PartitionKey eq 'pk' and (Str ge 'a' or I64 gt 3) and not (Dbl lt 1.5) and Bool")
	if err != nil {
		b.Fatal(err)
	}
	e := typedEntity()
	b.ReportAllocs()
	for b.Loop() {
		f.Eval(e)
	}
}

func BenchmarkPlan(b *testing.B) {
	f, err := Parse("PartitionKey eq 'p1' and RowKey ge 'a' and RowKey lt 'b' and Age gt 3")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		PlanQuery(f).Spans(1)
	}
}
