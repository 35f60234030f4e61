package query

import (
	"slices"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

func TestParseSelect(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  bool
	}{
		{in: "", want: nil},
		{in: "*", want: nil},
		{in: "Name,*", want: nil},
		{in: "PartitionKey,RowKey,Name", want: []string{"PartitionKey", "RowKey", "Name"}},
		{in: " Name , Age ,, ", want: []string{"Name", "Age"}},
		{in: "Name,Name,name", want: []string{"Name", "name"}},
		{in: "TableName", want: []string{"TableName"}},
		{in: "_x,Größe", want: []string{"_x", "Größe"}},
		{in: ",", want: nil},
		{in: "a-b", err: true},
		{in: "1a", err: true},
		{in: "odata.etag", err: true},
		{in: "Na me", err: true},
		{in: strings.Repeat("x", 255), want: []string{strings.Repeat("x", 255)}},
		{in: strings.Repeat("ß", 255), want: []string{strings.Repeat("ß", 255)}}, // characters, not bytes
		{in: strings.Repeat("x", 256), err: true},
		{in: strings.Repeat("ß", 256), err: true},
	}
	for _, c := range cases {
		got, err := ParseSelect(c.in)
		if c.err {
			if !azerr.Is(err, azerr.InvalidInput) {
				t.Errorf("ParseSelect(%q) = %q, %v; want InvalidInput", c.in, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseSelect(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	var many []string
	for i := range 256 {
		many = append(many, "p"+itoa(i))
	}
	if _, err := ParseSelect(strings.Join(many[:255], ",")); err != nil {
		t.Errorf("255 names: %v", err)
	}
	if _, err := ParseSelect(strings.Join(many, ",")); !azerr.Is(err, azerr.InvalidInput) {
		t.Errorf("256 names: %v, want InvalidInput", err)
	}
}

func TestParseTop(t *testing.T) {
	cases := []struct {
		in   string
		want int
		err  bool
	}{
		{in: "", want: -1},
		{in: "0", want: 0},
		{in: "000", want: 0},
		{in: "1", want: 1},
		{in: "2", want: 2},
		{in: "1000", want: 1000},
		{in: "0001", want: 1},
		{in: "000001000", want: 1000}, // the longest $top read (maxTopDigit digits)
		{in: "1001", err: true},
		{in: "-1", err: true},
		{in: "+5", err: true},
		{in: " 5", err: true},
		{in: "5.0", err: true},
		{in: "abc", err: true},
		{in: "99999999999999999999", err: true},
	}
	for _, c := range cases {
		got, err := ParseTop(c.in)
		if c.err {
			if !azerr.Is(err, azerr.InvalidInput) {
				t.Errorf("ParseTop(%q) = %d, %v; want InvalidInput", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseTop(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestTokens(t *testing.T) {
	// Azure's own examples (query.md §8).
	for key, tok := range map[string]string{
		"listEntitiesTest": "1!24!bGlzdEVudGl0aWVzVGVzdA--",
		"13":               "1!4!MTM-",
		"p1":               "1!4!cDE-",
		"":                 "1!0!",
	} {
		if got := EncodeToken(key); got != tok {
			t.Errorf("EncodeToken(%q) = %q, want %q", key, got, tok)
		}
		if got, err := DecodeToken(tok); err != nil || got != key {
			t.Errorf("DecodeToken(%q) = %q, %v; want %q", tok, got, err, key)
		}
	}
	// Non-ASCII keys, and a '+' that arrived as a space.
	for _, key := range []string{"pk 'quoted'", "rk-ü+&=%", "😀\uFFFD", ">>>?" /* base64 has a + */} {
		tok := EncodeToken(key)
		if got, err := DecodeToken(tok); err != nil || got != key {
			t.Errorf("round trip %q via %q: %q, %v", key, tok, got, err)
		}
		if got, err := DecodeToken(strings.ReplaceAll(tok, "+", " ")); err != nil || got != key {
			t.Errorf("round trip %q via %q with spaces: %q, %v", key, tok, got, err)
		}
	}
	bad := []string{
		"", "1", "1!", "1!4", "2!4!MTM-", "1!5!MTM-", "1!3!MTM-", "1!x!MTM-", "1!4!M-M-", "1!4!MT=-",
		"cGFnZQ==", "1!4!/w--", // base64 of 0xFF: not UTF-8
		"1!-4!MTM-", "1!04!MTM-" + "x", "1!" + strings.Repeat("9", 6) + "!MTM-", "1!4!MTM-" + strings.Repeat("A", 9000),
	}
	for _, tok := range bad {
		if got, err := DecodeToken(tok); !azerr.Is(err, azerr.InvalidInput) {
			t.Errorf("DecodeToken(%q) = %q, %v; want InvalidInput", tok, got, err)
		}
	}
}
