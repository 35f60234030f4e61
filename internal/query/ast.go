package query

import "github.com/tablo/tablo/internal/entity"

// Op is a comparison operator.
type Op uint8

// Comparison operators, in the order of their tokens (tEq..tLe).
const (
	Eq Op = iota + 1
	Ne
	Gt
	Ge
	Lt
	Le
)

var opNames = [...]string{Eq: "eq", Ne: "ne", Gt: "gt", Ge: "ge", Lt: "lt", Le: "le"}

func (o Op) String() string {
	if o == 0 || int(o) >= len(opNames) {
		return "op?"
	}
	return opNames[o]
}

// mirror returns the operator that keeps the meaning when the operands swap sides
// (5 lt X ≡ X gt 5).
func (o Op) mirror() Op {
	switch o {
	case Gt:
		return Lt
	case Ge:
		return Le
	case Lt:
		return Gt
	case Le:
		return Ge
	}
	return o
}

// LogicOp is "and" or "or".
type LogicOp uint8

// Logical operators.
const (
	And LogicOp = iota + 1
	Or
)

func (o LogicOp) String() string {
	if o == Or {
		return "or"
	}
	return "and"
}

// Expr is a boolean filter expression: *Logical, *Not, *Compare, *BoolProp or *BoolConst.
type Expr interface {
	// Pos is the byte offset of the expression's first token in the source filter.
	Pos() int
	expr()
}

// Logical is an n-ary and/or. The parser flattens nested operands of the same Op (and is
// associative), so no term of a Logical is a Logical with the same Op, and len(Terms) >= 2.
type Logical struct {
	Op    LogicOp
	Terms []Expr
}

// Not is boolean negation.
type Not struct {
	NotPos int
	X      Expr
}

// Compare is "Prop Op Value". A literal written on the left has been mirrored, so the
// property is always on the left here.
type Compare struct {
	Op       Op
	Prop     string
	Value    entity.Value
	PropPos  int
	ValuePos int
}

// BoolProp is a bare property used as a term: true iff the property is a Boolean true.
type BoolProp struct {
	Name    string
	NamePos int
}

// BoolConst is a bare true or false.
type BoolConst struct {
	Value    bool
	ValuePos int
}

func (x *Logical) Pos() int   { return x.Terms[0].Pos() }
func (x *Not) Pos() int       { return x.NotPos }
func (x *Compare) Pos() int   { return min(x.PropPos, x.ValuePos) }
func (x *BoolProp) Pos() int  { return x.NamePos }
func (x *BoolConst) Pos() int { return x.ValuePos }

func (*Logical) expr()   {}
func (*Not) expr()       {}
func (*Compare) expr()   {}
func (*BoolProp) expr()  {}
func (*BoolConst) expr() {}

// Filter is a parsed, checked $filter. A nil *Filter means "no filter": it matches every
// entity. A Filter is immutable and safe for concurrent use.
type Filter struct {
	Root Expr
}
