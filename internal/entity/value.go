package entity

import (
	"bytes"
	"cmp"
	"math"
	"time"

	"github.com/tablo/tablo/internal/keys"
)

// Type is an EDM type. The zero Type is invalid.
type Type uint8

// The eight EDM types of the Table service.
const (
	Binary Type = iota + 1
	Boolean
	DateTime
	Double
	Guid
	Int32
	Int64
	String
)

var typeNames = [...]string{
	Binary:   "Edm.Binary",
	Boolean:  "Edm.Boolean",
	DateTime: "Edm.DateTime",
	Double:   "Edm.Double",
	Guid:     "Edm.Guid",
	Int32:    "Edm.Int32",
	Int64:    "Edm.Int64",
	String:   "Edm.String",
}

// String returns the EDM name, e.g. "Edm.Int64".
func (t Type) String() string {
	if t == 0 || int(t) >= len(typeNames) {
		return "Edm.Invalid"
	}
	return typeNames[t]
}

// ParseType parses an EDM type name as written in @odata.type annotations.
func ParseType(s string) (Type, bool) {
	for t := Binary; t <= String; t++ {
		if typeNames[t] == s {
			return t, true
		}
	}
	return 0, false
}

// Value is one typed property value. Only the field that belongs to Type is meaningful:
//
//	String, Guid: S      Binary: B      Double: F
//	Int32, Int64: I      Boolean: I (0 or 1)      DateTime: I (ticks, see Ticks)
type Value struct {
	Type Type
	S    string
	B    []byte
	I    int64
	F    float64
}

// Constructors for each type.
func StringValue(s string) Value       { return Value{Type: String, S: s} }
func BinaryValue(b []byte) Value       { return Value{Type: Binary, B: b} }
func Int32Value(v int32) Value         { return Value{Type: Int32, I: int64(v)} }
func Int64Value(v int64) Value         { return Value{Type: Int64, I: v} }
func DoubleValue(f float64) Value      { return Value{Type: Double, F: f} }
func DateTimeValue(ticks int64) Value  { return Value{Type: DateTime, I: ticks} }
func GuidValue(canonical string) Value { return Value{Type: Guid, S: canonical} }
func BoolValue(b bool) Value {
	if b {
		return Value{Type: Boolean, I: 1}
	}
	return Value{Type: Boolean}
}

// Bool returns the value of a Boolean.
func (v Value) Bool() bool { return v.I != 0 }

// Compare orders two values of the same type: -1, 0 or +1. The bool is false when the types
// differ or the values are unordered (a NaN is involved).
func Compare(a, b Value) (int, bool) {
	if a.Type != b.Type {
		return 0, false
	}
	switch a.Type {
	case String, Guid:
		return keys.CompareOrdinal(a.S, b.S), true
	case Binary:
		return bytes.Compare(a.B, b.B), true
	case Double:
		if math.IsNaN(a.F) || math.IsNaN(b.F) {
			return 0, false
		}
		return cmp.Compare(a.F, b.F), true
	default:
		return cmp.Compare(a.I, b.I), true
	}
}

// Equal reports whether a and b have the same type and the same bits (NaN equals NaN here:
// this is storage equality, not filter equality).
func Equal(a, b Value) bool {
	if a.Type != b.Type {
		return false
	}
	switch a.Type {
	case String, Guid:
		return a.S == b.S
	case Binary:
		return bytes.Equal(a.B, b.B)
	case Double:
		return math.Float64bits(a.F) == math.Float64bits(b.F)
	default:
		return a.I == b.I
	}
}

// DateTime ticks: 100 ns units since 1970-01-01T00:00:00Z. Azure's range is
// 1601-01-01T00:00:00Z .. 9999-12-31T23:59:59.9999999Z.
const (
	TicksPerSecond = 10_000_000
	MinTicks       = -116444736000000000 // 1601-01-01T00:00:00Z
	MaxTicks       = 2534023007999999999 // 9999-12-31T23:59:59.9999999Z
)

// Ticks converts t to DateTime ticks, truncating below 100 ns.
func Ticks(t time.Time) int64 {
	return t.Unix()*TicksPerSecond + int64(t.Nanosecond()/100)
}

// TimeOf converts DateTime ticks to a UTC time.Time.
func TimeOf(ticks int64) time.Time {
	// time.Unix normalises a negative remainder (ticks before 1970).
	return time.Unix(ticks/TicksPerSecond, ticks%TicksPerSecond*100).UTC()
}
