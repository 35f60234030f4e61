package query

import "github.com/tablo/tablo/internal/entity"

// tokKind is the lexical class of a token.
type tokKind uint8

const (
	tEOF     tokKind = iota
	tIdent           // property name (or an unsupported word such as a function name)
	tLiteral         // typed literal; token.val holds the value
	tLParen
	tRParen
	tComma
	tAnd
	tOr
	tNot
	tNull
	tEq // comparison operators tEq..tLe must stay contiguous and in Op order
	tNe
	tGt
	tGe
	tLt
	tLe
)

// keyword returns the kind of a lower-case keyword. true and false are literals and are
// handled by the scanner.
func keyword(s string) (tokKind, bool) {
	switch s {
	case "and":
		return tAnd, true
	case "or":
		return tOr, true
	case "not":
		return tNot, true
	case "null":
		return tNull, true
	case "eq":
		return tEq, true
	case "ne":
		return tNe, true
	case "gt":
		return tGt, true
	case "ge":
		return tGe, true
	case "lt":
		return tLt, true
	case "le":
		return tLe, true
	}
	return 0, false
}

// isArithmetic reports OData operators the Table service does not support.
func isArithmetic(s string) bool {
	switch s {
	case "add", "sub", "mul", "div", "mod":
		return true
	}
	return false
}

// token is one lexeme. text is the source slice; pos its byte offset.
type token struct {
	kind tokKind
	pos  int
	text string
	val  entity.Value // tLiteral only
}

func (k tokKind) isCompare() bool { return k >= tEq && k <= tLe }

// describe names a token for error messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of filter"
	case tLiteral:
		return "literal " + t.text
	}
	return "'" + t.text + "'"
}
