package entity

import (
	"math/rand/v2"
	"testing"
)

// TestRoundTrip sends random entities of all types through JSON (full and minimal metadata)
// and the binary encoding, and requires bit-for-bit equality.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 2000 {
		want := randEntity(rng)
		if err := CheckLimits(want); err != nil {
			t.Fatalf("generator made an invalid entity: %v", err)
		}
		for _, level := range []MetadataLevel{FullMetadata, MinimalMetadata} {
			js := AppendJSON(nil, want, EncodeOptions{Level: level, Metadata: "m", BaseURL: "http://h/a", Account: "a", Table: "t"})
			got, keys, err := DecodeJSON(js)
			if err != nil {
				t.Fatalf("#%d %v: decode own JSON: %v\n%.2000s", i, level, err, js)
			}
			if keys != both {
				t.Fatalf("#%d: keys %+v", i, keys)
			}
			got.Timestamp = want.Timestamp // a body Timestamp is ignored by design
			if d := entityDiff(got, want); d != "" {
				t.Fatalf("#%d %v JSON: %s\n%.2000s", i, level, d, js)
			}
		}

		bin := AppendBinary(nil, want)
		got, err := DecodeBinary(bin, want.PartitionKey, want.RowKey)
		if err != nil {
			t.Fatalf("#%d: DecodeBinary: %v", i, err)
		}
		if d := entityDiff(got, want); d != "" {
			t.Fatalf("#%d binary: %s", i, d)
		}
		raw, err := NewRaw(bin, want.PartitionKey, want.RowKey)
		if err != nil {
			t.Fatal(err)
		}
		if raw.Timestamp() != want.Timestamp {
			t.Fatalf("#%d: Raw.Timestamp", i)
		}
		for _, name := range append(names(want.Props), "PartitionKey", "RowKey", "Timestamp") {
			rv, rok := raw.Get(name)
			ev, eok := want.Get(name)
			if rok != eok || !Equal(rv, ev) {
				t.Fatalf("#%d: Raw.Get(%q) = %s,%v want %s", i, name, describe(rv), rok, describe(ev))
			}
		}
		if _, ok := raw.Get("NoSuchProperty"); ok {
			t.Fatalf("#%d: missing property found", i)
		}
	}
}

func TestDecodeBinaryCopies(t *testing.T) {
	want := &Entity{PartitionKey: "p", RowKey: "r", Timestamp: 5, Props: []Property{
		prop("S", StringValue("hello")), prop("B", BinaryValue([]byte{1, 2, 3})), prop("G", GuidValue("c9da6455-213d-42c9-9a79-3e9149a57833")),
	}}
	buf := AppendBinary(nil, want)
	got, err := DecodeBinary(buf, "p", "r")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := NewRaw(buf, "p", "r")
	rb, _ := raw.Get("B")
	rs, _ := raw.Get("S")
	for i := range buf {
		buf[i] = 0xAA
	}
	if d := entityDiff(got, want); d != "" {
		t.Fatalf("decoded entity changed with its buffer: %s", d)
	}
	if !Equal(rb, want.Props[1].Value) || !Equal(rs, want.Props[0].Value) {
		t.Fatal("Raw.Get values changed with the buffer")
	}
}

func TestDecodeBinaryCorrupt(t *testing.T) {
	good := AppendBinary(nil, &Entity{Timestamp: 1, Props: []Property{prop("A", StringValue("abc")), prop("B", Int64Value(1))}})
	cases := map[string][]byte{
		"empty":          nil,
		"short header":   good[:5],
		"bad version":    append([]byte{9}, good[1:]...),
		"truncated":      good[:len(good)-1],
		"trailing":       append(append([]byte(nil), good...), 0),
		"huge count":     append(append([]byte(nil), good[:headerSize]...), 0xff, 0xff, 0xff, 0xff, 0x0f),
		"bad type":       append(append([]byte(nil), good[:headerSize]...), 1, 1, 'A', 99),
		"bad bool":       append(append([]byte(nil), good[:headerSize]...), 1, 1, 'A', byte(Boolean), 2),
		"long name":      append(append([]byte(nil), good[:headerSize]...), 1, 50, 'A', byte(Int32), 0, 0, 0, 0),
		"long string":    append(append([]byte(nil), good[:headerSize]...), 1, 1, 'A', byte(String), 50, 'x'),
		"varint overrun": append(append([]byte(nil), good[:headerSize]...), 1, 0xff),
		// Exact-capacity copies: a read past the end must fail, not see the bytes beyond.
		"header only":      exactCopy(good[:headerSize]),
		"truncated, exact": exactCopy(good[:len(good)-1]),
	}
	for name, b := range cases {
		if _, err := DecodeBinary(b, "", ""); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if r, err := NewRaw(b, "", ""); err == nil {
			r.Get("A")
			r.Get("B")
		}
	}
}

// exactCopy copies b into a slice whose capacity equals its length.
func exactCopy(b []byte) []byte {
	c := make([]byte, len(b))
	copy(c, b)
	return c
}
