package entity

import (
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/tablo/tablo/internal/azerr"
)

func TestUTF16Len(t *testing.T) {
	for _, s := range []string{"", "abc", "é", "日本語", "😀", "a😀b\u00a0\uffff\U0010FFFF"} {
		if got, want := UTF16Len(s), len(utf16.Encode([]rune(s))); got != want {
			t.Errorf("%q: got %d want %d", s, got, want)
		}
	}
}

func TestValidateKey(t *testing.T) {
	tests := []struct {
		value string
		code  azerr.Code
	}{
		{"", ""},
		{"normal key", ""},
		{"'\"%+&:*()=,;@!~é😀", ""},
		{strings.Repeat("x", MaxKeyLength), ""},
		{strings.Repeat("x", MaxKeyLength+1), azerr.PropertyValueTooLarge},
		{strings.Repeat("😀", MaxKeyLength/2), ""},
		{strings.Repeat("😀", MaxKeyLength/2) + "x", azerr.PropertyValueTooLarge},
		// U+10000, the first rune that takes two UTF-16 units, and U+FFFF, the last that takes one.
		{strings.Repeat("\U00010000", MaxKeyLength/2), ""},
		{strings.Repeat("\U00010000", MaxKeyLength/2) + "x", azerr.PropertyValueTooLarge},
		{strings.Repeat("\uffff", MaxKeyLength), ""},
		{"a/b", azerr.OutOfRangeInput},
		{`a\b`, azerr.OutOfRangeInput},
		{"a#b", azerr.OutOfRangeInput},
		{"a?b", azerr.OutOfRangeInput},
		{"\x00", azerr.OutOfRangeInput},
		{"\x1f", azerr.OutOfRangeInput},
		{"\x7f", azerr.OutOfRangeInput},
		{"\u0080", azerr.OutOfRangeInput},
		{"\u009f", azerr.OutOfRangeInput},
		{"\u00a0", ""},
		{"\xff", azerr.InvalidInput},
	}
	for _, tc := range tests {
		err := ValidateKey("RowKey", tc.value)
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%q: %v", tc.value, err)
		case tc.code != "" && !azerr.Is(err, tc.code):
			t.Errorf("%q: got %v want %s", tc.value, err, tc.code)
		}
	}
	err := ValidateKey("PartitionKey", "a?b")
	if want := "The 'PartitionKey' parameter of value 'a?b' is out of range."; azerr.From(err).Message() != want {
		t.Errorf("message %q", azerr.From(err).Message())
	}
}

func TestValidatePropertyName(t *testing.T) {
	tests := []struct {
		name string
		code azerr.Code
	}{
		{"a", ""},
		{"_", ""},
		{"Name", ""},
		{"a_1", ""},
		{"Ⅻ", ""},       // Nl letter number
		{"a\u0301", ""}, // combining mark
		{"a\u203f", ""}, // connector punctuation
		{"a\u200d", ""}, // format character
		{"a٣", ""},      // Arabic-Indic digit (Nd)
		{"٣a", azerr.PropertyNameInvalid},
		{"\u0301a", azerr.PropertyNameInvalid},
		{"", azerr.PropertyNameInvalid},
		{"1", azerr.PropertyNameInvalid},
		{"a-b", azerr.PropertyNameInvalid},
		{"a b", azerr.PropertyNameInvalid},
		{"a.b", azerr.PropertyNameInvalid},
		{"a@b", azerr.PropertyNameInvalid},
		{"a$", azerr.PropertyNameInvalid},
		{"😀", azerr.PropertyNameInvalid},
		{"a\xff", azerr.PropertyNameInvalid},
		{"PartitionKey", azerr.PropertyNameInvalid},
		{"RowKey", azerr.PropertyNameInvalid},
		{"Timestamp", azerr.PropertyNameInvalid},
		{"timestamp", ""},
		{strings.Repeat("a", 255), ""},
		{strings.Repeat("é", 255), ""},
		{strings.Repeat("a", 256), azerr.PropertyNameTooLong},
		{strings.Repeat("é", 256), azerr.PropertyNameTooLong},
	}
	for _, tc := range tests {
		err := ValidatePropertyName(tc.name)
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%q: %v", tc.name, err)
		case tc.code != "" && !azerr.Is(err, tc.code):
			t.Errorf("%q: got %v want %s", tc.name, err, tc.code)
		}
	}
}

func TestCheckLimits(t *testing.T) {
	e := &Entity{PartitionKey: "p", RowKey: "r"}
	for i := range MaxCustomProperties {
		e.Props = append(e.Props, prop("P"+strings.Repeat("x", i%5)+string(rune('a'+i%26)), BoolValue(true)))
	}
	if err := CheckLimits(e); err != nil {
		t.Fatal(err)
	}
	e.Props = append(e.Props, prop("Extra", BoolValue(true)))
	if !azerr.Is(CheckLimits(e), azerr.TooManyProperties) {
		t.Fatal("253 properties accepted")
	}

	// Size formula: 4 + 2*(1+1) + (8 + 2*1 + 4 + 2*n) for one string property "S" of n chars.
	one := func(n int) *Entity {
		return &Entity{PartitionKey: "p", RowKey: "r", Props: []Property{prop("S", StringValue(strings.Repeat("a", n)))}}
	}
	if got := Size(one(10)); got != 4+4+8+2+4+20 {
		t.Errorf("Size = %d", got)
	}
	// Names and keys count two bytes per UTF-16 unit: "Name" 8, "pk" 4, "rk😀" 8.
	named := &Entity{PartitionKey: "pk", RowKey: "rk😀", Props: []Property{prop("Name", Int32Value(1))}}
	if got := Size(named); got != 4+(4+8)+(8+8+4) {
		t.Errorf("Size with longer names = %d", got)
	}
	fixed := 4 + 4 + 8 + 2 + 4
	if n := (MaxEntitySize - fixed) / 2; CheckLimits(one(n)) != nil || !azerr.Is(CheckLimits(one(n+1)), azerr.EntityTooLarge) {
		t.Error("EntityTooLarge boundary")
	}
	sizes := map[Type]int{Binary: 4 + 3, Boolean: 1, DateTime: 8, Double: 8, Guid: 16, Int32: 4, Int64: 8, String: 4 + 4}
	for typ, want := range sizes {
		v := Value{Type: typ, S: "😀", B: []byte{1, 2, 3}}
		if got := valueSize(v); got != want {
			t.Errorf("%s: size %d want %d", typ, got, want)
		}
	}
}

func TestValidateValue(t *testing.T) {
	ok := []Value{StringValue(strings.Repeat("a", MaxStringLength)), BinaryValue(make([]byte, MaxBinaryLength)), Int32Value(1)}
	bad := []Value{StringValue(strings.Repeat("a", MaxStringLength+1)), StringValue(strings.Repeat("😀", MaxStringLength/2) + "a"), BinaryValue(make([]byte, MaxBinaryLength+1))}
	for _, v := range ok {
		if err := ValidateValue(v); err != nil {
			t.Errorf("%s: %v", v.Type, err)
		}
	}
	for _, v := range bad {
		if !azerr.Is(ValidateValue(v), azerr.PropertyValueTooLarge) {
			t.Errorf("%s of %d bytes accepted", v.Type, len(v.S)+len(v.B))
		}
	}
}
