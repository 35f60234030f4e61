package auth

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// The well-known development storage account every emulator accepts.
const (
	DevAccountName = "devstoreaccount1"
	DevAccountKey  = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// maxKeys is the number of keys an Azure storage account has (key1 and key2).
const maxKeys = 2

// Account is a storage account and its keys (decoded from base64). A signature made with any
// of the keys verifies.
type Account struct {
	Name string
	Keys [][]byte
}

// DevAccount returns a fresh copy of the development account.
func DevAccount() Account {
	key, _ := base64.StdEncoding.DecodeString(DevAccountKey) // constant, known to be valid
	return Account{Name: DevAccountName, Keys: [][]byte{key}}
}

// ErrAccountsSyntax reports a malformed accounts configuration value.
var ErrAccountsSyntax = errors.New("auth: malformed accounts value")

// ParseAccounts parses the accounts configuration value
//
//	accounts = account { ("," | ";") account }
//	account  = name ":" base64key [ ":" base64key ]
//
// as in Azurite's AZURITE_ACCOUNTS. Spaces around entries and empty entries (a trailing
// separator) are ignored. Names follow Azure's rule (3–24 lower-case letters and digits) and
// must be unique; keys must be non-empty standard base64 (padding optional).
func ParseAccounts(s string) ([]Account, error) {
	var out []Account
	seen := map[string]bool{}
	for entry := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == ',' || r == ';' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		a, err := parseAccount(entry)
		if err != nil {
			return nil, err
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("%w: account %q listed twice", ErrAccountsSyntax, a.Name)
		}
		seen[a.Name] = true
		out = append(out, a)
	}
	return out, nil
}

func parseAccount(entry string) (Account, error) {
	parts := strings.Split(entry, ":")
	if len(parts) < 2 || len(parts) > 1+maxKeys {
		return Account{}, fmt.Errorf("%w: %q is not name:key[:key2]", ErrAccountsSyntax, redact(entry))
	}
	name := strings.TrimSpace(parts[0])
	if !validAccountName(name) {
		return Account{}, fmt.Errorf("%w: account name %q must be 3-24 lower-case letters or digits", ErrAccountsSyntax, name)
	}
	a := Account{Name: name}
	for i, k := range parts[1:] {
		key, err := decodeKey(strings.TrimSpace(k))
		if err != nil {
			return Account{}, fmt.Errorf("%w: account %q key %d: %w", ErrAccountsSyntax, name, i+1, err)
		}
		a.Keys = append(a.Keys, key)
	}
	return a, nil
}

func decodeKey(k string) ([]byte, error) {
	if k == "" {
		return nil, errors.New("empty key")
	}
	key, err := base64.StdEncoding.DecodeString(k)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(k)
	}
	if err != nil {
		return nil, errors.New("key is not base64")
	}
	if len(key) == 0 {
		return nil, errors.New("empty key")
	}
	return key, nil
}

// redact keeps the account name of a malformed entry so error messages never echo a key.
func redact(entry string) string {
	name, _, found := strings.Cut(entry, ":")
	if !found {
		return "…"
	}
	return name + ":…"
}

func validAccountName(name string) bool {
	if len(name) < 3 || len(name) > 24 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
