package auth

import (
	"errors"

	"github.com/tablo/tablo/internal/azerr"
)

// authError is an Azure error plus a diagnostic detail (Azure's AuthenticationErrorDetail).
// The client-facing message stays Azure's default; the detail is for logs, XML error bodies
// and tests.
type authError struct {
	err    *azerr.Error
	detail string
}

func (e *authError) Error() string { return e.err.Error() + " (" + e.detail + ")" }
func (e *authError) Unwrap() error { return e.err }

func fail(code azerr.Code, detail string) error {
	return &authError{err: azerr.New(code), detail: detail}
}

func authFailed(detail string) error { return fail(azerr.AuthenticationFailed, detail) }

// Detail returns the diagnostic detail of an error made by this package (for example
// "signature mismatch"), or "" for any other error.
func Detail(err error) string {
	var e *authError
	if errors.As(err, &e) {
		return e.detail
	}
	return ""
}
