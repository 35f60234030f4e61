package query

import (
	"math"
	"testing"

	"github.com/tablo/tablo/internal/entity"
)

// typedEntity has one property of every EDM type, named after the type.
func typedEntity() *entity.Entity {
	return &entity.Entity{
		PartitionKey: "pk",
		RowKey:       "rk",
		Timestamp:    entity.Ticks(mustTime("2024-05-01T10:20:30.1234567Z")),
		Props: []entity.Property{
			{Name: "Str", Value: entity.StringValue("m")},
			{Name: "Bool", Value: entity.BoolValue(true)},
			{Name: "I32", Value: entity.Int32Value(5)},
			{Name: "I64", Value: entity.Int64Value(5)},
			{Name: "Dbl", Value: entity.DoubleValue(5)},
			{Name: "DT", Value: entity.DateTimeValue(entity.Ticks(mustTime("2020-01-01T00:00:00Z")))},
			{Name: "Guid", Value: entity.GuidValue("c9da6455-213d-42c9-9a79-3e9149a57833")},
			{Name: "Bin", Value: entity.BinaryValue([]byte{0x0a, 0xff})},
			{Name: "Nan", Value: entity.DoubleValue(math.NaN())},
		},
	}
}

// literals has one literal per type; the value doesn't matter for the mismatch rows.
var literals = map[entity.Type]string{
	entity.String:   "'m'",
	entity.Boolean:  "true",
	entity.Int32:    "5",
	entity.Int64:    "5L",
	entity.Double:   "5.0",
	entity.DateTime: "datetime'2020-01-01T00:00:00Z'",
	entity.Guid:     "guid'c9da6455-213d-42c9-9a79-3e9149a57833'",
	entity.Binary:   "X'0aff'",
}

var propOfType = map[entity.Type]string{
	entity.String: "Str", entity.Boolean: "Bool", entity.Int32: "I32", entity.Int64: "I64",
	entity.Double: "Dbl", entity.DateTime: "DT", entity.Guid: "Guid", entity.Binary: "Bin",
}

// compatible is query.md §3.2, written out independently of the implementation.
var compatible = map[entity.Type][]entity.Type{
	entity.String:   {entity.String},
	entity.Boolean:  {entity.Boolean},
	entity.Int32:    {entity.Int32},
	entity.Int64:    {entity.Int64, entity.Int32},
	entity.Double:   {entity.Double, entity.Int32, entity.Int64},
	entity.DateTime: {entity.DateTime},
	entity.Guid:     {entity.Guid},
	entity.Binary:   {entity.Binary},
}

var allOps = []string{"eq", "ne", "lt", "le", "gt", "ge"}

func evalString(t *testing.T, filter string, g Getter) bool {
	t.Helper()
	f, err := Parse(filter)
	if err != nil {
		t.Fatalf("Parse(%q): %v", filter, err)
	}
	return f.Eval(g)
}

// TestEvalMissing: an absent property satisfies no comparison (not even ne), and "not" is
// plain negation.
func TestEvalMissing(t *testing.T) {
	e := typedEntity()
	for typ, lit := range literals {
		for _, op := range allOps {
			filter := "Missing " + op + " " + lit
			if evalString(t, filter, e) {
				t.Errorf("%s (%v literal) = true, want false", filter, typ)
			}
			if !evalString(t, "not ("+filter+")", e) {
				t.Errorf("not (%s) = false, want true", filter)
			}
		}
	}
	if evalString(t, "Missing", e) || !evalString(t, "not Missing", e) {
		t.Error("bare missing property must be false, its negation true")
	}
}

// TestEvalMismatch: a present property with an incompatible literal: eq false, ne true,
// lt/le true, gt/ge false — for every incompatible pair of the §3.2 table.
func TestEvalMismatch(t *testing.T) {
	want := map[string]bool{"eq": false, "ne": true, "lt": true, "le": true, "gt": false, "ge": false}
	e := typedEntity()
	pairs := 0
	for ptyp, prop := range propOfType {
		for ltyp, lit := range literals {
			if contains(compatible[ptyp], ltyp) {
				continue
			}
			pairs++
			for _, op := range allOps {
				filter := prop + " " + op + " " + lit
				if got := evalString(t, filter, e); got != want[op] {
					t.Errorf("%s (%v vs %v literal) = %v, want %v", filter, ptyp, ltyp, got, want[op])
				}
				// Mirrored spelling gives the same answer.
				mirror := lit + " " + map[string]string{"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}[op] + " " + prop
				if got := evalString(t, mirror, e); got != want[op] {
					t.Errorf("%s = %v, want %v", mirror, got, want[op])
				}
			}
		}
	}
	if pairs != 8*8-11 {
		t.Errorf("checked %d mismatched pairs, want 53", pairs)
	}
}

func contains[T comparable](s []T, x T) bool {
	for _, y := range s {
		if x == y {
			return true
		}
	}
	return false
}

// TestEvalCompatible: every compatible pair compares by value. The fixture's values equal the
// literals, so eq/le/ge hold and ne/lt/gt don't.
func TestEvalCompatible(t *testing.T) {
	want := map[string]bool{"eq": true, "ne": false, "lt": false, "le": true, "gt": false, "ge": true}
	e := typedEntity()
	for ptyp, ltyps := range compatible {
		for _, ltyp := range ltyps {
			for _, op := range allOps {
				filter := propOfType[ptyp] + " " + op + " " + literals[ltyp]
				if got := evalString(t, filter, e); got != want[op] {
					t.Errorf("%s = %v, want %v", filter, got, want[op])
				}
			}
		}
	}
}

func TestEvalValues(t *testing.T) {
	e := typedEntity()
	e.Props = append(e.Props,
		entity.Property{Name: "Big", Value: entity.Int64Value(9007199254740993)},
		entity.Property{Name: "BigD", Value: entity.DoubleValue(9007199254740992)},
		entity.Property{Name: "Half", Value: entity.DoubleValue(2.5)},
		entity.Property{Name: "NegHalf", Value: entity.DoubleValue(-2.5)},
		entity.Property{Name: "Inf", Value: entity.DoubleValue(math.Inf(1))},
		entity.Property{Name: "Upper", Value: entity.StringValue("B")},
		entity.Property{Name: "Emoji", Value: entity.StringValue("😀")},
		entity.Property{Name: "False", Value: entity.BoolValue(false)},
		entity.Property{Name: "Fine", Value: entity.DateTimeValue(entity.Ticks(mustTime("2020-01-01T00:00:00.0000001Z")))},
		entity.Property{Name: "Empty", Value: entity.BinaryValue(nil)},
		entity.Property{Name: "NumStr", Value: entity.StringValue("3")},
	)
	cases := []struct {
		filter string
		want   bool
	}{
		// Strings: ordinal by UTF-16 code unit, case-sensitive.
		{"Str gt 'l'", true}, {"Str lt 'n'", true}, {"Str gt 'M'", true}, {"Upper lt 'a'", true},
		{"Str eq 'M'", false}, {"Str ge 'm'", true}, {"Str gt 'm'", false}, {"Str lt 'ma'", true},
		{"Emoji lt '\uFFFD'", true}, {"Emoji gt '\uD7FF'", true}, {"Emoji gt 'é'", true},
		{"NumStr eq 3", false}, {"NumStr ne 3", true}, {"Str lt ''", false}, {"Str gt ''", true},
		// Booleans: false < true.
		{"Bool", true}, {"False", false}, {"not False", true}, {"Str", false}, {"not Str", true},
		{"False lt true", true}, {"Bool gt false", true}, {"Bool eq false", false},
		// Integers and widening.
		{"I32 gt 4", true}, {"I32 lt -2147483648", false}, {"I64 eq 5", true}, {"I64 lt 6", true},
		{"Big eq 9007199254740993L", true}, {"Big gt 9007199254740992L", true},
		{"Big gt 2147483647", true},
		{"Dbl eq 5", true}, {"Dbl eq 5L", true}, {"Dbl lt 6", true},
		{"Half gt 2", true}, {"Half lt 3", true}, {"Half eq 2", false}, {"NegHalf lt -2", true}, {"NegHalf gt -3", true},
		{"BigD eq 9007199254740993L", false}, {"BigD lt 9007199254740993L", true}, // exact, not rounded
		{"Inf gt 9223372036854775807L", true}, {"Dbl gt -9223372036854775808L", true},
		{"Dbl eq 5.0d", true}, {"Dbl lt INF", true}, {"Dbl gt -INF", true}, {"Inf eq INF", true},
		// NaN: every comparison false except ne.
		{"Nan eq NaN", false}, {"Nan ne NaN", true}, {"Nan lt 1.0", false}, {"Nan ge 1.0", false},
		{"Nan ne 1", true}, {"Nan gt 1L", false}, {"Dbl eq NaN", false}, {"Dbl ne NaN", true}, {"Dbl le NaN", false},
		// DateTime at 100 ns.
		{"DT eq datetime'2020-01-01T00:00:00.0000000Z'", true},
		{"Fine gt datetime'2020-01-01T00:00:00Z'", true},
		{"Fine eq datetime'2020-01-01T00:00:00.0000001Z'", true},
		{"Fine lt datetime'2020-01-01T00:00:00.0000002Z'", true},
		{"DT eq datetime'2020-01-01T01:00:00+01:00'", true},
		{"DT eq '2020-01-01T00:00:00Z'", false}, {"DT lt ''", true}, {"DT gt ''", false}, {"DT ne ''", true},
		// Guid: case-insensitive by value; a GUID-looking string is a String.
		{"Guid eq guid'C9DA6455-213D-42C9-9A79-3E9149A57833'", true},
		{"Guid eq 'c9da6455-213d-42c9-9a79-3e9149a57833'", false},
		{"Guid gt guid'00000000-0000-0000-0000-000000000000'", true},
		// Binary bytewise.
		{"Bin eq X'0AFF'", true}, {"Bin lt X'0b'", true}, {"Bin gt X'0a'", true}, {"Empty lt X'00'", true},
		{"Empty eq X''", true},
		// System properties.
		{"PartitionKey eq 'pk' and RowKey eq 'rk'", true},
		{"Timestamp gt datetime'2024-05-01T10:20:30.1234566Z'", true},
		{"Timestamp eq datetime'2024-05-01T10:20:30.1234567Z'", true},
		{"PartitionKey eq 3", false}, {"PartitionKey lt 3", true},
		// Logic.
		{"true", true}, {"false", false}, {"not true", false},
		{"I32 eq 5 and Str eq 'm'", true}, {"I32 eq 5 and Str eq 'x'", false},
		{"I32 eq 6 or Str eq 'm'", true}, {"I32 eq 6 or Str eq 'x'", false},
		{"I32 eq 6 or Str eq 'x' and Bool", false}, {"(I32 eq 6 or Str eq 'm') and Bool", true},
		{"not (Missing eq 'x')", true}, {"not (Missing ne 'x')", true},
	}
	for _, c := range cases {
		if got := evalString(t, c.filter, e); got != c.want {
			t.Errorf("%s = %v, want %v", c.filter, got, c.want)
		}
	}
}

// TestEvalTables: Query Tables filters see only TableName.
func TestEvalTables(t *testing.T) {
	cases := []struct {
		filter, name string
		want         bool
	}{
		{"TableName eq 'azwire'", "azwire", true},
		{"TableName eq 'azwire'", "AzWire", false},
		{"TableName ge 'golist' and TableName lt 'golisu'", "golist3", true},
		{"TableName ge 'golist' and TableName lt 'golisu'", "gowire", false},
		{"PartitionKey eq 'x'", "t", false},
		{"not (Other eq 1)", "t", true},
	}
	for _, c := range cases {
		if got := evalString(t, c.filter, &TableRow{Name: c.name}); got != c.want {
			t.Errorf("%s on %q = %v, want %v", c.filter, c.name, got, c.want)
		}
	}
}

func TestEvalAllocs(t *testing.T) {
	e := typedEntity()
	f, err := Parse("PartitionKey eq 'pk' and (Str ge 'a' or I64 gt 3) and not (Dbl lt 1.5) and Guid ne guid'c9da6455-213d-42c9-9a79-3e9149a57833' and Bin ne X'00' and Bool")
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { f.Eval(e) }); n != 0 {
		t.Errorf("Eval allocates %v times", n)
	}
}
