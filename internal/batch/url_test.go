package batch

import (
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

func TestPathAndQuery(t *testing.T) {
	tests := []struct {
		url, prefix, path, query string
		fail                     bool
	}{
		{url: "http://127.0.0.1:13010/devstoreaccount1/gowire?%24format=application%2Fjson%3Bodata%3Dminimalmetadata", prefix: "/devstoreaccount1",
			path: "/gowire", query: "%24format=application%2Fjson%3Bodata%3Dminimalmetadata"},
		{url: "http://127.0.0.1:10002/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')", prefix: "/devstoreaccount1",
			path: "/mytable(PartitionKey='a',RowKey='b')"},
		{url: "http://127.0.0.1:10002/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')", prefix: "devstoreaccount1/",
			path: "/mytable(PartitionKey='a',RowKey='b')"},
		// Go v1.4.1 leaves a lone quote (%27) undoubled; kept raw for the resource parser.
		{url: "http://h/devstoreaccount1/t(PartitionKey='p',RowKey='r%273')", prefix: "/devstoreaccount1",
			path: "/t(PartitionKey='p',RowKey='r%273')"},
		{url: "HTTPS://acct.table.core.windows.net/Blogs(PartitionKey='a%20b',RowKey='c+d')?sv=1&sig=x%2F", prefix: "",
			path: "/Blogs(PartitionKey='a%20b',RowKey='c+d')", query: "sv=1&sig=x%2F"},
		{url: "https://acct.table.core.windows.net", path: "/"},
		{url: "https://acct.table.core.windows.net?x=1", path: "/", query: "x=1"},
		{url: "http://h/devstoreaccount1", prefix: "/devstoreaccount1", path: "/"},
		{url: "http://h/devstoreaccount1?a", prefix: "/devstoreaccount1", path: "/", query: "a"},
		{url: "http://h/t(PartitionKey='#',RowKey='x')#frag", path: "/t(PartitionKey='#',RowKey='x')#frag"},
		{url: "http:///devstoreaccount1/t", prefix: "/devstoreaccount1", path: "/t"}, // empty authority
		{url: "/devstoreaccount1/t", prefix: "/devstoreaccount1", path: "/t"},
		// Scheme characters at the edges of each class; a scheme cannot start with a digit.
		{url: "aZ+9.z-A0://h/devstoreaccount1/t", prefix: "/devstoreaccount1", path: "/t"},
		{url: "9x://h/t", path: "/9x://h/t"},
		{url: "x~://h/t", path: "/x~://h/t"},
		{url: "/t?$format=x", prefix: "/devstoreaccount1", path: "/t", query: "$format=x"},
		{url: "t(PartitionKey='a',RowKey='b')", prefix: "/devstoreaccount1", path: "/t(PartitionKey='a',RowKey='b')"},
		{url: "t(PartitionKey='http://x',RowKey='b')", path: "/t(PartitionKey='http://x',RowKey='b')"},
		{url: "http://h/otheraccount/t", prefix: "/devstoreaccount1", fail: true},
		{url: "http://h/devstoreaccount10/t", prefix: "/devstoreaccount1", fail: true},
	}
	for _, tc := range tests {
		op := Operation{Method: "GET", URL: tc.url}
		path, query, err := op.PathAndQuery(tc.prefix)
		if tc.fail {
			if !azerr.Is(err, azerr.InvalidInput) {
				t.Errorf("%q with %q: err %v, want InvalidInput", tc.url, tc.prefix, err)
			}
			continue
		}
		if err != nil || path != tc.path || query != tc.query {
			t.Errorf("%q with %q: got %q %q %v, want %q %q", tc.url, tc.prefix, path, query, err, tc.path, tc.query)
		}
	}
}
