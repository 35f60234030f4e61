package query

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/tablo/tablo/internal/entity"
)

// String prints the filter in canonical form: property on the left, single spaces, lower-case
// keywords, parentheses only where and/or/not need them, and literals in one spelling per
// type (Int64 with L, Double always with '.', an exponent, INF or NaN, DateTime with seven
// fraction digits and Z, lower-case GUID and hex). Parsing the result yields the same AST.
// A nil filter prints as "".
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	printExpr(&b, f.Root)
	return b.String()
}

func printExpr(b *strings.Builder, x Expr) {
	switch x := x.(type) {
	case *Logical:
		for i, t := range x.Terms {
			if i > 0 {
				b.WriteString(" " + x.Op.String() + " ")
			}
			// Terms are never Logicals of the same Op; an or inside an and needs parentheses,
			// an and inside an or gets them for readability.
			_, paren := t.(*Logical)
			printMaybeParen(b, t, paren)
		}
	case *Not:
		b.WriteString("not ")
		switch x.X.(type) {
		case *Logical, *Compare:
			printMaybeParen(b, x.X, true)
		default:
			printExpr(b, x.X)
		}
	case *Compare:
		b.WriteString(x.Prop)
		b.WriteString(" " + x.Op.String() + " ")
		b.WriteString(FormatLiteral(x.Value))
	case *BoolProp:
		b.WriteString(x.Name)
	case *BoolConst:
		b.WriteString(strconv.FormatBool(x.Value))
	}
}

func printMaybeParen(b *strings.Builder, x Expr, paren bool) {
	if paren {
		b.WriteByte('(')
	}
	printExpr(b, x)
	if paren {
		b.WriteByte(')')
	}
}

// FormatLiteral writes v as a $filter literal that parses back to the same type and value.
func FormatLiteral(v entity.Value) string {
	switch v.Type {
	case entity.String:
		return quote(v.S)
	case entity.Boolean:
		return strconv.FormatBool(v.Bool())
	case entity.Int32:
		return strconv.FormatInt(v.I, 10)
	case entity.Int64:
		return strconv.FormatInt(v.I, 10) + "L"
	case entity.Double:
		return formatDouble(v.F)
	case entity.DateTime:
		return "datetime'" + entity.TimeOf(v.I).Format("2006-01-02T15:04:05.0000000Z") + "'"
	case entity.Guid:
		return "guid'" + strings.ToLower(v.S) + "'"
	case entity.Binary:
		return "X'" + hex.EncodeToString(v.B) + "'"
	}
	return "null"
}

func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0" // "3" would read back as an Int32
	}
	return s
}

// quote writes a string literal, doubling single quotes.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
