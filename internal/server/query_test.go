package server

import (
	"errors"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// parseQueryRef is parseQuery as it was: parseForm's map, then the first value of each name.
func parseQueryRef(raw string) (queryParams, error) {
	if raw == "" {
		return queryParams{}, nil
	}
	v, err := parseForm(raw)
	if err != nil {
		return queryParams{}, err
	}
	q := queryParams{raw: raw}
	get := func(name string) (string, bool) {
		vs, ok := v[name]
		if !ok || len(vs) == 0 {
			return "", false
		}
		return vs[0], true
	}
	q.format, _ = get("$format")
	q.filter, q.hasFilter = get("$filter")
	q.selectList, q.hasSelect = get("$select")
	q.top, q.hasTop = get("$top")
	q.nextPK, q.hasNextPK = get("NextPartitionKey")
	q.nextRK, q.hasNextRK = get("NextRowKey")
	q.nextTable, _ = get("NextTableName")
	q.comp, _ = get("comp")
	q.restype, _ = get("restype")
	_, q.hasSig = v["sig"]
	return q, nil
}

// checkQueryAgainstRef fails unless parseQuery and parseQueryRef agree on raw.
func checkQueryAgainstRef(t *testing.T, raw string) {
	t.Helper()
	got, gotErr := parseQuery(raw)
	want, wantErr := parseQueryRef(raw)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("parseQuery(%q) error %v, reference %v", raw, gotErr, wantErr)
	}
	if gotErr != nil {
		var ae *azerr.Error
		if !errors.As(gotErr, &ae) || ae.Code != azerr.InvalidQueryParameterValue {
			t.Fatalf("parseQuery(%q) error %v, want InvalidQueryParameterValue", raw, gotErr)
		}
		return
	}
	if got != want {
		t.Fatalf("parseQuery(%q)\n got %+v\nwant %+v", raw, got, want)
	}
}

var queryCases = []string{
	"",
	"&",
	"&&=&",
	"=",
	"$format=application/json;odata=nometadata",
	"%24format=application%2Fjson%3Bodata%3Dminimalmetadata",
	"%24filter=PartitionKey+eq+%27a%27&%24top=5&%24select=A%2CB",
	"$filter=a&$filter=b",
	"$format=&$format=x",
	"%24format=a&$format=b",
	"$top",
	"$top=",
	"NextPartitionKey=1!8!cGs-&NextRowKey=1!8!cms-",
	"NextPartitionKey&NextRowKey",
	"NextTableName=1!8!dGFi",
	"restype=service&comp=properties",
	"comp=acl",
	"sv=2019-02-02&tn=t&sig=abc%2Bdef%3D&se=2030-01-01",
	"sig",
	"%73ig=x",
	"%73%69%67",
	"$format=%",
	"$format=%2",
	"$format=%zz",
	"unknown=%g0",
	"%=1",
	"a%2=1",
	"x=1&y=%2",
	"$for+mat=1",
	"+$format=1",
	"%24FORMAT=1",
	"$Format=1",
	"comp=%41cl",
	"$filter=%E6%97%A5%E6%9C%AC",
	"$filter=%ff",
	"NextPartitionKeyX=1",
	"%4e%65%78%74%50%61%72%74%69%74%69%6f%6e%4b%65%79=long",
	"NextPartitionKe%79=z",
	"%4EextRowKey=n&$f%6Frmat=o&$sel%65ct=e&NextT%61bleName=a",
	"a=%41%zz",
	"a=%41%2",
	"$filter=%6a%6A%4f%4F%30%39%af%AF%0a",
	"x=%/0", "x=%:0", "x=%`0", "x=%@0", "x=%G0", "x=%0g", "x=%0G", "x=%0/", "x=%0:",
	"restype=table;comp=x",
}

func TestParseQueryMatchesReference(t *testing.T) {
	for _, raw := range queryCases {
		checkQueryAgainstRef(t, raw)
	}
}

func TestParseQueryKnownValues(t *testing.T) {
	q, err := parseQuery("%24filter=PartitionKey+eq+%27a%27&%24top=5&comp=acl&%24format=application%2Fjson%3Bodata%3Dnometadata&sig=s")
	if err != nil {
		t.Fatal(err)
	}
	want := queryParams{
		filter: "PartitionKey eq 'a'", hasFilter: true, top: "5", hasTop: true, comp: "acl",
		format: "application/json;odata=nometadata", hasSig: true,
		raw: "%24filter=PartitionKey+eq+%27a%27&%24top=5&comp=acl&%24format=application%2Fjson%3Bodata%3Dnometadata&sig=s",
	}
	if q != want {
		t.Fatalf("got %+v\nwant %+v", q, want)
	}
	form, err := q.form()
	if err != nil || form.Get("sig") != "s" || form.Get("$top") != "5" {
		t.Fatalf("form() = %v, %v", form, err)
	}
}

// TestParseQueryAllocs: a kept value without escapes and any name cost no allocation.
func TestParseQueryAllocs(t *testing.T) {
	n := testing.AllocsPerRun(100, func() {
		if _, err := parseQuery("%24format=application/json;odata=nometadata&%24top=10&other=%41"); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations, want 0", n)
	}
}

// FuzzParseQuery: parseQuery agrees with the parseForm-based reference on every input.
func FuzzParseQuery(f *testing.F) {
	for _, raw := range queryCases {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkQueryAgainstRef(t, raw)
	})
}
