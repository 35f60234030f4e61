package entity

import "testing"

// TestRawViewMatchesGet: View returns the same values as Get, without copying.
func TestRawViewMatchesGet(t *testing.T) {
	e := &Entity{Timestamp: 5, Props: []Property{
		{Name: "S", Value: StringValue("hello")},
		{Name: "E", Value: StringValue("")},
		{Name: "G", Value: GuidValue("c9da6455-213d-42c9-9a79-3e9149a57833")},
		{Name: "B", Value: BinaryValue([]byte{1, 2, 3})},
		{Name: "I", Value: Int64Value(-7)},
	}}
	b := AppendBinary(nil, e)
	r, err := NewRaw(b, "p", "r")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"S", "E", "G", "B", "I", "PartitionKey", "Timestamp", "Missing"} {
		g, gok := r.Get(name)
		v, vok := r.View(name)
		if gok != vok || !Equal(g, v) {
			t.Errorf("%s: Get %v %v, View %v %v", name, g, gok, v, vok)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = r.View("S") }); n != 0 {
		t.Errorf("View allocates %v times", n)
	}
}
