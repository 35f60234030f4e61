package entity

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

func prop(name string, v Value) Property { return Property{Name: name, Value: v} }

func mustTicks(t testing.TB, s string) int64 {
	t.Helper()
	ticks, err := ParseDateTime(s)
	if err != nil {
		t.Fatalf("ParseDateTime(%q): %v", s, err)
	}
	return ticks
}

// body builds {"PartitionKey":"p","RowKey":"r",<members>}.
func body(members string) string {
	if members == "" {
		return `{"PartitionKey":"p","RowKey":"r"}`
	}
	return `{"PartitionKey":"p","RowKey":"r",` + members + `}`
}

// manyProps returns n members "P0":0,"P1":1,... (plus a null every other one when withNulls).
func manyProps(n int, withNulls bool) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"P%d":%d`, i, i)
		if withNulls {
			fmt.Fprintf(&b, `,"N%d":null`, i)
		}
	}
	return b.String()
}

func bigStrings(n, size int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"S%d":"%s"`, i, strings.Repeat("a", size))
	}
	return b.String()
}

type decodeCase struct {
	name string
	body string
	// want is checked when code is empty: the custom properties in order.
	want   []Property
	pk, rk string
	keys   KeyPresence
	code   azerr.Code
	msg    string // exact error message when set
}

var both = KeyPresence{PartitionKey: true, RowKey: true}

func decodeCases(t testing.TB) []decodeCase {
	dt := func(s string) Value { return DateTimeValue(mustTicks(t, s)) }
	guid := "c9da6455-213d-42c9-9a79-3e9149a57833"
	return []decodeCase{
		// Bodies the SDKs send (spec/wire-samples).
		{
			name: "go all types (annotations after, sorted)",
			body: `{"BinaryVal":"AAH+/2hp","BinaryVal@odata.type":"Edm.Binary","BoolVal":true,"DateTimeVal":"2024-01-02T03:04:05.1234567Z","DateTimeVal@odata.type":"Edm.DateTime","DoubleVal":3.5,"EmptyString":"","GuidVal":"c9da6455-213d-42c9-9a79-3e9149a57833","GuidVal@odata.type":"Edm.Guid","Int32Val":42,"Int64Val":"9007199254740993","Int64Val@odata.type":"Edm.Int64","IntegralDouble":2,"PartitionKey":"pk1","RowKey":"rk1","StringVal":"hello","UnicodeString":"héllo wörld ✓ 日本語 😀"}`,
			pk:   "pk1", rk: "rk1", keys: both,
			want: []Property{
				prop("BinaryVal", BinaryValue([]byte{0x00, 0x01, 0xfe, 0xff, 'h', 'i'})),
				prop("BoolVal", BoolValue(true)),
				prop("DateTimeVal", dt("2024-01-02T03:04:05.1234567Z")),
				prop("DoubleVal", DoubleValue(3.5)),
				prop("EmptyString", StringValue("")),
				prop("GuidVal", GuidValue(guid)),
				prop("Int32Val", Int32Value(42)),
				prop("Int64Val", Int64Value(9007199254740993)),
				prop("IntegralDouble", Int32Value(2)),
				prop("StringVal", StringValue("hello")),
				prop("UnicodeString", StringValue("héllo wörld ✓ 日本語 😀")),
			},
		},
		{
			name: "go raw doubles",
			body: `{"Int32Explicit":7,"Int32Explicit@odata.type":"Edm.Int32","IntegralDouble":2,"IntegralDouble@odata.type":"Edm.Double","NaNDouble":"NaN","NaNDouble@odata.type":"Edm.Double","NegInf":"-Infinity","NegInf@odata.type":"Edm.Double","PartitionKey":"pk1","PosInf":"Infinity","PosInf@odata.type":"Edm.Double","RowKey":"rk-doubles"}`,
			pk:   "pk1", rk: "rk-doubles", keys: both,
			want: []Property{
				prop("Int32Explicit", Int32Value(7)),
				prop("IntegralDouble", DoubleValue(2)),
				prop("NaNDouble", DoubleValue(math.NaN())),
				prop("NegInf", DoubleValue(math.Inf(-1))),
				prop("PosInf", DoubleValue(math.Inf(1))),
			},
		},
		{
			name: "python (spaces, Edm.String on keys, escaped unicode)",
			body: `{"PartitionKey": "pk1", "PartitionKey@odata.type": "Edm.String", "RowKey": "rk1", "RowKey@odata.type": "Edm.String", "Int64Val": "9007199254740993", "Int64Val@odata.type": "Edm.Int64", "IntegralDouble": 2.0, "IntegralDouble@odata.type": "Edm.Double", "DateTimeVal": "2024-01-02T03:04:05.123456Z", "DateTimeVal@odata.type": "Edm.DateTime", "UnicodeString": "h\u00e9llo w\u00f6rld \u2713 \u65e5\u672c\u8a9e \ud83d\ude00", "UnicodeString@odata.type": "Edm.String", "BoolTyped": false, "BoolTyped@odata.type": "Edm.Boolean"}`,
			pk:   "pk1", rk: "rk1", keys: both,
			want: []Property{
				prop("Int64Val", Int64Value(9007199254740993)),
				prop("IntegralDouble", DoubleValue(2)),
				prop("DateTimeVal", dt("2024-01-02T03:04:05.123456Z")),
				prop("UnicodeString", StringValue("héllo wörld ✓ 日本語 😀")),
				prop("BoolTyped", BoolValue(false)),
			},
		},
		{
			name: "js typed values",
			body: `{"PartitionKey":"pk1","RowKey":"rk-doubles","Int64FromString":"-9223372036854775808","Int64FromString@odata.type":"Edm.Int64","DoubleFromString":"1.5","DoubleFromString@odata.type":"Edm.Double","Big":"1.23456789012346e+24","Big@odata.type":"Edm.Double","StringTyped":"123","StringTyped@odata.type":"Edm.String","Missing":null}`,
			pk:   "pk1", rk: "rk-doubles", keys: both,
			want: []Property{
				prop("Int64FromString", Int64Value(math.MinInt64)),
				prop("DoubleFromString", DoubleValue(1.5)),
				prop("Big", DoubleValue(1.23456789012346e+24)),
				prop("StringTyped", StringValue("123")),
			},
		},
		{
			name: "go special keys with escapes",
			body: `{"PartitionKey":"pk ''quoted''","RowKey":"rk-ü+\u0026=%","StringVal":"it's"}`,
			pk:   "pk ''quoted''", rk: "rk-ü+&=%", keys: both,
			want: []Property{prop("StringVal", StringValue("it's"))},
		},

		// Envelope and ignored members.
		{name: "empty object", body: `{}`},
		{name: "bom", body: "\uFEFF" + body(`"A":1`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", Int32Value(1))}},
		{name: "whitespace", body: " \r\n\t{ \"PartitionKey\" : \"p\" ,\n\"RowKey\":\"r\" } \n", pk: "p", rk: "r", keys: both},
		{
			name: "odata members and Timestamp ignored",
			body: body(`"odata.metadata":"x","odata.etag":"W/\"datetime'2024'\"","odata.type":"a.b","odata.id":"u","odata.editLink":"e","Timestamp":"2024-01-01T00:00:00Z","Timestamp@odata.type":"Edm.DateTime","A@odata.etag":"x","odata.nested":{"a":[1,{"b":null}]},"A":1`),
			pk:   "p", rk: "r", keys: both, want: []Property{prop("A", Int32Value(1))},
		},
		// An annotation of the entity in the "X@odata.*" form with no X (OData v4 JSON's
		// "@odata.etag") is an annotation too, not a property with an invalid name.
		{name: "odata annotations with no name before @ ignored", body: body(`"@odata.etag":"W/\"x\"","@odata.context":"c","A":1`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", Int32Value(1))}},
		{name: "timestamp of any type ignored", body: body(`"Timestamp":123`), pk: "p", rk: "r", keys: both},
		{name: "null keys are absent", body: `{"PartitionKey":null,"RowKey":"r"}`, rk: "r", keys: KeyPresence{RowKey: true}},
		{name: "no keys", body: `{"A":true}`, want: []Property{prop("A", BoolValue(true))}},
		{name: "nulls dropped", body: body(`"A":null,"B":1,"C":null`), pk: "p", rk: "r", keys: both, want: []Property{prop("B", Int32Value(1))}},
		{name: "annotation without value ignored", body: body(`"X@odata.type":"Edm.Int64"`), pk: "p", rk: "r", keys: both},
		{name: "annotated null dropped", body: body(`"X@odata.type":"Edm.Int64","X":null`), pk: "p", rk: "r", keys: both},
		{name: "null annotation ignored", body: body(`"X@odata.type":null,"X":1`), pk: "p", rk: "r", keys: both, want: []Property{prop("X", Int32Value(1))}},
		{name: "annotation before value", body: body(`"X@odata.type":"Edm.Int64","X":"5"`), pk: "p", rk: "r", keys: both, want: []Property{prop("X", Int64Value(5))}},
		{name: "escaped name", body: body(`"N\u0061me":"v"`), pk: "p", rk: "r", keys: both, want: []Property{prop("Name", StringValue("v"))}},
		{name: "lone surrogate becomes U+FFFD", body: body(`"S":"a\ud800b"`), pk: "p", rk: "r", keys: both, want: []Property{prop("S", StringValue("a\uFFFDb"))}},
		{name: "string escapes", body: body(`"S":"\"\\\/\b\f\n\r\t\u0000\u2028"`), pk: "p", rk: "r", keys: both, want: []Property{prop("S", StringValue("\"\\/\b\f\n\r\t\x00\u2028"))}},

		// Syntax.
		{name: "empty body", body: ``, code: azerr.InvalidInput},
		{name: "only bom", body: "\uFEFF", code: azerr.InvalidInput},
		{name: "array body", body: `[]`, code: azerr.InvalidInput},
		{name: "string body", body: `"x"`, code: azerr.InvalidInput},
		{name: "unterminated", body: `{"PartitionKey":"p"`, code: azerr.InvalidInput},
		{name: "trailing comma", body: body(`"A":1,`), code: azerr.InvalidInput},
		{name: "trailing garbage", body: body(``) + `x`, code: azerr.InvalidInput},
		{name: "two objects", body: `{}{}`, code: azerr.InvalidInput},
		{name: "leading zero", body: body(`"A":01`), code: azerr.InvalidInput},
		{name: "bare dot", body: body(`"A":1.`), code: azerr.InvalidInput},
		{name: "plus sign", body: body(`"A":+1`), code: azerr.InvalidInput},
		{name: "bad literal", body: body(`"A":tru`), code: azerr.InvalidInput},
		{name: "single quotes", body: `{'PartitionKey':'p'}`, code: azerr.InvalidInput},
		{name: "raw control char", body: body("\"A\":\"a\nb\""), code: azerr.InvalidInput},
		{name: "bad escape", body: body(`"A":"\x"`), code: azerr.InvalidInput},
		{name: "short unicode escape", body: body(`"A":"\u12"`), code: azerr.InvalidInput},
		{name: "invalid utf-8", body: body("\"A\":\"\xff\""), code: azerr.InvalidInput},
		{name: "missing colon", body: `{"A" 1}`, code: azerr.InvalidInput},
		// Bodies cut short where a value is due: the scanner must not read past the end.
		{name: "ends after a colon", body: `{"A":`, code: azerr.InvalidInput},
		{name: "ends after a colon and spaces", body: `{"A":  `, code: azerr.InvalidInput},
		{name: "ends inside an array", body: `{"odata.x":[1,`, code: azerr.InvalidInput},
		{name: "ends inside an object", body: `{"odata.x":{"a":`, code: azerr.InvalidInput},
		{name: "ends after a literal", body: `{"A":true`, code: azerr.InvalidInput},
		{name: "ends inside a literal", body: `{"A":tru`, code: azerr.InvalidInput},
		{name: "ends after a number", body: `{"A":12`, code: azerr.InvalidInput},
		{name: "ends after a minus", body: `{"A":-`, code: azerr.InvalidInput},
		{name: "upper-case hex escapes", body: body(`"A":"\u00C9\u00FF\uABCD\u00e9"`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", StringValue("Éÿ\uabcdé"))}},
		{name: "hex escape past F", body: body(`"A":"\u00G0"`), code: azerr.InvalidInput},
		{name: "hex escape before A", body: body(`"A":"\u00@0"`), code: azerr.InvalidInput},
		{name: "ends after a minus in a skipped value", body: `{"odata.x":[-`, code: azerr.InvalidInput},
		{name: "lone surrogate ends the string", body: body(`"A":"\ud800"`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", StringValue("\ufffd"))}},
		{name: "ends after a fraction", body: `{"A":1.5`, code: azerr.InvalidInput},
		{name: "ends after an exponent's e", body: `{"A":1e`, code: azerr.InvalidInput},
		{name: "ends inside a nested literal", body: `{"odata.x":[nul`, code: azerr.InvalidInput},
		// Nesting: maxNesting levels inside a member value are skipped, one more is refused.
		{name: "nested to the limit", body: body(`"odata.x":` + strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting)), pk: "p", rk: "r", keys: both},
		{name: "nested past the limit", body: body(`"odata.x":` + strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1)), code: azerr.InvalidInput},
		{name: "too deep", body: body(`"odata.x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100)), code: azerr.InvalidInput},

		// Duplicates.
		{name: "duplicate property", body: body(`"A":1,"A":2`), code: azerr.DuplicatePropertiesSpecified},
		{name: "duplicate via escape", body: body(`"A":1,"\u0041":2`), code: azerr.DuplicatePropertiesSpecified},
		{name: "duplicate with null", body: body(`"A":null,"A":2`), code: azerr.DuplicatePropertiesSpecified},
		{name: "duplicate annotation", body: body(`"A":"1","A@odata.type":"Edm.Int64","A@odata.type":"Edm.Int64"`), code: azerr.DuplicatePropertiesSpecified},
		{name: "duplicate key", body: `{"PartitionKey":"a","PartitionKey":"a","RowKey":"r"}`, code: azerr.DuplicatePropertiesSpecified},
		{name: "duplicate among many", body: body(manyProps(100, false) + `,"P7":1`), code: azerr.DuplicatePropertiesSpecified},
		{name: "case differs is fine", body: body(`"A":1,"a":2`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", Int32Value(1)), prop("a", Int32Value(2))}},

		// Values that are not scalars.
		{name: "array value", body: body(`"A":[1]`), code: azerr.InvalidInput},
		{name: "object value", body: body(`"A":{}`), code: azerr.InvalidInput},
		{name: "annotated object value", body: body(`"A":{},"A@odata.type":"Edm.String"`), code: azerr.InvalidInput},

		// Annotations.
		{name: "unknown type", body: body(`"A":1,"A@odata.type":"Edm.Byte"`), code: azerr.InvalidInput},
		{name: "DateTimeOffset unknown", body: body(`"A":"2024-01-01T00:00:00Z","A@odata.type":"Edm.DateTimeOffset"`), code: azerr.InvalidInput},
		{name: "annotation not a string", body: body(`"A":1,"A@odata.type":1`), code: azerr.InvalidInput},
		{name: "annotation case matters", body: body(`"A":1,"A@odata.type":"edm.int32"`), code: azerr.InvalidInput},

		// Int32 / Int64 / inference.
		{name: "int32 bounds", body: body(`"A":2147483647,"B":-2147483648,"C":-0`), pk: "p", rk: "r", keys: both,
			want: []Property{prop("A", Int32Value(math.MaxInt32)), prop("B", Int32Value(math.MinInt32)), prop("C", Int32Value(0))}},
		{name: "unannotated integer above int32", body: body(`"A":2147483648`), code: azerr.InvalidInput},
		{name: "unannotated integer below int32", body: body(`"A":-2147483649`), code: azerr.InvalidInput},
		{name: "int32 annotated fraction", body: body(`"A":1.0,"A@odata.type":"Edm.Int32"`), code: azerr.InvalidInput},
		{name: "int32 annotated out of range", body: body(`"A":3000000000,"A@odata.type":"Edm.Int32"`), code: azerr.InvalidInput},
		{name: "int64 bounds", body: body(`"A":"9223372036854775807","A@odata.type":"Edm.Int64","B":"-9223372036854775808","B@odata.type":"Edm.Int64"`), pk: "p", rk: "r", keys: both,
			want: []Property{prop("A", Int64Value(math.MaxInt64)), prop("B", Int64Value(math.MinInt64))}},
		{name: "int64 as number", body: body(`"A":3000000000,"A@odata.type":"Edm.Int64"`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", Int64Value(3000000000))}},
		{name: "int64 exact beyond 2^53", body: body(`"A":9007199254740993,"A@odata.type":"Edm.Int64"`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", Int64Value(9007199254740993))}},
		{name: "int64 abc", body: body(`"A":"abc","A@odata.type":"Edm.Int64"`), code: azerr.InvalidInput},
		{name: "int64 overflow", body: body(`"A":"9223372036854775808","A@odata.type":"Edm.Int64"`), code: azerr.InvalidInput},
		{name: "int64 number overflow", body: body(`"A":9223372036854775808,"A@odata.type":"Edm.Int64"`), code: azerr.InvalidInput},
		{name: "int64 fraction", body: body(`"A":1.5,"A@odata.type":"Edm.Int64"`), code: azerr.InvalidInput},
		{name: "int64 empty", body: body(`"A":"","A@odata.type":"Edm.Int64"`), code: azerr.InvalidInput},
		{name: "int64 bool", body: body(`"A":true,"A@odata.type":"Edm.Int64"`), code: azerr.InvalidInput},

		// Double.
		{name: "doubles inferred", body: body(`"A":1.5,"B":1e5,"C":3.0,"D":-0.0,"E":1E-7`), pk: "p", rk: "r", keys: both,
			want: []Property{prop("A", DoubleValue(1.5)), prop("B", DoubleValue(1e5)), prop("C", DoubleValue(3)), prop("D", DoubleValue(math.Copysign(0, -1))), prop("E", DoubleValue(1e-7))}},
		{name: "double annotated integer", body: body(`"A":3,"A@odata.type":"Edm.Double"`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", DoubleValue(3))}},
		{name: "double bad string", body: body(`"A":"abc","A@odata.type":"Edm.Double"`), code: azerr.InvalidInput},
		{name: "double lower-case nan", body: body(`"A":"nan","A@odata.type":"Edm.Double"`), code: azerr.InvalidInput},
		{name: "double padded string", body: body(`"A":" 1","A@odata.type":"Edm.Double"`), code: azerr.InvalidInput},
		{name: "double hex string", body: body(`"A":"0x1p-2","A@odata.type":"Edm.Double"`), code: azerr.InvalidInput},
		{name: "double overflow", body: body(`"A":1e400`), code: azerr.InvalidInput},
		{name: "unannotated NaN string is a string", body: body(`"A":"NaN"`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", StringValue("NaN"))}},
		{name: "double bool", body: body(`"A":false,"A@odata.type":"Edm.Double"`), code: azerr.InvalidInput},

		// Boolean / String / Guid / Binary.
		{name: "boolean annotated strings", body: body(`"A":"true","A@odata.type":"Edm.Boolean","B":"False","B@odata.type":"Edm.Boolean","C":"TRUE","C@odata.type":"Edm.Boolean"`),
			pk: "p", rk: "r", keys: both, want: []Property{prop("A", BoolValue(true)), prop("B", BoolValue(false)), prop("C", BoolValue(true))}},
		{name: "boolean annotated bad string", body: body(`"A":"yes","A@odata.type":"Edm.Boolean"`), code: azerr.InvalidInput},
		{name: "boolean annotated digit string", body: body(`"A":"1","A@odata.type":"Edm.Boolean"`), code: azerr.InvalidInput},
		{name: "int32 annotated strings", body: body(`"A":"32","A@odata.type":"Edm.Int32","B":"-2147483648","B@odata.type":"Edm.Int32"`),
			pk: "p", rk: "r", keys: both, want: []Property{prop("A", Int32Value(32)), prop("B", Int32Value(-2147483648))}},
		{name: "int32 annotated string overflow", body: body(`"A":"2147483648","A@odata.type":"Edm.Int32"`), code: azerr.InvalidInput},
		{name: "int32 annotated bad string", body: body(`"A":"3.5","A@odata.type":"Edm.Int32"`), code: azerr.InvalidInput},
		{name: "double annotated string", body: body(`"A":"1.5","A@odata.type":"Edm.Double"`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", DoubleValue(1.5))}},
		{name: "string annotated number", body: body(`"A":1,"A@odata.type":"Edm.String"`), code: azerr.InvalidInput},
		{name: "guid upper case", body: body(`"A":"C9DA6455-213D-42C9-9A79-3E9149A57833","A@odata.type":"Edm.Guid"`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", GuidValue(guid))}},
		{name: "guid xyz", body: body(`"A":"xyz","A@odata.type":"Edm.Guid"`), code: azerr.InvalidInput},
		{name: "guid braces", body: body(`"A":"{c9da6455-213d-42c9-9a79-3e9149a57833}","A@odata.type":"Edm.Guid"`), code: azerr.InvalidInput},
		{name: "guid misplaced dash", body: body(`"A":"c9da645-5213d-42c9-9a79-3e9149a57833","A@odata.type":"Edm.Guid"`), code: azerr.InvalidInput},
		{name: "binary escaped slash", body: body(`"A":"AAH+\/2hp","A@odata.type":"Edm.Binary"`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", BinaryValue([]byte{0, 1, 0xfe, 0xff, 'h', 'i'}))}},
		{name: "binary empty", body: body(`"A":"","A@odata.type":"Edm.Binary"`), pk: "p", rk: "r", keys: both, want: []Property{prop("A", BinaryValue(nil))}},
		{name: "binary bad", body: body(`"A":"!!!!","A@odata.type":"Edm.Binary"`), code: azerr.InvalidInput},
		{name: "binary unpadded", body: body(`"A":"AQI","A@odata.type":"Edm.Binary"`), code: azerr.InvalidInput},
		{name: "binary url alphabet", body: body(`"A":"AAH-_2hp","A@odata.type":"Edm.Binary"`), code: azerr.InvalidInput},
		{name: "binary number", body: body(`"A":1,"A@odata.type":"Edm.Binary"`), code: azerr.InvalidInput},

		// DateTime.
		{name: "datetime forms", body: body(`"A":"2008-07-10T00:00:00","A@odata.type":"Edm.DateTime","B":"2024-01-02T03:04:05.123Z","B@odata.type":"Edm.DateTime","C":"2024-01-02T05:04:05.5+02:00","C@odata.type":"Edm.DateTime","D":"2024-01-01T23:30:00-01:00","D@odata.type":"Edm.DateTime"`),
			pk: "p", rk: "r", keys: both,
			want: []Property{prop("A", dt("2008-07-10T00:00:00Z")), prop("B", dt("2024-01-02T03:04:05.123Z")), prop("C", dt("2024-01-02T03:04:05.5Z")), prop("D", dt("2024-01-02T00:30:00Z"))}},
		{name: "datetime range ends", body: body(`"A":"1601-01-01T00:00:00Z","A@odata.type":"Edm.DateTime","B":"9999-12-31T23:59:59.9999999Z","B@odata.type":"Edm.DateTime"`),
			pk: "p", rk: "r", keys: both, want: []Property{prop("A", DateTimeValue(MinTicks)), prop("B", DateTimeValue(MaxTicks))}},
		{name: "datetime min value", body: body(`"When":"0001-01-01T00:00:00Z","When@odata.type":"Edm.DateTime"`),
			code: azerr.OutOfRangeInput, msg: "The 'When' parameter of value '01/01/0001 00:00:00' is out of range."},
		{name: "datetime before 1601", body: body(`"D":"1600-12-31T23:59:59.9999999Z","D@odata.type":"Edm.DateTime"`),
			code: azerr.OutOfRangeInput, msg: "The 'D' parameter of value '12/31/1600 23:59:59' is out of range."},
		{name: "datetime offset pushes below 1601", body: body(`"D":"1601-01-01T00:30:00+01:00","D@odata.type":"Edm.DateTime"`), code: azerr.OutOfRangeInput},
		{name: "datetime offset pushes above 9999", body: body(`"D":"9999-12-31T23:30:00-01:00","D@odata.type":"Edm.DateTime"`), code: azerr.OutOfRangeInput},
		{name: "datetime 8 digits", body: body(`"D":"2024-01-02T03:04:05.12345678Z","D@odata.type":"Edm.DateTime"`), code: azerr.InvalidInput},
		{name: "datetime empty fraction", body: body(`"D":"2024-01-02T03:04:05.Z","D@odata.type":"Edm.DateTime"`), code: azerr.InvalidInput},
		{name: "datetime text", body: body(`"D":"not a date","D@odata.type":"Edm.DateTime"`), code: azerr.InvalidInput},
		{name: "datetime feb 29 non-leap", body: body(`"D":"2023-02-29T00:00:00Z","D@odata.type":"Edm.DateTime"`), code: azerr.InvalidInput},
		{name: "datetime hour 24", body: body(`"D":"2023-02-01T24:00:00Z","D@odata.type":"Edm.DateTime"`), code: azerr.InvalidInput},
		{name: "datetime year 0", body: body(`"D":"0000-01-01T00:00:00Z","D@odata.type":"Edm.DateTime"`), code: azerr.InvalidInput},
		{name: "datetime bad zone", body: body(`"D":"2023-02-01T00:00:00+0100","D@odata.type":"Edm.DateTime"`), code: azerr.InvalidInput},
		{name: "datetime number", body: body(`"D":5,"D@odata.type":"Edm.DateTime"`), code: azerr.InvalidInput},
		{name: "unannotated date is a string", body: body(`"D":"2023-02-01T00:00:00Z"`), pk: "p", rk: "r", keys: both, want: []Property{prop("D", StringValue("2023-02-01T00:00:00Z"))}},

		// Keys.
		{name: "empty keys", body: `{"PartitionKey":"","RowKey":""}`, keys: both},
		{name: "key as number", body: `{"PartitionKey":1,"RowKey":"r"}`, code: azerr.InvalidInput},
		{name: "key as bool", body: `{"PartitionKey":"p","RowKey":true}`, code: azerr.InvalidInput},
		{name: "key with int annotation", body: `{"PartitionKey":"1","PartitionKey@odata.type":"Edm.Int32","RowKey":"r"}`, code: azerr.InvalidInput},
		{name: "key slash", body: `{"PartitionKey":"a/b","RowKey":"r"}`, code: azerr.OutOfRangeInput, msg: "The 'PartitionKey' parameter of value 'a/b' is out of range."},
		{name: "key backslash", body: `{"PartitionKey":"p","RowKey":"a\\b"}`, code: azerr.OutOfRangeInput, msg: `The 'RowKey' parameter of value 'a\b' is out of range.`},
		{name: "key hash", body: `{"PartitionKey":"#","RowKey":"r"}`, code: azerr.OutOfRangeInput},
		{name: "key question", body: `{"PartitionKey":"p","RowKey":"?"}`, code: azerr.OutOfRangeInput},
		{name: "key nul", body: `{"PartitionKey":"\u0000","RowKey":"r"}`, code: azerr.OutOfRangeInput},
		{name: "key tab", body: `{"PartitionKey":"a\tb","RowKey":"r"}`, code: azerr.OutOfRangeInput},
		{name: "key DEL", body: `{"PartitionKey":"\u007f","RowKey":"r"}`, code: azerr.OutOfRangeInput},
		{name: "key C1", body: `{"PartitionKey":"\u009f","RowKey":"r"}`, code: azerr.OutOfRangeInput},
		{name: "key allowed punctuation", body: `{"PartitionKey":" '\"%+&:*é😀\u00a0","RowKey":"r"}`, pk: " '\"%+&:*é😀\u00a0", rk: "r", keys: both},
		{name: "key 1024", body: `{"PartitionKey":"` + strings.Repeat("k", 1024) + `","RowKey":"r"}`, pk: strings.Repeat("k", 1024), rk: "r", keys: both},
		{name: "key 1025", body: `{"PartitionKey":"` + strings.Repeat("k", 1025) + `","RowKey":"r"}`, code: azerr.PropertyValueTooLarge},
		{name: "key 512 emoji", body: `{"PartitionKey":"p","RowKey":"` + strings.Repeat("😀", 512) + `"}`, pk: "p", rk: strings.Repeat("😀", 512), keys: both},
		{name: "key 513 emoji", body: `{"PartitionKey":"p","RowKey":"` + strings.Repeat("😀", 513) + `"}`, code: azerr.PropertyValueTooLarge},

		// Property names.
		{name: "name ok forms", body: body(`"_x":1,"é":2,"a1":3,"Ünïcödé_名前":4`), pk: "p", rk: "r", keys: both,
			want: []Property{prop("_x", Int32Value(1)), prop("é", Int32Value(2)), prop("a1", Int32Value(3)), prop("Ünïcödé_名前", Int32Value(4))}},
		{name: "name digit first", body: body(`"1a":1`), code: azerr.PropertyNameInvalid},
		{name: "name dash", body: body(`"a-b":1`), code: azerr.PropertyNameInvalid},
		{name: "name space", body: body(`"a b":1`), code: azerr.PropertyNameInvalid},
		{name: "name dot", body: body(`"a.b":1`), code: azerr.PropertyNameInvalid},
		{name: "name at", body: body(`"a@b":1`), code: azerr.PropertyNameInvalid},
		{name: "name empty", body: body(`"":1`), code: azerr.PropertyNameInvalid},
		{name: "name invalid even if null", body: body(`"a-b":null`), code: azerr.PropertyNameInvalid},
		{name: "name 255", body: body(`"` + strings.Repeat("n", 255) + `":1`), pk: "p", rk: "r", keys: both, want: []Property{prop(strings.Repeat("n", 255), Int32Value(1))}},
		{name: "name 256", body: body(`"` + strings.Repeat("n", 256) + `":1`), code: azerr.PropertyNameTooLong},

		// Sizes and counts.
		{name: "string 32768", body: body(`"S":"` + strings.Repeat("a", 32768) + `"`), pk: "p", rk: "r", keys: both, want: []Property{prop("S", StringValue(strings.Repeat("a", 32768)))}},
		{name: "string 32769", body: body(`"S":"` + strings.Repeat("a", 32769) + `"`), code: azerr.PropertyValueTooLarge},
		{name: "string 16385 emoji", body: body(`"S":"` + strings.Repeat("😀", 16385) + `"`), code: azerr.PropertyValueTooLarge},
		{name: "binary 65536", body: body(`"B":"` + b64(65536) + `","B@odata.type":"Edm.Binary"`), pk: "p", rk: "r", keys: both, want: []Property{prop("B", BinaryValue(make([]byte, 65536)))}},
		{name: "binary 65537", body: body(`"B":"` + b64(65537) + `","B@odata.type":"Edm.Binary"`), code: azerr.PropertyValueTooLarge},
		{name: "252 properties", body: body(manyProps(252, true)), pk: "p", rk: "r", keys: both, want: intProps(252)},
		{name: "253 properties", body: body(manyProps(253, false)), code: azerr.TooManyProperties},
		{name: "32 big strings fit", body: body(bigStrings(32, 16000)), pk: "p", rk: "r", keys: both, want: stringProps(32, 16000)},
		{name: "33 big strings too large", body: body(bigStrings(33, 16000)), code: azerr.EntityTooLarge},
	}
}

func b64(n int) string {
	// n zero bytes in standard base64.
	s := strings.Repeat("AAAA", n/3)
	switch n % 3 {
	case 1:
		s += "AA=="
	case 2:
		s += "AAA="
	}
	return s
}

func intProps(n int) []Property {
	ps := make([]Property, n)
	for i := range ps {
		ps[i] = prop(fmt.Sprintf("P%d", i), Int32Value(int32(i)))
	}
	return ps
}

func stringProps(n, size int) []Property {
	ps := make([]Property, n)
	for i := range ps {
		ps[i] = prop(fmt.Sprintf("S%d", i), StringValue(strings.Repeat("a", size)))
	}
	return ps
}

func TestDecodeJSON(t *testing.T) {
	for _, tc := range decodeCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			e, keys, err := DecodeJSON([]byte(tc.body))
			if tc.code != "" {
				if err == nil {
					t.Fatalf("want %s, got entity %+v", tc.code, e)
				}
				ae := azerr.From(err)
				if ae.Code != tc.code {
					t.Fatalf("want %s, got %v", tc.code, err)
				}
				if tc.msg != "" && ae.Message() != tc.msg {
					t.Fatalf("message\n got %q\nwant %q", ae.Message(), tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if keys != tc.keys {
				t.Errorf("keys = %+v, want %+v", keys, tc.keys)
			}
			if e.PartitionKey != tc.pk || e.RowKey != tc.rk || e.Timestamp != 0 {
				t.Errorf("keys %q/%q ts %d, want %q/%q", e.PartitionKey, e.RowKey, e.Timestamp, tc.pk, tc.rk)
			}
			if diff := propsDiff(e.Props, tc.want); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// propsDiff compares properties bit for bit, in order.
func propsDiff(got, want []Property) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d properties, want %d: %v", len(got), len(want), names(got))
	}
	for i := range got {
		if got[i].Name != want[i].Name || !Equal(got[i].Value, want[i].Value) {
			return fmt.Sprintf("property %d: got %s=%s, want %s=%s", i,
				got[i].Name, describe(got[i].Value), want[i].Name, describe(want[i].Value))
		}
	}
	return ""
}

func names(ps []Property) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

func describe(v Value) string {
	s := v.S
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return fmt.Sprintf("%s{S:%q B:%d bytes I:%d F:%v(%#x)}", v.Type, s, len(v.B), v.I, v.F, math.Float64bits(v.F))
}

func TestKeyPresenceRequire(t *testing.T) {
	if err := both.Require(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []KeyPresence{{}, {PartitionKey: true}, {RowKey: true}} {
		if !azerr.Is(k.Require(), azerr.PropertiesNeedValue) {
			t.Errorf("%+v: want PropertiesNeedValue", k)
		}
	}
}
