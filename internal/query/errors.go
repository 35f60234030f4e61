package query

import (
	"fmt"
	"unicode/utf8"

	"github.com/tablo/tablo/internal/azerr"
)

// maxEcho caps how much of the filter an error message repeats.
const maxEcho = 256

// Error is a rejected $filter (or query option). It wraps an *azerr.Error with code
// InvalidInput, so azerr.From and azerr.Is see the Azure code; Pos is the 0-based byte
// offset the message names (-1 for option errors without a position).
type Error struct {
	Pos int
	az  *azerr.Error
}

func (e *Error) Error() string { return e.az.Error() }

// Unwrap exposes the Azure error.
func (e *Error) Unwrap() error { return e.az }

// Message is the client-facing text.
func (e *Error) Message() string { return e.az.Message() }

// errAt builds a filter error in the style of the service's OData messages:
// "<what> at position N in '<filter>'."
func errAt(src string, pos int, format string, args ...any) *Error {
	what := fmt.Sprintf(format, args...)
	return &Error{Pos: pos, az: azerr.Newf(azerr.InvalidInput, "%s at position %d in '%s'.", what, pos, echo(src))}
}

// optionErr builds an error for $select, $top and continuation tokens.
func optionErr(format string, args ...any) *Error {
	return &Error{Pos: -1, az: azerr.Newf(azerr.InvalidInput, format, args...)}
}

// echo shortens s for inclusion in a message without splitting a UTF-8 sequence.
func echo(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
