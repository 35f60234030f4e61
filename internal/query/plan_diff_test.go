package query

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
)

// The differential test: for random entities and random filters, scanning the plan's spans
// in encoded-key order and applying the residual must give exactly the brute-force answer
// (every entity in key order, filtered by Eval) — same entities, same order.

var keyAlphabet = []string{"a", "b", "'", "é", "😀", "\uE000", "\uFFFD", "A"}

func randKey(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(3) {
		b.WriteString(keyAlphabet[r.IntN(len(keyAlphabet))])
	}
	return b.String()
}

var propNames = []string{"N", "S", "F", "Missing"}

func randValue(r *rand.Rand) entity.Value {
	switch r.IntN(9) {
	case 0:
		return entity.StringValue(randKey(r))
	case 1:
		return entity.BoolValue(r.IntN(2) == 0)
	case 2:
		return entity.Int32Value(int32(r.IntN(5) - 2))
	case 3:
		return entity.Int64Value(int64(r.IntN(5) - 2))
	case 4:
		return entity.DoubleValue([]float64{-1.5, 0, 1, 2.5, math.NaN(), math.Inf(1)}[r.IntN(6)])
	case 5:
		return entity.DateTimeValue(int64(r.IntN(3)) * entity.TicksPerSecond)
	case 6:
		return entity.GuidValue([]string{"00000000-0000-0000-0000-000000000001", "c9da6455-213d-42c9-9a79-3e9149a57833"}[r.IntN(2)])
	case 7:
		return entity.BinaryValue([][]byte{nil, {0}, {1, 2}}[r.IntN(3)])
	}
	return entity.StringValue("")
}

func randEntities(r *rand.Rand, n int) []*entity.Entity {
	seen := map[[2]string]bool{}
	var out []*entity.Entity
	for len(out) < n {
		pk, rk := randKey(r), randKey(r)
		if seen[[2]string{pk, rk}] {
			continue
		}
		seen[[2]string{pk, rk}] = true
		e := &entity.Entity{PartitionKey: pk, RowKey: rk, Timestamp: int64(r.IntN(3)) * entity.TicksPerSecond}
		for _, name := range propNames[:3] {
			if r.IntN(4) > 0 {
				e.Props = append(e.Props, entity.Property{Name: name, Value: randValue(r)})
			}
		}
		out = append(out, e)
	}
	return out
}

var ops = []string{"eq", "ne", "gt", "ge", "lt", "le"}

// randFilter writes a random filter, biased towards key comparisons and nesting.
func randFilter(r *rand.Rand, depth int) string {
	if depth > 0 && r.IntN(3) > 0 {
		switch r.IntN(5) {
		case 0:
			return "not " + randParen(r, depth-1)
		case 1, 2:
			return randParen(r, depth-1) + " and " + randParen(r, depth-1)
		default:
			return randParen(r, depth-1) + " or " + randParen(r, depth-1)
		}
	}
	switch r.IntN(10) {
	case 0:
		return []string{"true", "false", "F", "PartitionKey", "Missing"}[r.IntN(5)]
	case 1, 2:
		return randCompare(r, propNames[r.IntN(len(propNames))], FormatLiteral(randValue(r)))
	case 3:
		if r.IntN(2) == 0 { // the point / row-range idioms
			return randCompare(r, "PartitionKey", quote(randKey(r))) + " and " + randCompare(r, "RowKey", quote(randKey(r)))
		}
		return randCompare(r, "Timestamp", FormatLiteral(entity.DateTimeValue(int64(r.IntN(3))*entity.TicksPerSecond)))
	}
	key := "PartitionKey"
	if r.IntN(3) == 0 {
		key = "RowKey"
	}
	lit := quote(randKey(r))
	if r.IntN(20) == 0 {
		lit = quote(randKey(r) + "\xc3") // invalid UTF-8 (e.g. a stray %C3 in the URL)
	}
	if r.IntN(8) == 0 {
		lit = FormatLiteral(randValue(r))
	}
	return randCompare(r, key, lit)
}

func randParen(r *rand.Rand, depth int) string {
	s := randFilter(r, depth)
	if strings.Contains(s, " ") {
		return "(" + s + ")"
	}
	return s
}

func randCompare(r *rand.Rand, prop, lit string) string {
	op := ops[r.IntN(len(ops))]
	if r.IntN(5) == 0 { // literal on the left, mirrored
		return lit + " " + Op(slices.Index(ops, op)+1).mirror().String() + " " + prop
	}
	return prop + " " + op + " " + lit
}

func TestPlanDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const tableID = 42
	kinds := map[Kind]int{}
	for iter := range 4000 {
		ents := randEntities(r, 10+r.IntN(50))
		// Brute force order: by encoded key, which is the keys package's (PK, RK) order.
		encoded := make(map[*entity.Entity][]byte, len(ents))
		for _, e := range ents {
			encoded[e] = keys.Entity(tableID, e.PartitionKey, e.RowKey)
		}
		slices.SortFunc(ents, func(a, b *entity.Entity) int { return bytes.Compare(encoded[a], encoded[b]) })
		text := randFilter(r, 4)
		f, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", text, err)
		}
		var want []string
		for _, e := range ents {
			if f.Eval(e) {
				want = append(want, e.PartitionKey+"/"+e.RowKey)
			}
		}
		p := PlanQuery(f)
		kinds[p.Kind]++
		spans := p.Spans(tableID)
		for i, s := range spans {
			if bytes.Compare(s.Start, s.End) >= 0 || i > 0 && bytes.Compare(spans[i-1].End, s.Start) > 0 {
				t.Fatalf("%q: spans not sorted and disjoint: %q", text, spans)
			}
		}
		var got []string
		for _, s := range spans {
			for _, e := range ents {
				k := encoded[e]
				if bytes.Compare(k, s.Start) >= 0 && bytes.Compare(k, s.End) < 0 && p.Residual.Eval(e) {
					got = append(got, e.PartitionKey+"/"+e.RowKey)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d: filter %q\nplan %s residual %q\ngot  %q\nwant %q", iter, text, p, p.Residual, got, want)
		}
		// The canonical print means the same thing.
		g, err := Parse(f.String())
		if err != nil {
			t.Fatalf("reparse of %q: %v", f.String(), err)
		}
		for _, e := range ents {
			if g.Eval(e) != f.Eval(e) {
				t.Fatalf("%q and its print %q disagree on %+v", text, f.String(), e)
			}
		}
	}
	for _, k := range []Kind{Empty, Point, RowRange, Partition, PartitionRange, Union, TableScan} {
		if kinds[k] == 0 {
			t.Errorf("no %v plan generated; kinds %v", k, kinds)
		}
	}
	t.Log(fmt.Sprint(kinds))
}
