package entity

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

const (
	specBase    = "https://myaccount.table.core.windows.net"
	specAccount = "myaccount"
	specTable   = "Customers"
)

// specEntity is the example entity of spec data-model.md §3, restricted to the named
// properties (all of them when none are named).
func specEntity(t testing.TB, only ...string) *Entity {
	all := []Property{
		prop("Age", Int32Value(23)),
		prop("AmountDue", DoubleValue(200.23)),
		prop("Score", DoubleValue(3)),
		prop("CustomerCode", GuidValue("c9da6455-213d-42c9-9a79-3e9149a57833")),
		prop("CustomerSince", DateTimeValue(mustTicks(t, "2008-07-10T00:00:00Z"))),
		prop("IsActive", BoolValue(true)),
		prop("NumberOfOrders", Int64Value(255)),
		prop("Blob", BinaryValue([]byte{1, 2, 3})),
		prop("Name", StringValue("x")),
	}
	e := &Entity{PartitionKey: "mypk", RowKey: "myrk", Timestamp: mustTicks(t, "2024-05-01T10:20:30.1234567Z")}
	for _, p := range all {
		if len(only) == 0 || contains(only, p.Name) {
			e.Props = append(e.Props, p)
		}
	}
	return e
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(strings.ReplaceAll(s, "{base}", specBase))); err != nil {
		t.Fatalf("golden is not JSON: %v", err)
	}
	return b.String()
}

func TestAppendJSONGolden(t *testing.T) {
	single := specBase + "/$metadata#Customers/@Element"
	tests := []struct {
		name   string
		entity *Entity
		opts   EncodeOptions
		want   string // spec JSON, {base} substituted, whitespace removed
	}{
		{
			name:   "minimal single (§3.1)",
			entity: specEntity(t),
			opts:   EncodeOptions{Metadata: single},
			want: `{
  "odata.metadata": "{base}/$metadata#Customers/@Element",
  "odata.etag": "W/\"datetime'2024-05-01T10%3A20%3A30.1234567Z'\"",
  "PartitionKey": "mypk",
  "RowKey": "myrk",
  "Timestamp": "2024-05-01T10:20:30.1234567Z",
  "Age": 23,
  "AmountDue": 200.23,
  "Score": 3.0,
  "CustomerCode@odata.type": "Edm.Guid",
  "CustomerCode": "c9da6455-213d-42c9-9a79-3e9149a57833",
  "CustomerSince@odata.type": "Edm.DateTime",
  "CustomerSince": "2008-07-10T00:00:00Z",
  "IsActive": true,
  "NumberOfOrders@odata.type": "Edm.Int64",
  "NumberOfOrders": "255",
  "Blob@odata.type": "Edm.Binary",
  "Blob": "AQID",
  "Name": "x"
}`,
		},
		{
			name:   "minimal collection element (§3.1)",
			entity: specEntity(t, "Age"),
			opts:   EncodeOptions{Level: MinimalMetadata},
			want:   `{"odata.etag":"W/\"datetime'2024-05-01T10%3A20%3A30.1234567Z'\"","PartitionKey":"mypk","RowKey":"myrk","Timestamp":"2024-05-01T10:20:30.1234567Z","Age":23}`,
		},
		{
			name:   "full single (§3.2)",
			entity: specEntity(t, "Age", "AmountDue", "CustomerCode", "NumberOfOrders"),
			opts:   EncodeOptions{Level: FullMetadata, Metadata: single, BaseURL: specBase, Account: specAccount, Table: specTable},
			want: `{
  "odata.metadata": "{base}/$metadata#Customers/@Element",
  "odata.type": "myaccount.Customers",
  "odata.id": "{base}/Customers(PartitionKey='mypk',RowKey='myrk')",
  "odata.etag": "W/\"datetime'2024-05-01T10%3A20%3A30.1234567Z'\"",
  "odata.editLink": "Customers(PartitionKey='mypk',RowKey='myrk')",
  "PartitionKey": "mypk",
  "RowKey": "myrk",
  "Timestamp@odata.type": "Edm.DateTime",
  "Timestamp": "2024-05-01T10:20:30.1234567Z",
  "Age": 23,
  "AmountDue": 200.23,
  "CustomerCode@odata.type": "Edm.Guid",
  "CustomerCode": "c9da6455-213d-42c9-9a79-3e9149a57833",
  "NumberOfOrders@odata.type": "Edm.Int64",
  "NumberOfOrders": "255"
}`,
		},
		{
			name:   "full collection element",
			entity: specEntity(t, "Age"),
			opts:   EncodeOptions{Level: FullMetadata, BaseURL: specBase, Account: specAccount, Table: specTable},
			want:   `{"odata.type":"myaccount.Customers","odata.id":"{base}/Customers(PartitionKey='mypk',RowKey='myrk')","odata.etag":"W/\"datetime'2024-05-01T10%3A20%3A30.1234567Z'\"","odata.editLink":"Customers(PartitionKey='mypk',RowKey='myrk')","PartitionKey":"mypk","RowKey":"myrk","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-05-01T10:20:30.1234567Z","Age":23}`,
		},
		{
			name:   "nometadata (§3.3)",
			entity: specEntity(t, "Age", "AmountDue", "CustomerCode", "CustomerSince", "NumberOfOrders", "Blob"),
			opts:   EncodeOptions{Level: NoMetadata, Metadata: single, BaseURL: specBase, Account: specAccount, Table: specTable},
			want:   `{"PartitionKey":"mypk","RowKey":"myrk","Timestamp":"2024-05-01T10:20:30.1234567Z","Age":23,"AmountDue":200.23,"CustomerCode":"c9da6455-213d-42c9-9a79-3e9149a57833","CustomerSince":"2008-07-10T00:00:00Z","NumberOfOrders":"255","Blob":"AQID"}`,
		},
		{
			name:   "minimal select with missing property",
			entity: specEntity(t),
			opts:   EncodeOptions{Metadata: single + "&$select=Age,Name,Missing", Select: []string{"Age", "Name", "Missing"}},
			want:   `{"odata.metadata":"{base}/$metadata#Customers/@Element&$select=Age,Name,Missing","odata.etag":"W/\"datetime'2024-05-01T10%3A20%3A30.1234567Z'\"","Age":23,"Name":"x","Missing":null}`,
		},
		{
			name:   "select keeps annotations, system properties in fixed order",
			entity: specEntity(t),
			opts:   EncodeOptions{Level: FullMetadata, BaseURL: specBase, Account: specAccount, Table: specTable, Select: []string{"Blob", "Timestamp", "RowKey"}},
			want:   `{"odata.type":"myaccount.Customers","odata.id":"{base}/Customers(PartitionKey='mypk',RowKey='myrk')","odata.etag":"W/\"datetime'2024-05-01T10%3A20%3A30.1234567Z'\"","odata.editLink":"Customers(PartitionKey='mypk',RowKey='myrk')","RowKey":"myrk","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-05-01T10:20:30.1234567Z","Blob@odata.type":"Edm.Binary","Blob":"AQID"}`,
		},
		{
			// A collection element (no odata.metadata) whose first selected property is
			// annotated: the annotation follows odata.etag and precedes the next member.
			name:   "element select starting with an annotated property",
			entity: specEntity(t),
			opts:   EncodeOptions{Select: []string{"Blob", "Age"}},
			want:   `{"odata.etag":"W/\"datetime'2024-05-01T10%3A20%3A30.1234567Z'\"","Blob@odata.type":"Edm.Binary","Blob":"AQID","Age":23}`,
		},
		{
			name:   "empty select at nometadata",
			entity: specEntity(t),
			opts:   EncodeOptions{Level: NoMetadata, Select: []string{}},
			want:   `{}`,
		},
		{
			name: "non-finite doubles and integral double",
			entity: &Entity{PartitionKey: "p", RowKey: "r", Timestamp: mustTicks(t, "2024-05-01T10:20:30Z"), Props: []Property{
				prop("N", DoubleValue(math.NaN())), prop("P", DoubleValue(math.Inf(1))), prop("M", DoubleValue(math.Inf(-1))),
				prop("Z", DoubleValue(math.Copysign(0, -1))), prop("I", DoubleValue(2)), prop("B", Int64Value(math.MinInt64)),
			}},
			opts: EncodeOptions{},
			want: `{"odata.etag":"W/\"datetime'2024-05-01T10%3A20%3A30Z'\"","PartitionKey":"p","RowKey":"r","Timestamp":"2024-05-01T10:20:30Z","N@odata.type":"Edm.Double","N":"NaN","P@odata.type":"Edm.Double","P":"Infinity","M@odata.type":"Edm.Double","M":"-Infinity","Z":-0.0,"I":2.0,"B@odata.type":"Edm.Int64","B":"-9223372036854775808"}`,
		},
		{
			name:   "special keys are quoted and percent-encoded in links",
			entity: &Entity{PartitionKey: `it's "x"`, RowKey: "ü /#?%", Timestamp: mustTicks(t, "2024-05-01T10:20:30.5Z")},
			opts:   EncodeOptions{Level: FullMetadata, BaseURL: "http://127.0.0.1:10002/devstoreaccount1", Account: "devstoreaccount1", Table: "t1"},
			want:   `{"odata.type":"devstoreaccount1.t1","odata.id":"http://127.0.0.1:10002/devstoreaccount1/t1(PartitionKey='it''s%20%22x%22',RowKey='%C3%BC%20%2F%23%3F%25')","odata.etag":"W/\"datetime'2024-05-01T10%3A20%3A30.5Z'\"","odata.editLink":"t1(PartitionKey='it''s%20%22x%22',RowKey='%C3%BC%20%2F%23%3F%25')","PartitionKey":"it's \"x\"","RowKey":"ü /#?%","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-05-01T10:20:30.5Z"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("prefix")
			got := AppendJSON(prefix, tc.entity, tc.opts)
			if !bytes.HasPrefix(got, []byte("prefix")) {
				t.Fatal("dst prefix lost")
			}
			got = got[len("prefix"):]
			if want := compact(t, tc.want); string(got) != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
			if !json.Valid(got) {
				t.Error("output is not valid JSON")
			}
		})
	}
}

// TestAppendStringMatchesEncodingJSON checks our escaping against encoding/json without HTML
// escaping, for tricky strings and every single byte at every offset of a word.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	inputs := []string{
		"", "plain", `quote " backslash \ slash /`, "\x00\x01\x07\b\t\n\v\f\r\x1b\x1f\x7f",
		"line\u2028para\u2029end", "<>&", "héllo 😀 日本", "bad \xff utf8 \xc3", "\xed\xa0\x80 surrogate",
		"\ufffd", strings.Repeat("a\u2028", 50),
		// Plain words up to the very end, where the word-at-a-time scan stops at the length.
		"abcdefgh", "abcdefghijklmnop", "\nabcdefgh",
	}
	for c := 0; c < 256; c++ {
		inputs = append(inputs, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
		// Every position of a word-at-a-time scan, in the first, second and partial word.
		for pos := range 20 {
			b := []byte("abcdefghijklmnopqrst")
			b[pos] = byte(c)
			inputs = append(inputs, string(b))
		}
	}
	for _, s := range inputs {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		got := AppendJSONString(nil, s)
		if string(got) != strings.TrimSuffix(want.String(), "\n") {
			t.Errorf("%q: got %s want %s", s, got, want.String())
		}
	}
}

// TestAppendDouble checks that doubles match encoding/json's shortest form, with ".0" added
// when it would read as an integer, and that they parse back to the same bits.
func TestAppendDouble(t *testing.T) {
	values := []float64{0, 1, -1, 3, 0.1, 200.23, 1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789, 1.23456789012346e+24,
		math.MaxFloat64, math.SmallestNonzeroFloat64, -math.MaxFloat64, 5e-324, 9007199254740993, 0.000001234}
	for _, f := range values {
		got := string(appendDouble(nil, f))
		want, _ := json.Marshal(f)
		w := string(want)
		if !strings.ContainsAny(w, ".eE") {
			w += ".0"
		}
		if got != w {
			t.Errorf("%v: got %s want %s", f, got, w)
		}
		var back float64
		if err := json.Unmarshal([]byte(got), &back); err != nil || math.Float64bits(back) != math.Float64bits(f) {
			t.Errorf("%v: %s reads back as %v (%v)", f, got, back, err)
		}
	}
	if got := string(appendDouble(nil, math.Copysign(0, -1))); got != "-0.0" {
		t.Errorf("-0: %s", got)
	}
}

func TestParseMetadataLevel(t *testing.T) {
	tests := []struct {
		in   string
		want MetadataLevel
		ok   bool
	}{
		{"", MinimalMetadata, true},
		{"   ", MinimalMetadata, true},
		{"*/*", MinimalMetadata, true},
		{"application/*", MinimalMetadata, true},
		{"json", MinimalMetadata, true},
		{"application/json", MinimalMetadata, true},
		{"application/json;odata=nometadata", NoMetadata, true},
		{"application/json;odata=minimalmetadata", MinimalMetadata, true},
		{"application/json;odata=fullmetadata", FullMetadata, true},
		{"application/json; odata=fullmetadata", FullMetadata, true},
		{" Application/JSON ; OData = NoMetadata ", NoMetadata, true},
		{"application/json;odata=nometadata;streaming=true;charset=utf-8", NoMetadata, true},
		{"application/json;charset=utf-8;odata=fullmetadata", FullMetadata, true},
		{"application/json;streaming=true", MinimalMetadata, true},
		{"application/json;odata=fullmetadata, */*;q=0.1", FullMetadata, true},
		{"application/atom+xml, application/json;odata=nometadata", NoMetadata, true},
		{"application/json;odata=verbose", MinimalMetadata, false},
		{"application/atom+xml", MinimalMetadata, false},
		{"application/xml", MinimalMetadata, false},
		{"text/plain", MinimalMetadata, false},
	}
	for _, tc := range tests {
		got, ok := ParseMetadataLevel(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q: got %v,%v want %v,%v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if got := FullMetadata.ContentType(); got != "application/json;odata=fullmetadata;streaming=true;charset=utf-8" {
		t.Error(got)
	}
	for _, l := range []MetadataLevel{NoMetadata, MinimalMetadata, FullMetadata} {
		if back, ok := ParseMetadataLevel("application/json;odata=" + l.String()); !ok || back != l {
			t.Errorf("%v does not round-trip", l)
		}
	}
}

func TestEntityPath(t *testing.T) {
	tests := []struct{ pk, rk, want string }{
		{"mypk", "myrk", "T(PartitionKey='mypk',RowKey='myrk')"},
		{"", "", "T(PartitionKey='',RowKey='')"},
		{"o'neil", "a''b", "T(PartitionKey='o''neil',RowKey='a''''b')"},
		{"a b\"c", "%+&=:*,()$!;@~", "T(PartitionKey='a%20b%22c',RowKey='%25+&=:*,()$!;@~')"},
		{"ü😀", "<>^`{|}[]", "T(PartitionKey='%C3%BC%F0%9F%98%80',RowKey='%3C%3E%5E%60%7B%7C%7D%5B%5D')"},
		{"\x01\x7f", "/\\#?", "T(PartitionKey='%01%7F',RowKey='%2F%5C%23%3F')"},
	}
	for _, tc := range tests {
		got := EntityPath("T", tc.pk, tc.rk)
		if got != tc.want {
			t.Errorf("%q,%q: got %s want %s", tc.pk, tc.rk, got, tc.want)
		}
		for i := 0; i < len(got); i++ {
			if got[i] < 0x21 || got[i] >= 0x7F || got[i] == '"' || got[i] == '\\' {
				t.Errorf("%q: unsafe byte %q in %s", tc.pk, got[i], got)
			}
		}
		if !utf8.ValidString(got) {
			t.Error("invalid UTF-8")
		}
	}
	if got := KeyLiteral("it's"); got != "'it''s'" {
		t.Error(got)
	}
}
