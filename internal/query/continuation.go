package query

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxTokenLen bounds a continuation token. A key is at most 1,024 UTF-16 units, i.e. at most
// 3 KiB of UTF-8 and 4 KiB of base64, so every real token fits with room to spare.
const maxTokenLen = 8192

// EncodeToken encodes a continuation key (NextPartitionKey, NextRowKey or NextTableName) in
// Azure's form "1!<n>!<base64>", where <base64> is standard base64 of the key's UTF-8 bytes
// with '=' padding written as '-' and n is its length. Example: "13" → "1!4!MTM-".
func EncodeToken(key string) string {
	b64 := base64.StdEncoding.EncodeToString([]byte(key))
	b64 = strings.ReplaceAll(b64, "=", "-")
	return "1!" + strconv.Itoa(len(b64)) + "!" + b64
}

// DecodeToken decodes a token made by EncodeToken. A '+' that arrived as a space (a token
// sent unencoded and then form-decoded) is accepted. Anything else malformed — wrong version,
// wrong length, bad base64, a key that is not UTF-8 — is InvalidInput.
func DecodeToken(tok string) (string, error) {
	bad := optionErr("The continuation token '%s' is not valid.", echo(tok))
	if len(tok) > maxTokenLen {
		return "", bad
	}
	rest, ok := strings.CutPrefix(tok, "1!")
	if !ok {
		return "", bad
	}
	num, b64, ok := strings.Cut(rest, "!")
	if !ok || num == "" || len(num) > 5 {
		return "", bad
	}
	for i := 0; i < len(num); i++ {
		if !isDigit(num[i]) {
			return "", bad
		}
	}
	if n, err := strconv.Atoi(num); err != nil || n != len(b64) {
		return "", bad
	}
	b64 = strings.ReplaceAll(b64, " ", "+")
	// Only trailing '-' are padding; base64 itself never contains '-'.
	trimmed := strings.TrimRight(b64, "-")
	b64 = trimmed + strings.Repeat("=", len(b64)-len(trimmed))
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || !utf8.Valid(raw) {
		return "", bad
	}
	return string(raw), nil
}
