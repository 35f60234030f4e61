package auth

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestDevAccount(t *testing.T) {
	a := DevAccount()
	if a.Name != "devstoreaccount1" || len(a.Keys) != 1 || len(a.Keys[0]) != 64 {
		t.Fatalf("%+v", a)
	}
	a.Keys[0][0] ^= 1 // a copy: mutating it must not change the next one
	if b := DevAccount(); b.Keys[0][0] == a.Keys[0][0] {
		t.Fatal("DevAccount shares its key")
	}
}

func TestParseAccounts(t *testing.T) {
	got, err := ParseAccounts(" acct1:" + DevAccountKey + ":AAAA ; acct2:Zm9v , acct3:Zm9vYg;")
	if err != nil {
		t.Fatal(err)
	}
	want := []Account{
		{Name: "acct1", Keys: [][]byte{DevAccount().Keys[0], {0, 0, 0}}},
		{Name: "acct2", Keys: [][]byte{[]byte("foo")}},
		{Name: "acct3", Keys: [][]byte{[]byte("foob")}}, // unpadded base64 accepted
	}
	if len(got) != len(want) {
		t.Fatalf("got %d accounts", len(got))
	}
	for i := range want {
		if got[i].Name != want[i].Name || len(got[i].Keys) != len(want[i].Keys) {
			t.Fatalf("%d: got %+v", i, got[i])
		}
		for k := range want[i].Keys {
			if !bytes.Equal(got[i].Keys[k], want[i].Keys[k]) {
				t.Errorf("%s key %d differs", want[i].Name, k)
			}
		}
	}
	if got, err := ParseAccounts(""); err != nil || len(got) != 0 {
		t.Fatal(got, err)
	}
}

func TestParseAccountsErrors(t *testing.T) {
	const secret = "c2VjcmV0c2VjcmV0"
	for _, in := range []string{
		"acct1", "acct1:", "acct1:!!!!", "acct1:" + secret + ":" + secret + ":" + secret,
		"ab:" + secret, "Acct1:" + secret, "acct_1:" + secret, strings.Repeat("a", 25) + ":" + secret,
		":" + secret, "acct1:" + secret + ",acct1:" + secret, "acct1:" + secret + ":",
	} {
		_, err := ParseAccounts(in)
		if !errors.Is(err, ErrAccountsSyntax) {
			t.Errorf("%q: got %v", in, err)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q: error leaks the key: %v", in, err)
		}
	}
}
