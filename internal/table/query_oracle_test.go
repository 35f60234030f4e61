package table

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/tablo/tablo/internal/entity"
)

// This file is an independent model of the $filter language for the query tests: a random
// filter generator that prints filter text the way clients write it, and a brute-force
// evaluator written from the spec (spec/query.md §3) rather than from package query, so the
// differential tests check the parser, the evaluator, the planner and the paging together.

// keyAlphabet mixes ASCII around '_' (A < Z < _ < a), quotes, a 2-byte letter, the
// replacement character, a private-use character (U+E000 sorts after emoji in UTF-16) and an
// emoji (a surrogate pair).
var keyAlphabet = []string{"A", "Z", "_", "a", "b", "'", "é", "\uE000", "\uFFFD", "😀"}

func randKey(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(4) {
		b.WriteString(keyAlphabet[r.IntN(len(keyAlphabet))])
	}
	return b.String()
}

// compareUTF16 is the ordinal UTF-16 order, computed the obvious way.
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func compareKeys(aPK, aRK, bPK, bRK string) int {
	if c := compareUTF16(aPK, bPK); c != 0 {
		return c
	}
	return compareUTF16(aRK, bRK)
}

// Property names used by the random entities. Each has a usual type but may hold any type;
// "Missing" is never written.
var propNames = []string{"I32", "I64", "D", "S", "B", "G", "Bin", "DT", "Flag", "Mixed", "Missing"}

var usualType = map[string]entity.Type{
	"I32": entity.Int32, "I64": entity.Int64, "D": entity.Double, "S": entity.String,
	"B": entity.Boolean, "G": entity.Guid, "Bin": entity.Binary, "DT": entity.DateTime,
	"Flag": entity.Boolean, "PartitionKey": entity.String, "RowKey": entity.String,
	"Timestamp": entity.DateTime,
}

var allTypes = []entity.Type{entity.Binary, entity.Boolean, entity.DateTime, entity.Double,
	entity.Guid, entity.Int32, entity.Int64, entity.String}

var guids = []string{"00000000-0000-0000-0000-000000000001", "c9da6455-213d-42c9-9a79-3e9149a57833", "ffffffff-0000-0000-0000-000000000000"}

// baseTicks is a DateTime that the random values cluster around.
var baseTicks = entity.Ticks(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))

// randValueOf returns a value of type t from a small domain, so that equal values are common.
func randValueOf(r *rand.Rand, t entity.Type) entity.Value {
	switch t {
	case entity.String:
		return entity.StringValue(randKey(r))
	case entity.Boolean:
		return entity.BoolValue(r.IntN(2) == 0)
	case entity.Int32:
		return entity.Int32Value([]int32{-2, -1, 0, 1, 2, math.MaxInt32, math.MinInt32}[r.IntN(7)])
	case entity.Int64:
		return entity.Int64Value([]int64{-2, 0, 1, 2, 1 << 40, math.MinInt64, 1<<53 + 1}[r.IntN(7)])
	case entity.Double:
		return entity.DoubleValue([]float64{-1.5, 0, 1, 2, 2.5, 1e20, 1 << 53, math.Inf(1), math.Inf(-1), math.NaN()}[r.IntN(10)])
	case entity.DateTime:
		return entity.DateTimeValue(baseTicks + int64(r.IntN(5)-2)*entity.TicksPerSecond + int64(r.IntN(2)))
	case entity.Guid:
		return entity.GuidValue(guids[r.IntN(len(guids))])
	case entity.Binary:
		return entity.BinaryValue([][]byte{{}, {0}, {1, 2}, {0xff}, {1}}[r.IntN(5)])
	}
	panic("unreachable")
}

func randTypeFor(r *rand.Rand, name string) entity.Type {
	if t, ok := usualType[name]; ok && r.IntN(5) > 0 {
		return t
	}
	return allTypes[r.IntN(len(allTypes))]
}

// randProps returns a random subset of the properties with random values.
func randProps(r *rand.Rand) []entity.Property {
	var props []entity.Property
	for _, name := range propNames[:len(propNames)-1] {
		if r.IntN(3) > 0 {
			props = append(props, entity.Property{Name: name, Value: randValueOf(r, randTypeFor(r, name))})
		}
	}
	r.Shuffle(len(props), func(i, j int) { props[i], props[j] = props[j], props[i] })
	return props
}

// ---- filters ----

// fexpr is a filter expression of the model: it prints itself as filter text and evaluates
// itself on an entity.
type fexpr interface {
	text(r *rand.Rand) string
	eval(e *entity.Entity) bool
}

type fcompare struct {
	prop   string
	op     string // eq ne gt ge lt le, meaning "prop op lit"
	lit    entity.Value
	mirror bool // print "lit op' prop"
}

type flogical struct {
	or    bool
	terms []fexpr
}

type fnot struct{ x fexpr }

type fboolProp struct{ name string }

type fconst struct{ v bool }

var mirrored = map[string]string{"eq": "eq", "ne": "ne", "gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}

func (c fcompare) text(r *rand.Rand) string {
	lit := printLiteral(r, c.lit)
	if c.mirror {
		return lit + " " + mirrored[c.op] + " " + c.prop
	}
	return c.prop + " " + c.op + " " + lit
}

func (l flogical) text(r *rand.Rand) string {
	op := " and "
	if l.or {
		op = " or "
	}
	parts := make([]string, len(l.terms))
	for i, t := range l.terms {
		parts[i] = maybeParen(r, t)
	}
	return strings.Join(parts, op)
}

// maybeParen parenthesises logical sub-expressions always and others sometimes.
func maybeParen(r *rand.Rand, x fexpr) string {
	s := x.text(r)
	if _, ok := x.(flogical); ok || r.IntN(4) == 0 {
		return "(" + s + ")"
	}
	return s
}

func (n fnot) text(r *rand.Rand) string {
	switch x := n.x.(type) {
	case fboolProp, fconst:
		return "not " + x.text(r)
	}
	if r.IntN(2) == 0 {
		return "not(" + n.x.text(r) + ")"
	}
	return "not (" + n.x.text(r) + ")"
}

func (b fboolProp) text(*rand.Rand) string { return b.name }
func (c fconst) text(*rand.Rand) string    { return strconv.FormatBool(c.v) }

func (l flogical) eval(e *entity.Entity) bool {
	for _, t := range l.terms {
		if t.eval(e) == l.or {
			return l.or
		}
	}
	return !l.or
}

func (n fnot) eval(e *entity.Entity) bool { return !n.x.eval(e) }

func (b fboolProp) eval(e *entity.Entity) bool {
	v, ok := e.Get(b.name)
	return ok && v.Type == entity.Boolean && v.I != 0
}

func (c fconst) eval(*entity.Entity) bool { return c.v }

// eval follows spec/query.md §3: a missing property satisfies nothing; an incompatible
// literal type gives eq false, ne true, lt/le true, gt/ge false; NaN satisfies only ne.
func (c fcompare) eval(e *entity.Entity) bool {
	v, ok := e.Get(c.prop)
	if !ok {
		return false
	}
	cmp, kind := compareModel(v, c.lit)
	switch kind {
	case "mismatch":
		return c.op == "ne" || c.op == "lt" || c.op == "le"
	case "nan":
		return c.op == "ne"
	}
	switch c.op {
	case "eq":
		return cmp == 0
	case "ne":
		return cmp != 0
	case "gt":
		return cmp > 0
	case "ge":
		return cmp >= 0
	case "lt":
		return cmp < 0
	}
	return cmp <= 0
}

// compareModel compares a property value with a literal under the compatibility table of
// spec/query.md §3.2 (Int32 literals widen to Int64 properties; integer literals widen to
// Double properties, compared exactly).
func compareModel(v, lit entity.Value) (int, string) {
	switch {
	case v.Type == lit.Type:
		switch v.Type {
		case entity.String:
			return compareUTF16(v.S, lit.S), ""
		case entity.Guid:
			return strings.Compare(strings.ToLower(v.S), strings.ToLower(lit.S)), ""
		case entity.Binary:
			return bytes.Compare(v.B, lit.B), ""
		case entity.Double:
			if math.IsNaN(v.F) || math.IsNaN(lit.F) {
				return 0, "nan"
			}
			return big.NewFloat(v.F).Cmp(big.NewFloat(lit.F)), ""
		}
		return big.NewInt(v.I).Cmp(big.NewInt(lit.I)), ""
	case v.Type == entity.Int64 && lit.Type == entity.Int32:
		return big.NewInt(v.I).Cmp(big.NewInt(lit.I)), ""
	case v.Type == entity.Double && (lit.Type == entity.Int32 || lit.Type == entity.Int64):
		if math.IsNaN(v.F) {
			return 0, "nan"
		}
		return big.NewFloat(v.F).Cmp(new(big.Float).SetInt64(lit.I)), ""
	}
	return 0, "mismatch"
}

// ---- random generation ----

var opNames = []string{"eq", "ne", "gt", "ge", "lt", "le"}

// randFilter builds a random filter. Top-level conjunctions with key conditions are common
// so that every plan kind (point, row range, partition, partition range, union) shows up.
func randFilter(r *rand.Rand, ents []*entity.Entity) fexpr {
	switch r.IntN(8) {
	case 0: // point
		pk, rk := pickKeys(r, ents)
		return andOf(r, keyCmp("PartitionKey", "eq", pk), keyCmp("RowKey", "eq", rk), maybeResidual(r, ents))
	case 1: // row range
		pk, rk := pickKeys(r, ents)
		_, rk2 := pickKeys(r, ents)
		return andOf(r, keyCmp("PartitionKey", "eq", pk), keyCmp("RowKey", pick(r, "gt", "ge"), rk),
			keyCmp("RowKey", pick(r, "lt", "le"), rk2), maybeResidual(r, ents))
	case 2: // partition
		pk, _ := pickKeys(r, ents)
		return andOf(r, keyCmp("PartitionKey", "eq", pk), maybeResidual(r, ents))
	case 3: // partition range
		pk, _ := pickKeys(r, ents)
		pk2, _ := pickKeys(r, ents)
		return andOf(r, keyCmp("PartitionKey", pick(r, "gt", "ge"), pk), keyCmp("PartitionKey", pick(r, "lt", "le"), pk2), maybeResidual(r, ents))
	case 4: // union of points or partitions
		var terms []fexpr
		for range 2 + r.IntN(3) {
			pk, rk := pickKeys(r, ents)
			t := fexpr(keyCmp("PartitionKey", "eq", pk))
			if r.IntN(2) == 0 {
				t = flogical{terms: []fexpr{t, keyCmp("RowKey", "eq", rk)}}
			}
			terms = append(terms, t)
		}
		return andOf(r, flogical{or: true, terms: terms}, maybeResidual(r, ents))
	}
	return randExpr(r, ents, 3)
}

func maybeResidual(r *rand.Rand, ents []*entity.Entity) fexpr {
	if r.IntN(2) == 0 {
		return nil
	}
	return randExpr(r, ents, 2)
}

func andOf(r *rand.Rand, terms ...fexpr) fexpr {
	var ts []fexpr
	for _, t := range terms {
		if t != nil {
			ts = append(ts, t)
		}
	}
	r.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	if len(ts) == 1 {
		return ts[0]
	}
	return flogical{terms: ts}
}

func pick(r *rand.Rand, s ...string) string { return s[r.IntN(len(s))] }

func keyCmp(prop, op, v string) fcompare {
	return fcompare{prop: prop, op: op, lit: entity.StringValue(v)}
}

// pickKeys returns an existing entity's keys most of the time, else random keys.
func pickKeys(r *rand.Rand, ents []*entity.Entity) (string, string) {
	if len(ents) > 0 && r.IntN(4) > 0 {
		e := ents[r.IntN(len(ents))]
		return e.PartitionKey, e.RowKey
	}
	return randKey(r), randKey(r)
}

func randExpr(r *rand.Rand, ents []*entity.Entity, depth int) fexpr {
	if depth > 0 && r.IntN(2) == 0 {
		switch r.IntN(5) {
		case 0:
			return fnot{randExpr(r, ents, depth-1)}
		default:
			terms := []fexpr{randExpr(r, ents, depth-1), randExpr(r, ents, depth-1)}
			if r.IntN(3) == 0 {
				terms = append(terms, randExpr(r, ents, depth-1))
			}
			return flogical{or: r.IntN(2) == 0, terms: terms}
		}
	}
	switch r.IntN(12) {
	case 0:
		return fconst{r.IntN(2) == 0}
	case 1:
		return fboolProp{pick(r, "Flag", "B", "Mixed", "Missing", "PartitionKey")}
	case 2, 3:
		pk, rk := pickKeys(r, ents)
		if r.IntN(2) == 0 {
			return fcompare{prop: "PartitionKey", op: pick(r, opNames...), lit: entity.StringValue(pk), mirror: r.IntN(5) == 0}
		}
		return fcompare{prop: "RowKey", op: pick(r, opNames...), lit: entity.StringValue(rk), mirror: r.IntN(5) == 0}
	case 4:
		return fcompare{prop: "Timestamp", op: pick(r, opNames...), lit: randTimestampLiteral(r, ents), mirror: r.IntN(5) == 0}
	}
	name := propNames[r.IntN(len(propNames))]
	lit := randValueOf(r, randTypeFor(r, name))
	if r.IntN(6) == 0 {
		lit = randValueOf(r, allTypes[r.IntN(len(allTypes))])
	}
	return fcompare{prop: name, op: pick(r, opNames...), lit: lit, mirror: r.IntN(5) == 0}
}

func randTimestampLiteral(r *rand.Rand, ents []*entity.Entity) entity.Value {
	if len(ents) == 0 {
		return entity.DateTimeValue(baseTicks)
	}
	return entity.DateTimeValue(ents[r.IntN(len(ents))].Timestamp + int64(r.IntN(3)-1))
}

// printLiteral writes a literal in one of the spellings SDKs send (spec/query.md §2.1).
func printLiteral(r *rand.Rand, v entity.Value) string {
	switch v.Type {
	case entity.String:
		return "'" + strings.ReplaceAll(v.S, "'", "''") + "'"
	case entity.Boolean:
		return strconv.FormatBool(v.I != 0)
	case entity.Int32:
		return strconv.FormatInt(v.I, 10)
	case entity.Int64:
		return strconv.FormatInt(v.I, 10) + pick(r, "L", "l")
	case entity.Double:
		return printDouble(r, v.F)
	case entity.DateTime:
		return "datetime'" + printDateTime(r, v.I) + "'"
	case entity.Guid:
		g := v.S
		if r.IntN(2) == 0 {
			g = strings.ToUpper(g)
		}
		return pick(r, "guid", "GUID") + "'" + g + "'"
	case entity.Binary:
		h := fmt.Sprintf("%x", v.B)
		if r.IntN(2) == 0 {
			return "X'" + h + "'"
		}
		return "binary'" + strings.ToUpper(h) + "'"
	}
	panic("unreachable")
}

func printDouble(r *rand.Rand, f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	var s string
	switch r.IntN(4) {
	case 0: // Python str(float) / .NET "R"
		s = strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
	case 1: // exponent form
		s = strconv.FormatFloat(f, 'e', -1, 64)
	case 2: // .NET upper-case exponent
		s = strings.ToUpper(strconv.FormatFloat(f, 'E', -1, 64))
	default: // fixed with a d suffix
		s = strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		s += pick(r, "", "d", "D")
	}
	return s
}

// printDateTime writes ticks with 7, 3 or 0 fraction digits (when exact), and Z, an offset
// or no zone.
func printDateTime(r *rand.Rand, ticks int64) string {
	sec := ticks / entity.TicksPerSecond
	frac := ticks % entity.TicksPerSecond
	offsetMin := 0
	zone := "Z"
	switch r.IntN(4) {
	case 0:
		offsetMin = 90
		zone = "+01:30"
	case 1:
		offsetMin = -300
		zone = "-05:00"
	case 2:
		zone = pick(r, "", "Z")
	}
	t := time.Unix(sec+int64(offsetMin)*60, 0).UTC()
	s := t.Format("2006-01-02T15:04:05")
	switch {
	case frac == 0 && r.IntN(2) == 0:
	case frac%10000 == 0 && r.IntN(2) == 0:
		s += fmt.Sprintf(".%03d", frac/10000)
	default:
		s += fmt.Sprintf(".%07d", frac)
	}
	return s + zone
}
