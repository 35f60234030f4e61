package query

import (
	"bytes"
	"cmp"
	"math"

	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
)

// Getter is what a filter reads properties from. *entity.Entity implements it (including the
// system properties PartitionKey, RowKey and Timestamp); Query Tables uses TableRow.
type Getter interface {
	Get(name string) (entity.Value, bool)
}

// TableRow is the Getter of Query Tables: its only property is TableName (a String).
type TableRow struct {
	Name string
}

// Get implements Getter.
func (t *TableRow) Get(name string) (entity.Value, bool) {
	if name == "TableName" {
		return entity.StringValue(t.Name), true
	}
	return entity.Value{}, false
}

// Eval reports whether g satisfies the filter. A nil filter matches everything. Eval does not
// allocate (beyond what g.Get does).
func (f *Filter) Eval(g Getter) bool {
	if f == nil {
		return true
	}
	return eval(f.Root, g)
}

func eval(x Expr, g Getter) bool {
	switch x := x.(type) {
	case *Compare:
		return x.eval(g)
	case *Logical:
		// and: true unless some term is false; or: false unless some term is true.
		want := x.Op == Or
		for _, t := range x.Terms {
			if eval(t, g) == want {
				return want
			}
		}
		return !want
	case *Not:
		return !eval(x.X, g)
	case *BoolProp:
		v, ok := g.Get(x.Name)
		return ok && v.Type == entity.Boolean && v.Bool()
	case *BoolConst:
		return x.Value
	}
	return false
}

// order is the outcome of comparing a property value with a literal.
type order int8

const (
	less order = iota - 1
	equal
	greater
	unordered // same kind of value but no order (NaN)
	mismatch  // incompatible types
)

func (c *Compare) eval(g Getter) bool {
	v, ok := g.Get(c.Prop)
	if !ok {
		return false // a missing property satisfies no comparison, not even ne
	}
	return c.Op.holds(compareValue(v, c.Value))
}

// holds applies the operator to a comparison outcome, including Azure's results for a type
// mismatch (eq false, ne true, lt/le true, gt/ge false) and for NaN (only ne is true).
func (o Op) holds(r order) bool {
	switch r {
	case mismatch:
		return o == Ne || o == Lt || o == Le
	case unordered:
		return o == Ne
	}
	switch o {
	case Eq:
		return r == equal
	case Ne:
		return r != equal
	case Gt:
		return r == greater
	case Ge:
		return r != less
	case Lt:
		return r == less
	case Le:
		return r != greater
	}
	return false
}

// compareValue compares a stored value v with literal lit under the literal-to-property
// compatibility table: the property's type decides; Int32 widens to Int64, Int32 and Int64
// widen to Double (compared exactly); anything else of a different type is a mismatch.
func compareValue(v, lit entity.Value) order {
	switch v.Type {
	case entity.String:
		if lit.Type == entity.String {
			return order(keys.CompareOrdinal(v.S, lit.S))
		}
	case entity.Int32, entity.Boolean, entity.DateTime:
		if lit.Type == v.Type {
			return order(cmp.Compare(v.I, lit.I))
		}
	case entity.Int64:
		if lit.Type == entity.Int64 || lit.Type == entity.Int32 {
			return order(cmp.Compare(v.I, lit.I))
		}
	case entity.Double:
		switch lit.Type {
		case entity.Double:
			if math.IsNaN(v.F) || math.IsNaN(lit.F) {
				return unordered
			}
			return order(cmp.Compare(v.F, lit.F))
		case entity.Int32, entity.Int64:
			return compareFloatInt(v.F, lit.I)
		}
	case entity.Guid:
		if lit.Type == entity.Guid {
			return order(compareFoldASCII(v.S, lit.S))
		}
	case entity.Binary:
		if lit.Type == entity.Binary {
			return order(bytes.Compare(v.B, lit.B))
		}
	}
	return mismatch
}

// compareFloatInt compares f with i exactly (no rounding of i to float64).
func compareFloatInt(f float64, i int64) order {
	switch {
	case math.IsNaN(f):
		return unordered
	case f >= 0x1p63:
		return greater
	case f < -0x1p63:
		return less
	}
	t := math.Trunc(f) // in [-2^63, 2^63): exactly representable as int64
	if c := cmp.Compare(int64(t), i); c != 0 {
		return order(c)
	}
	return order(cmp.Compare(f, t)) // equal integer parts: the fraction decides
}

// compareFoldASCII compares two GUID texts ignoring ASCII case. Stored GUIDs and literals
// are canonical lower case already; folding keeps eq/ne correct even if one is not.
func compareFoldASCII(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		ca, cb := lowerASCII(a[i]), lowerASCII(b[i])
		if ca != cb {
			return cmp.Compare(ca, cb)
		}
	}
	return cmp.Compare(len(a), len(b))
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
