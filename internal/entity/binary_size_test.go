package entity

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestBinarySizeExact: AppendBinary sizes its output exactly, so it grows dst once.
func TestBinarySizeExact(t *testing.T) {
	long := strings.Repeat("x", 1<<15) // a three-byte uvarint length
	cases := []*Entity{
		{},
		{Props: []Property{{Name: "S", Value: StringValue(long)}, {Name: "B", Value: BinaryValue([]byte(long[:200]))}}},
		{Props: []Property{{Name: "bad", Value: Value{}}}}, // invalid type: no payload
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 500 {
		cases = append(cases, randEntity(rng))
	}
	for i, e := range cases {
		n := binarySize(e)
		dst := make([]byte, 0, n)
		b := AppendBinary(dst, e)
		if n != len(b) {
			t.Fatalf("#%d: binarySize %d, encoding %d bytes", i, n, len(b))
		}
		if &b[:1][0] != &dst[:1][0] {
			t.Fatalf("#%d: AppendBinary reallocated a buffer of the announced size", i)
		}
	}
}

func TestUvarintLen(t *testing.T) {
	for _, x := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<21 - 1, 1 << 21, 1<<63 - 1, 1<<64 - 1} {
		var buf [16]byte
		if got, want := uvarintLen(x), len(appendUvarintRef(buf[:0], x)); got != want {
			t.Fatalf("uvarintLen(%d) = %d, want %d", x, got, want)
		}
	}
}

func appendUvarintRef(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}
