package entity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// entityDiff compares two entities bit for bit (Timestamp included).
func entityDiff(got, want *Entity) string {
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey {
		return fmt.Sprintf("keys %q/%q, want %q/%q", got.PartitionKey, got.RowKey, want.PartitionKey, want.RowKey)
	}
	if got.Timestamp != want.Timestamp {
		return fmt.Sprintf("Timestamp %d, want %d", got.Timestamp, want.Timestamp)
	}
	return propsDiff(got.Props, want.Props)
}

// runePalette mixes ASCII, characters JSON must escape, multi-byte and astral characters.
var runePalette = []rune{
	'a', 'Z', '0', ' ', '\'', '"', '\\', '/', '%', '&', '\n', '\t', 0x00, 0x1f, 0x7f, 0x85,
	'é', 'ß', '日', '😀', '\u2028', '\u2029', '\ufffd', '\uffff', '\ue000', '\U0010FFFF',
}

var keyPalette = []rune{'a', 'Z', '0', ' ', '\'', '"', '%', '&', '+', ':', '*', '(', ')', 'é', '日', '😀', '\u00a0', '\ue000'}

var namePalette = []rune{'a', 'Z', '_', '0', 'é', '名', 'Ⅻ', '\u0301'}

func randString(rng *rand.Rand, palette []rune, n int) string {
	var b strings.Builder
	for range n {
		b.WriteRune(palette[rng.IntN(len(palette))])
	}
	return b.String()
}

// randEntity returns a valid entity (it passes DecodeJSON's rules when encoded) with values
// of every type, extremes included.
func randEntity(rng *rand.Rand) *Entity {
	e := &Entity{
		PartitionKey: randString(rng, keyPalette, rng.IntN(12)),
		RowKey:       randString(rng, keyPalette, rng.IntN(12)),
		Timestamp:    MinTicks + rng.Int64N(MaxTicks-MinTicks+1),
	}
	if rng.IntN(20) == 0 {
		e.RowKey = strings.Repeat("😀", MaxKeyLength/2)
	}
	n := rng.IntN(24)
	huge := false
	for i := range n {
		name := fmt.Sprintf("P%d_", i) + randString(rng, namePalette, rng.IntN(4))
		e.Props = append(e.Props, Property{Name: name, Value: randValue(rng, &huge)})
	}
	return e
}

func randValue(rng *rand.Rand, huge *bool) Value {
	switch Type(1 + rng.IntN(8)) {
	case Binary:
		if !*huge && rng.IntN(30) == 0 {
			*huge = true
			b := make([]byte, MaxBinaryLength)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			return BinaryValue(b)
		}
		b := make([]byte, rng.IntN(20))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return BinaryValue(b)
	case Boolean:
		return BoolValue(rng.IntN(2) == 1)
	case DateTime:
		switch rng.IntN(4) {
		case 0:
			return DateTimeValue(MinTicks)
		case 1:
			return DateTimeValue(MaxTicks)
		}
		return DateTimeValue(MinTicks + rng.Int64N(MaxTicks-MinTicks+1))
	case Double:
		special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 3, 1e21, 1e-7,
			math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1, 200.23}
		if rng.IntN(2) == 0 {
			return DoubleValue(special[rng.IntN(len(special))])
		}
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) {
			f = math.NaN() // only the canonical NaN survives JSON
		}
		return DoubleValue(f)
	case Guid:
		const hex = "0123456789abcdef"
		b := []byte("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx")
		for i := range b {
			if b[i] == 'x' {
				b[i] = hex[rng.IntN(16)]
			}
		}
		return GuidValue(string(b))
	case Int32:
		ints := []int32{math.MinInt32, math.MaxInt32, 0, -1}
		if rng.IntN(2) == 0 {
			return Int32Value(ints[rng.IntN(len(ints))])
		}
		return Int32Value(int32(rng.Uint32()))
	case Int64:
		ints := []int64{math.MinInt64, math.MaxInt64, 0, -1, 1 << 53, 1<<53 + 1}
		if rng.IntN(2) == 0 {
			return Int64Value(ints[rng.IntN(len(ints))])
		}
		return Int64Value(int64(rng.Uint64()))
	default:
		if !*huge && rng.IntN(30) == 0 {
			*huge = true
			if rng.IntN(2) == 0 {
				return StringValue(strings.Repeat("😀", MaxStringLength/2))
			}
			return StringValue(strings.Repeat("a", MaxStringLength))
		}
		return StringValue(randString(rng, runePalette, rng.IntN(30)))
	}
}
