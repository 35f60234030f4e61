package entity

import (
	"testing"
)

// TestWithElementJSON: AppendJSONRaw copies the JSON a Raw carries for ElementOptions (and
// any options that write the same bytes), encodes the entity for every other form, and
// WithKeys drops the JSON (it names the old keys).
func TestWithElementJSON(t *testing.T) {
	e := &Entity{PartitionKey: "p", RowKey: "r", Timestamp: 42, Props: []Property{prop("A", Int64Value(7)), prop("S", StringValue("x"))}}
	stored := AppendBinary(nil, e)
	r, err := NewRaw(stored, e.PartitionKey, e.RowKey)
	if err != nil {
		t.Fatal(err)
	}
	marker := []byte(`{"cached":true}`)
	carried := r.WithElementJSON(marker)
	cases := []struct {
		name   string
		o      EncodeOptions
		copied bool
	}{
		{"element", ElementOptions(), true},
		{"minimal, other table", EncodeOptions{Level: MinimalMetadata, BaseURL: "http://h/a", Account: "a", Table: "t"}, true},
		{"with odata.metadata", EncodeOptions{Level: MinimalMetadata, Metadata: "http://h/a/$metadata#t/@Element"}, false},
		{"nometadata", EncodeOptions{Level: NoMetadata}, false},
		{"fullmetadata", EncodeOptions{Level: FullMetadata, BaseURL: "http://h/a", Account: "a", Table: "t"}, false},
		{"select", EncodeOptions{Level: MinimalMetadata, Select: []string{"A"}}, false},
		{"empty select", EncodeOptions{Level: MinimalMetadata, Select: []string{}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := AppendJSONRaw([]byte("x"), carried, c.o)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]byte("x"), marker...)
			if !c.copied {
				want = AppendJSON([]byte("x"), e, c.o)
			}
			if string(got) != string(want) {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
	// The encoded JSON for ElementOptions is what the carrier must hold: the same bytes either way.
	encoded, err := AppendJSONRaw(nil, r, ElementOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := AppendJSONRaw(nil, r.WithElementJSON(encoded), ElementOptions()); string(got) != string(encoded) {
		t.Fatalf("got %s, want %s", got, encoded)
	}
	rekeyed := carried.WithKeys("p2", "r2")
	got, err := AppendJSONRaw(nil, rekeyed, ElementOptions())
	if err != nil {
		t.Fatal(err)
	}
	e2 := *e
	e2.PartitionKey, e2.RowKey = "p2", "r2"
	if want := AppendJSON(nil, &e2, ElementOptions()); string(got) != string(want) {
		t.Fatalf("after WithKeys: got %s, want %s", got, want)
	}
}
