package app

import (
	"net"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/auth"
)

func TestEndpointURLs(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv6unspecified, Port: 10002}
	for _, tc := range []struct {
		host, url string
		all       bool
	}{
		{"127.0.0.1", "http://127.0.0.1:10002", false},
		{"0.0.0.0", "http://127.0.0.1:10002", true},
		{"::", "http://127.0.0.1:10002", true},
		{"", "http://127.0.0.1:10002", true},
		{"::1", "http://[::1]:10002", false},
		{"localhost", "http://localhost:10002", false},
	} {
		ep := endpointOf("Table", tc.host, addr)
		if ep.URL != tc.url || ep.AllInterfaces != tc.all {
			t.Errorf("host %q: %+v, want URL %s, all interfaces %v", tc.host, ep, tc.url, tc.all)
		}
	}
}

func TestConnectionStringNeverHoldsAGivenKey(t *testing.T) {
	eps := []Endpoint{{Service: "Blob", URL: "http://127.0.0.1:10000"}, {Service: "Table", URL: "http://127.0.0.1:10002"}}
	dev := auth.DevAccount()
	got := ConnectionString(dev, eps)
	want := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + auth.DevAccountKey +
		";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"
	if got != want {
		t.Errorf("dev account:\n got %s\nwant %s", got, want)
	}
	// The development account's name with a key of the user's own: the key is not printed.
	own := auth.Account{Name: auth.DevAccountName, Keys: [][]byte{[]byte("secret-key-bytes")}}
	if got := ConnectionString(own, eps); strings.Contains(got, auth.DevAccountKey) || !strings.Contains(got, "AccountKey=<key of devstoreaccount1") {
		t.Errorf("own key: %s", got)
	}
}
