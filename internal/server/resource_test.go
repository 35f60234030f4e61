package server

import (
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// parsePath runs the request path (after the account, without its leading slash, still
// percent-encoded) through the same two steps as serve: path unescaping, then parseResource.
func parsePath(raw string) (resource, error) {
	p, err := pathUnescape(raw)
	if err != nil {
		return resource{}, err
	}
	return parseResource(p)
}

// TestParseResource covers every URL shape of spec/table-api.md §2 and the key-literal rules
// of §2.1, with Azure's error codes for the malformed ones.
func TestParseResource(t *testing.T) {
	entity := func(table, pk, rk string) resource {
		return resource{kind: resEntity, table: table, pk: pk, rk: rk}
	}
	cases := []struct {
		path string
		want resource
		code azerr.Code // "" when the path is valid
	}{
		// §2 routing table.
		{"", resource{kind: resService}, ""},
		{"/", resource{kind: resService}, ""},
		{"Tables", resource{kind: resTables}, ""},
		{"Tables()", resource{kind: resTables}, ""},
		{"Tables( )", resource{kind: resTables}, ""},
		{"Tables/", resource{kind: resTables}, ""},
		{"Tables('mytable')", resource{kind: resTable, table: "mytable"}, ""},
		{"Tables(%27mytable%27)", resource{kind: resTable, table: "mytable"}, ""},
		{"Tables( 'MyTable' )", resource{kind: resTable, table: "MyTable"}, ""},
		{"Tables('o''k')", resource{kind: resTable, table: "o'k"}, ""},
		{"$batch", resource{kind: resBatch}, ""},
		{"%24batch", resource{kind: resBatch}, ""},
		{"mytable", resource{kind: resEntities, table: "mytable"}, ""},
		{"mytable()", resource{kind: resEntities, table: "mytable"}, ""},
		{"mytable/", resource{kind: resEntities, table: "mytable"}, ""},
		{"tables", resource{kind: resEntities, table: "tables"}, ""}, // only "Tables" is the table set
		{"t(PartitionKey='p',RowKey='r')", entity("t", "p", "r"), ""},
		{"Tables1(PartitionKey='p',RowKey='r')", entity("Tables1", "p", "r"), ""},

		// §2.1 key literals.
		{"t(PartitionKey='',RowKey='')", entity("t", "", ""), ""},
		{"t(PartitionKey='a', RowKey='b')", entity("t", "a", "b"), ""},
		{"t( PartitionKey = 'a' ,\tRowKey= 'b' )", entity("t", "a", "b"), ""},
		{"t(RowKey='r',PartitionKey='p')", entity("t", "p", "r"), ""},
		{"t(PartitionKey='o''neil',RowKey='''''')", entity("t", "o'neil", "''"), ""},
		{"t(PartitionKey='o%27%27neil',RowKey='%27%27')", entity("t", "o'neil", "'"), ""},
		{"t(PartitionKey='a,b',RowKey='(c)=d e')", entity("t", "a,b", "(c)=d e"), ""},
		{"t(PartitionKey='RowKey=''x''',RowKey=',RowKey=')", entity("t", "RowKey='x'", ",RowKey="), ""},
		{"t(PartitionKey='a+b',RowKey='100%25')", entity("t", "a+b", "100%"), ""},
		{"t(PartitionKey='%C3%BC',RowKey='😀')", entity("t", "ü", "😀"), ""},
		{"t(PartitionKey=' ',RowKey='  ')", entity("t", " ", "  "), ""},
		{"t(PartitionKey='p',RowKey='" + strings.Repeat("k", 1024) + "')", entity("t", "p", strings.Repeat("k", 1024)), ""},

		// Malformed key segments (all 400).
		{"t(PartitionKey='p',RowKey='r'", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='p',RowKey='r)", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='o'neil',RowKey='r')", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='p',RowKey='r%273')", resource{}, azerr.InvalidInput}, // Go SDK batch: quote not doubled
		{"t(PartitionKey='p',RowKey='r')x", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='p')", resource{}, azerr.InvalidInput},
		{"t(RowKey='r')", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='p',PartitionKey='q')", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='p',RowKey='r',RowKey='s')", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='p',RowKey='r',)", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='p';RowKey='r')", resource{}, azerr.InvalidInput},
		{"t(partitionkey='p',rowkey='r')", resource{}, azerr.InvalidInput},
		{"t(PartitionKey=p,RowKey=r)", resource{}, azerr.InvalidInput},
		{"t(PartitionKey=\"p\",RowKey=\"r\")", resource{}, azerr.InvalidInput},
		{"t('p','r')", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='a/b',RowKey='r')", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='p',RowKey='a%2Fb')", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='a\\b',RowKey='r')", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='a%5Cb',RowKey='r')", resource{}, azerr.InvalidInput},
		{"t(PartitionKey='a%23b',RowKey='r')", resource{}, azerr.OutOfRangeInput},
		{"t(PartitionKey='p',RowKey='a%3Fb')", resource{}, azerr.OutOfRangeInput},
		{"t(PartitionKey='p',RowKey='a%01b')", resource{}, azerr.OutOfRangeInput},
		{"t(PartitionKey='p',RowKey='a%7Fb')", resource{}, azerr.OutOfRangeInput},
		{"Tables('t'", resource{}, azerr.InvalidInput},
		{"Tables(t)", resource{}, azerr.InvalidInput},
		{"Tables('a','b')", resource{}, azerr.InvalidInput},
		{"Tables('a", resource{}, azerr.InvalidInput},

		// Bad paths and table segments.
		{"1table", resource{}, azerr.InvalidResourceName},
		{"my-table", resource{}, azerr.InvalidResourceName},
		{"my_table()", resource{}, azerr.InvalidResourceName},
		// Each end of the character ranges of a table segment, and the byte past it.
		{"az09AZ", resource{kind: resEntities, table: "az09AZ"}, ""},
		{"Za", resource{kind: resEntities, table: "Za"}, ""},
		{"a{", resource{}, azerr.InvalidResourceName},
		{"a`", resource{}, azerr.InvalidResourceName},
		{"a@", resource{}, azerr.InvalidResourceName},
		{"a[", resource{}, azerr.InvalidResourceName},
		{"a:", resource{}, azerr.InvalidResourceName},
		{"(PartitionKey='p',RowKey='r')", resource{}, azerr.InvalidResourceName},
		{"$batch()", resource{}, azerr.InvalidResourceName},
		{"a/b", resource{}, azerr.InvalidURI},
		{"t//", resource{}, azerr.InvalidURI},
		{"a\\b(PartitionKey='p',RowKey='r')", resource{}, azerr.InvalidURI},
		{"t%FF", resource{}, azerr.InvalidURI},
		{"t%zz", resource{}, azerr.InvalidURI},
		{"t(PartitionKey='%',RowKey='r')", resource{}, azerr.InvalidURI},
	}
	for _, c := range cases {
		got, err := parsePath(c.path)
		if c.code == "" {
			if err != nil || got != c.want {
				t.Errorf("%q: got %+v, %v; want %+v", c.path, got, err, c.want)
			}
			continue
		}
		if !azerr.Is(err, c.code) {
			t.Errorf("%q: got %+v, %v; want %s", c.path, got, err, c.code)
		}
	}
}

// renderResource prints r in canonical URL form, key literals with quotes doubled.
func renderResource(r resource) string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch r.kind {
	case resService:
		return ""
	case resTables:
		return "Tables"
	case resTable:
		return "Tables(" + q(r.table) + ")"
	case resBatch:
		return "$batch"
	case resEntities:
		return r.table + "()"
	case resEntity:
		return r.table + "(PartitionKey=" + q(r.pk) + ",RowKey=" + q(r.rk) + ")"
	}
	return "\x00unknown kind"
}

// FuzzParseResource: parseResource never panics, fails only with Azure errors, and whatever
// it accepts re-renders (quotes doubled) to a path that parses to the same resource.
func FuzzParseResource(f *testing.F) {
	for _, s := range []string{
		"", "Tables", "Tables()", "Tables('t')", "Tables('o''k')", "$batch", "t", "t()",
		"t(PartitionKey='p',RowKey='r')", "t(PartitionKey='a', RowKey='b')",
		"t(RowKey='r',PartitionKey='p')", "t(PartitionKey='o''neil',RowKey='''''')",
		"t(PartitionKey='a,b',RowKey='(c)=d e')", "t(PartitionKey='',RowKey='')",
		"t(PartitionKey='p',RowKey='r'", "t(PartitionKey='o'neil',RowKey='r')",
		"t(PartitionKey='a#b',RowKey='r')", "t( PartitionKey = 'ü' ,\tRowKey= '😀' )",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		r, err := parseResource(p)
		if err != nil {
			if e := azerr.From(err); e.Code == azerr.InternalError || e.Status() != 400 {
				t.Fatalf("%q: error %v is not a 400 Azure error", p, err)
			}
			return
		}
		again, err := parseResource(renderResource(r))
		if err != nil || again != r {
			t.Fatalf("%q → %+v → %q → %+v, %v", p, r, renderResource(r), again, err)
		}
	})
}
