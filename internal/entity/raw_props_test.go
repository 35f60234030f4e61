package entity

import (
	"math"
	"testing"
)

func TestEachValueAndViewValue(t *testing.T) {
	e := &Entity{PartitionKey: "p", RowKey: "r", Timestamp: 42, Props: []Property{
		{Name: "S", Value: StringValue("héllo")},
		{Name: "B", Value: BinaryValue([]byte{0, 1, 2})},
		{Name: "T", Value: BoolValue(true)},
		{Name: "I", Value: Int32Value(-7)},
		{Name: "L", Value: Int64Value(math.MinInt64)},
		{Name: "D", Value: DoubleValue(math.Copysign(0, -1))},
		{Name: "W", Value: DateTimeValue(123456789)},
		{Name: "G", Value: GuidValue("c9da6455-213d-42c9-9a79-3e9149a57833")},
		{Name: "E", Value: StringValue("")},
	}}
	raw, err := NewRaw(AppendBinary(nil, e), "p", "r")
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	err = raw.EachValue(func(name, enc []byte) bool {
		want := e.Props[i]
		if string(name) != want.Name {
			t.Fatalf("property %d: name %q, want %q", i, name, want.Name)
		}
		if string(enc) != string(AppendValue(nil, want.Value)) {
			t.Fatalf("%s: encoded %x, want %x", name, enc, AppendValue(nil, want.Value))
		}
		v, ok := ViewValue(enc)
		if !ok || !Equal(v, want.Value) {
			t.Fatalf("%s: ViewValue = %+v %v, want %+v", name, v, ok, want.Value)
		}
		i++
		return true
	})
	if err != nil || i != len(e.Props) {
		t.Fatalf("EachValue: %v after %d properties", err, i)
	}
	// Stopping early.
	n := 0
	_ = raw.EachValue(func(name, enc []byte) bool { n++; return n < 2 })
	if n != 2 {
		t.Fatalf("EachValue did not stop: %d calls", n)
	}
	// Malformed input never panics.
	for _, b := range [][]byte{nil, {1}, {1, 0, 0, 0, 0, 0, 0, 0, 0, 5}, {1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 'x', 99}} {
		r := Raw{b: b}
		if err := r.EachValue(func(_, _ []byte) bool { return true }); err == nil {
			t.Errorf("EachValue(%x): no error", b)
		}
	}
	if _, ok := ViewValue([]byte{byte(String), 5, 'a'}); ok {
		t.Error("ViewValue accepted a truncated string")
	}
}
