package query

import (
	"strings"

	"github.com/tablo/tablo/internal/entity"
)

// Limits bound the work a single $filter can cause. Zero fields take the defaults, except
// MaxComparisons, where zero means unlimited.
type Limits struct {
	MaxLength      int // bytes of filter text (default 32 KiB)
	MaxDepth       int // nesting of parentheses and "not" (default 100)
	MaxNodes       int // AST nodes (default 1000)
	MaxComparisons int // comparisons and bare terms; Azure documents 15 (default: unlimited)
}

// Default limits.
const (
	DefaultMaxLength = 32 << 10
	DefaultMaxDepth  = 100
	DefaultMaxNodes  = 1000
)

func (l Limits) withDefaults() Limits {
	if l.MaxLength <= 0 {
		l.MaxLength = DefaultMaxLength
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultMaxNodes
	}
	return l
}

// Parse parses and checks a $filter with the default Limits. An empty or all-blank filter
// returns (nil, nil): no filter. Errors are *Error (InvalidInput) naming a byte position.
func Parse(filter string) (*Filter, error) {
	return ParseWithLimits(filter, Limits{})
}

// ParseWithLimits is Parse with explicit limits.
func ParseWithLimits(filter string, lim Limits) (*Filter, error) {
	lim = lim.withDefaults()
	if len(filter) > lim.MaxLength {
		return nil, errAt(filter, lim.MaxLength, "The filter is longer than %d bytes", lim.MaxLength)
	}
	if strings.TrimLeft(filter, " \t\r\n") == "" {
		return nil, nil
	}
	p := &parser{sc: scanner{src: filter}, lim: lim}
	if err := p.advance(); err != nil {
		return nil, err
	}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.unexpected("'and', 'or' or end of filter")
	}
	return &Filter{Root: root}, nil
}

// parser is a recursive-descent parser with one token of lookahead. Each parse function
// carries its grammar rule.
type parser struct {
	sc          scanner
	tok         token
	lim         Limits
	depth       int
	nodes       int
	comparisons int
}

func (p *parser) advance() error {
	t, err := p.sc.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	return errAt(p.sc.src, pos, format, args...)
}

// unexpected reports the current token where something else was expected.
func (p *parser) unexpected(want string) error {
	t := p.tok
	switch {
	case t.kind == tIdent && isArithmetic(t.text):
		return p.errAt(t.pos, "Syntax error: arithmetic operator '%s' is not supported", t.text)
	case t.kind == tIdent && isKeywordFold(t.text):
		return p.errAt(t.pos, "Syntax error: '%s' found, keywords are lower case", t.text)
	}
	return p.errAt(t.pos, "Syntax error: %s expected, found %s", want, t.describe())
}

func isKeywordFold(s string) bool {
	_, ok := keyword(strings.ToLower(s))
	return ok && strings.ToLower(s) != s
}

// node counts one AST node against the limits.
func (p *parser) node(pos int, comparison bool) error {
	p.nodes++
	if p.nodes > p.lim.MaxNodes {
		return p.errAt(pos, "The filter has more than %d nodes", p.lim.MaxNodes)
	}
	if comparison {
		p.comparisons++
		if p.lim.MaxComparisons > 0 && p.comparisons > p.lim.MaxComparisons {
			return p.errAt(pos, "The filter has more than %d comparisons", p.lim.MaxComparisons)
		}
	}
	return nil
}

// enter counts one nesting level (a parenthesis or a "not").
func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > p.lim.MaxDepth {
		return p.errAt(pos, "The filter is nested deeper than %d levels", p.lim.MaxDepth)
	}
	return nil
}

// parseOr: orExpr = andExpr { "or" andExpr } .
func (p *parser) parseOr() (Expr, error) {
	return p.parseLogical(Or)
}

// parseAnd: andExpr = unaryExpr { "and" unaryExpr } .
func (p *parser) parseAnd() (Expr, error) {
	return p.parseLogical(And)
}

func (p *parser) parseLogical(op LogicOp) (Expr, error) {
	sep, sub := tOr, p.parseAnd
	if op == And {
		sep, sub = tAnd, p.parseUnary
	}
	x, err := sub()
	if err != nil || p.tok.kind != sep {
		return x, err
	}
	l := &Logical{Op: op}
	l.Terms = appendFlat(l.Terms, op, x)
	for p.tok.kind == sep {
		if err := p.advance(); err != nil {
			return nil, err
		}
		y, err := sub()
		if err != nil {
			return nil, err
		}
		l.Terms = appendFlat(l.Terms, op, y)
	}
	if err := p.node(l.Pos(), false); err != nil {
		return nil, err
	}
	return l, nil
}

// appendFlat appends x to terms, splicing in the terms of a parenthesised x with the same
// operator: (a and b) and c ≡ a and b and c. This keeps the AST canonical for the printer.
func appendFlat(terms []Expr, op LogicOp, x Expr) []Expr {
	if l, ok := x.(*Logical); ok && l.Op == op {
		return append(terms, l.Terms...)
	}
	return append(terms, x)
}

// parseUnary: unaryExpr = "not" unaryExpr | primary .
func (p *parser) parseUnary() (Expr, error) {
	if p.tok.kind != tNot {
		return p.parsePrimary()
	}
	pos := p.tok.pos
	if err := p.enter(pos); err != nil {
		return nil, err
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	x, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	p.depth--
	if err := p.node(pos, false); err != nil {
		return nil, err
	}
	return &Not{NotPos: pos, X: x}, nil
}

// parsePrimary: primary = "(" orExpr ")" | operand compOp operand | boolOperand .
func (p *parser) parsePrimary() (Expr, error) {
	if p.tok.kind == tLParen {
		pos := p.tok.pos
		if err := p.enter(pos); err != nil {
			return nil, err
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			return nil, p.unexpected("')'")
		}
		p.depth--
		return x, p.advance()
	}
	left, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	if !p.tok.kind.isCompare() {
		return p.boolTerm(left)
	}
	op := Op(p.tok.kind-tEq) + Eq
	if err := p.advance(); err != nil {
		return nil, err
	}
	right, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	c, err := checkCompare(p.sc.src, left, op, right)
	if err != nil {
		return nil, err
	}
	return c, p.node(c.Pos(), true)
}

// parseOperand: operand = propertyName | literal .
func (p *parser) parseOperand() (token, error) {
	t := p.tok
	switch t.kind {
	case tIdent, tLiteral:
		if err := p.advance(); err != nil {
			return token{}, err
		}
		if t.kind == tIdent && p.tok.kind == tLParen {
			return token{}, p.errAt(t.pos, "Syntax error: function '%s' is not supported", t.text)
		}
		return t, nil
	case tNull:
		return token{}, p.errAt(t.pos, "The 'null' literal is not supported")
	}
	return token{}, p.unexpected("property name or literal")
}

// boolTerm turns a lone operand into a term: a bare property (true iff it is Boolean true)
// or a bare true/false. Any other lone literal is an error.
func (p *parser) boolTerm(t token) (Expr, error) {
	var x Expr
	switch {
	case t.kind == tIdent:
		x = &BoolProp{Name: t.text, NamePos: t.pos}
	case t.val.Type == entity.Boolean:
		x = &BoolConst{Value: t.val.Bool(), ValuePos: t.pos}
	default:
		return nil, p.unexpected("comparison operator")
	}
	return x, p.node(t.pos, true)
}
