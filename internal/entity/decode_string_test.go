package entity

import (
	"bytes"
	"testing"
)

// FuzzDecodeJSONString checks that DecodeJSONString decodes like DecodeJSON, that what it
// returns passes CheckLimits (DecodeJSON skips the exact size count when maxSize proves it
// unnecessary, so the bound must hold), and that Props has no spare capacity.
func FuzzDecodeJSONString(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"p","RowKey":"r","Name":"someone","Age":42,"Score":3.5,"Active":true,"Big@odata.type":"Edm.Int64","Big":"1234567890123"}`,
		`{"PartitionKey":"a","RowKey":"b","T@odata.type":"Edm.DateTime","T":"2020-01-01T00:00:00Z","B@odata.type":"Edm.Binary","B":"AQID","N":null,"Timestamp":"x","odata.etag":"y"}`,
		"\ufeff{\"a\\u00e9\":\"\\ud83d\\ude00\\n\"}",
		`{"a":1,"a":2}`, `{}`, `{"😀😀":"😀😀😀"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		e, kp, err := DecodeJSONString(body)
		e2, kp2, err2 := DecodeJSON([]byte(body))
		if (err == nil) != (err2 == nil) || kp != kp2 {
			t.Fatalf("DecodeJSONString: %v %v; DecodeJSON: %v %v", kp, err, kp2, err2)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(AppendBinary(nil, e), AppendBinary(nil, e2)) {
			t.Fatalf("entities differ:\n%+v\n%+v", e, e2)
		}
		if err := CheckLimits(e); err != nil {
			t.Fatalf("decoded entity fails CheckLimits: %v", err)
		}
		if cap(e.Props) != len(e.Props) {
			t.Fatalf("Props: len %d, cap %d", len(e.Props), cap(e.Props))
		}
	})
}

// TestMaxSizeBound checks the bound DecodeJSON relies on to skip Size: for bodies of every
// member kind, Size of the decoded entity is at most maxSize(body length, member count).
func TestMaxSizeBound(t *testing.T) {
	for _, body := range []string{
		`{"PartitionKey":"p","RowKey":"r"}`,
		`{"PartitionKey":"😀","RowKey":"é","é名":"😀","a":"\u00e9\ud83d\ude00"}`,
		`{"PartitionKey":"","RowKey":"","G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833","a":0,"b":1.5,"c":true,"d@odata.type":"Edm.Int64","d":"1","e@odata.type":"Edm.DateTime","e":"2020-01-01T00:00:00Z","f@odata.type":"Edm.Binary","f":"AA=="}`,
		`{"a":"","b":"","c":"","d":"","e":""}`,
	} {
		e, _, err := DecodeJSONString(body)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		members, ok := scanObject(body, nil)
		if !ok {
			t.Fatal(body)
		}
		if got, bound := Size(e), maxSize(len(body), len(members)); got > bound {
			t.Errorf("%s: Size %d > bound %d", body, got, bound)
		}
	}
}
