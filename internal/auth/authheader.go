package auth

import (
	"encoding/base64"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
)

// Scheme is an Authorization header scheme.
type Scheme int

// The Authorization schemes the Table service knows.
const (
	SchemeSharedKey Scheme = iota + 1
	SchemeSharedKeyLite
	SchemeBearer
)

func (s Scheme) String() string {
	switch s {
	case SchemeSharedKey:
		return "SharedKey"
	case SchemeSharedKeyLite:
		return "SharedKeyLite"
	case SchemeBearer:
		return "Bearer"
	}
	return "Scheme(?)"
}

// Authorization is a parsed Authorization header.
type Authorization struct {
	Scheme Scheme
	// Account and Signature are set for the Shared Key schemes.
	Account   string
	Signature []byte
	// Token is the bearer token (not validated here).
	Token string
}

// ParseAuthorization parses an Authorization header value:
//
//	"SharedKey" SP account ":" base64(signature)
//	"SharedKeyLite" SP account ":" base64(signature)
//	"Bearer" SP token
//
// The scheme is matched case-insensitively. Anything else is 400 InvalidAuthenticationInfo.
func ParseAuthorization(v string) (Authorization, error) {
	return parseAuthorization(v, nil)
}

// strictBase64 decodes signatures: standard alphabet, padding required, no stray bits.
var strictBase64 = base64.StdEncoding.Strict()

// parseAuthorization is ParseAuthorization decoding the signature into sigBuf when it fits
// (the Signature then aliases sigBuf), else into a new slice.
func parseAuthorization(v string, sigBuf []byte) (Authorization, error) {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(v), " ")
	rest = strings.TrimSpace(rest)
	if !ok || rest == "" {
		return Authorization{}, invalidAuthInfo()
	}
	var a Authorization
	switch {
	case strings.EqualFold(scheme, "SharedKey"):
		a.Scheme = SchemeSharedKey
	case strings.EqualFold(scheme, "SharedKeyLite"):
		a.Scheme = SchemeSharedKeyLite
	case strings.EqualFold(scheme, "Bearer"):
		return Authorization{Scheme: SchemeBearer, Token: rest}, nil
	default:
		return Authorization{}, invalidAuthInfo()
	}
	account, sig, ok := strings.Cut(rest, ":")
	if !ok || account == "" || sig == "" {
		return Authorization{}, invalidAuthInfo()
	}
	dst := sigBuf
	if n := strictBase64.DecodedLen(len(sig)); n > len(dst) {
		dst = make([]byte, n)
	}
	n, err := strictBase64.Decode(dst, []byte(sig))
	if err != nil {
		return Authorization{}, invalidAuthInfo()
	}
	a.Account, a.Signature = account, dst[:n]
	return a, nil
}

func invalidAuthInfo() error { return azerr.New(azerr.InvalidAuthenticationInfo) }
