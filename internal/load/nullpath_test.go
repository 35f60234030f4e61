package load

import (
	"strings"
	"testing"
)

func TestParseResource(t *testing.T) {
	tests := []struct {
		path    string
		want    resource
		wantErr bool
	}{
		{path: "/devstoreaccount1/Tables", want: resource{kind: resTables}},
		{path: "/Tables", want: resource{kind: resTables}},
		{path: "/devstoreaccount1/Tables('gowire')", want: resource{kind: resTable, table: "gowire"}},
		{path: "/devstoreaccount1/$batch", want: resource{kind: resBatch}},
		{path: "/devstoreaccount1/gowire", want: resource{kind: resCollection, table: "gowire"}},
		{path: "/devstoreaccount1/gowire()", want: resource{kind: resCollection, table: "gowire"}},
		{path: "/gowire()", want: resource{kind: resCollection, table: "gowire"}},
		{
			path: "/devstoreaccount1/gowire(PartitionKey='pk1',RowKey='rk1')",
			want: resource{kind: resEntity, table: "gowire", pk: "pk1", rk: "rk1"},
		},
		{
			path: "/devstoreaccount1/t(PartitionKey='a/b ''q''',RowKey='')",
			want: resource{kind: resEntity, table: "t", pk: "a/b 'q'", rk: ""},
		},
		{path: "/", wantErr: true},
		{path: "/a/b/c", wantErr: true},
		{path: "/t(PartitionKey='a')", wantErr: true},
		{path: "/t(PartitionKey='a',RowKey='b'", wantErr: true},
		{path: "/t(PartitionKey='a',RowKey='b')x", wantErr: true},
		{path: "/t(RowKey='b',PartitionKey='a')", wantErr: true},
		{path: "/Tables('unterminated)", wantErr: true},
		{path: "/" + strings.Repeat("a", maxPathLen), wantErr: true},
	}
	for _, tc := range tests {
		got, err := parseResource(tc.path)
		if tc.wantErr {
			if err == nil {
				t.Errorf("parseResource(%q) = %+v, want error", tc.path, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseResource(%q) = %+v, %v; want %+v", tc.path, got, err, tc.want)
		}
	}
}

// FuzzParseResource checks that no path panics and that entity keys survive rendering with
// quoteLiteral and parsing again.
func FuzzParseResource(f *testing.F) {
	f.Add("/devstoreaccount1/gowire(PartitionKey='pk1',RowKey='rk1')", "p'k", "r/k")
	f.Add("/Tables('x')", "", "''")
	f.Add("/$batch", "(", ")")
	f.Fuzz(func(t *testing.T, path, pk, rk string) {
		_, _ = parseResource(path)
		p := "/acct/tbl(PartitionKey=" + quoteLiteral(pk) + ",RowKey=" + quoteLiteral(rk) + ")"
		if len(p) > maxPathLen {
			return
		}
		got, err := parseResource(p)
		if err != nil {
			t.Fatalf("parseResource(%q): %v", p, err)
		}
		if got != (resource{kind: resEntity, table: "tbl", pk: pk, rk: rk}) {
			t.Fatalf("parseResource(%q) = %+v, want keys %q %q", p, got, pk, rk)
		}
	})
}
