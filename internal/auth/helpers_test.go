package auth

import (
	"encoding/base64"
	"errors"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

func devAccount() *Account {
	a := DevAccount()
	return &a
}

// wantCode fails the test unless err carries the Azure code want ("" = no error).
func wantCode(t *testing.T, err error, want azerr.Code) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	var e *azerr.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want %s", err, want)
	}
	if e.Code != want {
		t.Fatalf("got %s (%s), want %s", e.Code, Detail(err), want)
	}
}

func encodeSig(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// codeOf returns the Azure code of err, "" for nil.
func codeOf(err error) azerr.Code {
	if err == nil {
		return ""
	}
	return azerr.From(err).Code
}

func decodeStdBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
