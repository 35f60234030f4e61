package load

import (
	"strings"
	"testing"
)

const devConn = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + devKey + ";TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"

func TestParseConnString(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    ConnInfo
		wantErr string
	}{
		{name: "development string", in: devConn, want: ConnInfo{Endpoint: devEndpoint, Account: devAccount, Key: devKey}},
		{
			name: "keys are case-insensitive, spaces and empty segments ignored",
			in:   " accountname = devstoreaccount1 ;;ACCOUNTKEY=" + devKey + "; tableendpoint=http://localhost:10102/devstoreaccount1/ ",
			want: ConnInfo{Endpoint: "http://localhost:10102/devstoreaccount1", Account: devAccount, Key: devKey},
		},
		{name: "UseDevelopmentStorage", in: "UseDevelopmentStorage=true", want: ConnInfo{Endpoint: devEndpoint, Account: devAccount, Key: devKey}},
		{
			name: "endpoint from account and suffix",
			in:   "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + devKey + ";EndpointSuffix=core.example",
			want: ConnInfo{Endpoint: "https://acct.table.core.example", Account: "acct", Key: devKey},
		},
		{
			name: "SAS",
			in:   "TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;SharedAccessSignature=?sv=2019-02-02&sig=abc%3D",
			want: ConnInfo{Endpoint: devEndpoint, SAS: "sv=2019-02-02&sig=abc%3D"},
		},
		{
			name: "blob endpoint kept, other endpoints ignored",
			in:   "BlobEndpoint=http://127.0.0.1:10100/devstoreaccount1/;FileEndpoint=http://127.0.0.1:1/x;" + devConn,
			want: ConnInfo{Endpoint: devEndpoint, Account: devAccount, Key: devKey, BlobEndpoint: "http://127.0.0.1:10100/devstoreaccount1"},
		},
		{name: "bad blob endpoint", in: "BlobEndpoint=ftp://127.0.0.1/a;" + devConn, wantErr: "blob endpoint"},
		{name: "empty", in: " ; ", wantErr: "empty"},
		{name: "segment without =", in: "AccountName", wantErr: "not Key=Value"},
		{name: "duplicate key", in: "AccountName=a;accountname=b;AccountKey=" + devKey, wantErr: "repeats"},
		{name: "no credential", in: "AccountName=a;TableEndpoint=http://127.0.0.1:1/a", wantErr: "AccountKey or SharedAccessSignature"},
		{name: "both credentials", in: "AccountName=a;AccountKey=" + devKey + ";SharedAccessSignature=sig=x", wantErr: "both"},
		{name: "key without account", in: "AccountKey=" + devKey + ";TableEndpoint=http://127.0.0.1:1/a", wantErr: "no AccountName"},
		{name: "bad base64 key", in: "AccountName=a;AccountKey=not*base64;TableEndpoint=http://127.0.0.1:1/a", wantErr: "base64"},
		{name: "bad scheme", in: "AccountName=a;AccountKey=" + devKey + ";TableEndpoint=ftp://127.0.0.1/a", wantErr: "scheme"},
		{name: "endpoint with query", in: "AccountName=a;AccountKey=" + devKey + ";TableEndpoint=http://127.0.0.1/a?x=1", wantErr: "want scheme"},
		{name: "dev storage false", in: "UseDevelopmentStorage=false", wantErr: "only true"},
		{name: "too long", in: strings.Repeat("a", maxConnStringLen+1), wantErr: "longer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConnString(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestConnStringErrorsDoNotLeakKey(t *testing.T) {
	_, err := ParseConnString("AccountName=a;" + devKey)
	if err == nil || strings.Contains(err.Error(), devKey) {
		t.Fatalf("error %v should not contain the key", err)
	}
}

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		endpoint string
		ok       bool
	}{
		{"http://127.0.0.1:10002/devstoreaccount1", true},
		{"http://127.8.9.10:80", true},
		{"http://localhost:10002/a", true},
		{"http://LOCALHOST/a", true},
		{"http://[::1]:10002/a", true},
		{"https://acct.table.core.windows.net", false},
		{"http://10.0.0.1:10002/a", false},
		{"http://192.168.1.1/a", false},
		{"http://[::2]:10002/a", false},
		{"http://127.0.0.1.example.com/a", false},
	}
	for _, tc := range tests {
		err := ConnInfo{Endpoint: tc.endpoint}.CheckLoopback()
		if (err == nil) != tc.ok {
			t.Errorf("CheckLoopback(%s) = %v, want ok=%v", tc.endpoint, err, tc.ok)
		}
		// A remote Blob or Queue endpoint beside a loopback Table endpoint is refused too.
		err = ConnInfo{Endpoint: devEndpoint, BlobEndpoint: tc.endpoint}.CheckLoopback()
		if (err == nil) != tc.ok {
			t.Errorf("CheckLoopback(blob %s) = %v, want ok=%v", tc.endpoint, err, tc.ok)
		}
		err = ConnInfo{Endpoint: devEndpoint, QueueEndpoint: tc.endpoint}.CheckLoopback()
		if (err == nil) != tc.ok {
			t.Errorf("CheckLoopback(queue %s) = %v, want ok=%v", tc.endpoint, err, tc.ok)
		}
	}
}

func TestBlobURL(t *testing.T) {
	for _, tc := range []struct {
		ci   ConnInfo
		want string
	}{
		{ConnInfo{Endpoint: devEndpoint}, "http://127.0.0.1:10000/devstoreaccount1"},
		{ConnInfo{Endpoint: "https://acct.table.core.windows.net"}, "https://acct.blob.core.windows.net"},
		{ConnInfo{Endpoint: devEndpoint, BlobEndpoint: "http://127.0.0.1:9/x"}, "http://127.0.0.1:9/x"},
	} {
		if got := tc.ci.BlobURL(); got != tc.want {
			t.Errorf("BlobURL(%+v) = %q, want %q", tc.ci, got, tc.want)
		}
	}
}

// FuzzParseConnString checks that parsing never panics and that a parsed string survives
// String() -> ParseConnString unchanged.
func FuzzParseConnString(f *testing.F) {
	f.Add(devConn)
	f.Add("UseDevelopmentStorage=true")
	f.Add("TableEndpoint=http://127.0.0.1:10002/x;SharedAccessSignature=sv=1&sig=a%2Fb")
	f.Add("AccountName=a;AccountKey=" + devKey + ";EndpointSuffix=x;DefaultEndpointsProtocol=HTTP")
	f.Fuzz(func(t *testing.T, s string) {
		ci, err := ParseConnString(s)
		if err != nil {
			return
		}
		again, err := ParseConnString(ci.String())
		if err != nil {
			t.Fatalf("re-parse of %q: %v", ci.String(), err)
		}
		if again != ci {
			t.Fatalf("round trip changed %+v into %+v", ci, again)
		}
		_ = ci.CheckLoopback()
	})
}
