// Package tagquery parses and evaluates the expressions over blob index tags: the where=
// parameter of Find Blobs by Tags and the x-ms-if-tags condition header.
//
// Grammar (keywords case-insensitive):
//
//	expr   := and ("OR" and)*          OR only in conditions
//	and    := term ("AND" term)*
//	term   := "(" expr ")" | key op value   parentheses only in conditions
//	key    := "quoted" | bare            "" inside quotes is one "
//	op     := = | <> | > | >= | < | <=   <> only in conditions
//	value  := 'quoted'                   '' inside quotes is one '
//
// A Find expression holds at most 10 comparisons, may name @container (the blob's container),
// and compares one key more than once only to bound a range (> or >= with < or <=).
// Comparisons are of strings, byte by byte; a blob without the key matches no comparison.
package tagquery

import (
	"errors"
	"fmt"
	"strings"
)

// Mode selects the dialect.
type Mode int

const (
	// Find is Find Blobs by Tags' where= expression.
	Find Mode = iota
	// Condition is the x-ms-if-tags header.
	Condition
)

// MaxComparisons is the most comparisons one expression may hold.
const MaxComparisons = 10

// ContainerKey is the pseudo-key naming a blob's container in a Find expression.
const ContainerKey = "@container"

// Expr is a parsed expression.
type Expr struct {
	root node
	keys []string
}

// Keys are the keys the expression compares, in order of first appearance (@container
// excluded): Find Blobs by Tags returns these of each blob's tags.
func (e *Expr) Keys() []string { return e.keys }

// Match evaluates the expression; get returns a tag's value (ok false: the blob has none).
func (e *Expr) Match(get func(key string) (string, bool)) bool { return e.root.eval(get) }

type node interface {
	eval(get func(string) (string, bool)) bool
}

type and struct{ l, r node }
type or struct{ l, r node }

type cmp struct {
	key, op, val string
}

func (n and) eval(g func(string) (string, bool)) bool { return n.l.eval(g) && n.r.eval(g) }
func (n or) eval(g func(string) (string, bool)) bool  { return n.l.eval(g) || n.r.eval(g) }

func (n cmp) eval(g func(string) (string, bool)) bool {
	v, ok := g(n.key)
	if !ok {
		return false
	}
	c := strings.Compare(v, n.val)
	switch n.op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "<":
		return c < 0
	}
	return c <= 0 // "<="
}

// ErrSyntax wraps every parse error.
var ErrSyntax = errors.New("tag expression")

type parser struct {
	s     string
	i     int
	mode  Mode
	count int
	seen  map[string][]string // key → operators, for Find's range rule
	keys  []string
	depth int
}

// maxDepth bounds nesting, so that a hostile header cannot exhaust the stack.
const maxDepth = 32

// Parse parses an expression of the given dialect.
func Parse(s string, mode Mode) (*Expr, error) {
	p := &parser{s: s, mode: mode, seen: map[string][]string{}}
	root, err := p.expr()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, p.errf("unexpected %q", p.s[p.i:p.i+1])
	}
	return &Expr{root: root, keys: p.keys}, nil
}

func (p *parser) errf(format string, args ...any) error {
	return fmt.Errorf("%w: at position %d: %s", ErrSyntax, p.i, fmt.Sprintf(format, args...))
}

func (p *parser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

// keyword consumes word (case-insensitive) when it stands alone.
func (p *parser) keyword(word string) bool {
	p.space()
	end := p.i + len(word)
	if end > len(p.s) || !strings.EqualFold(p.s[p.i:end], word) {
		return false
	}
	if end < len(p.s) && !strings.ContainsRune(" \t\r\n(\"", rune(p.s[end])) {
		return false
	}
	p.i = end
	return true
}

func (p *parser) expr() (node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, p.errf("nested too deeply")
	}
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.keyword("or") {
		if p.mode == Find {
			return nil, p.errf("OR is not allowed")
		}
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = or{l, r}
	}
	return l, nil
}

func (p *parser) and() (node, error) {
	l, err := p.term()
	if err != nil {
		return nil, err
	}
	for p.keyword("and") {
		r, err := p.term()
		if err != nil {
			return nil, err
		}
		l = and{l, r}
	}
	return l, nil
}

func (p *parser) term() (node, error) {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '(' {
		if p.mode == Find {
			return nil, p.errf("parentheses are not allowed")
		}
		p.i++
		n, err := p.expr()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, p.errf("expected )")
		}
		p.i++
		return n, nil
	}
	return p.comparison()
}

func (p *parser) comparison() (node, error) {
	key, err := p.key()
	if err != nil {
		return nil, err
	}
	p.space()
	op := ""
	for _, o := range []string{"<>", ">=", "<=", "=", ">", "<"} {
		if strings.HasPrefix(p.s[p.i:], o) {
			op = o
			break
		}
	}
	if op == "" {
		return nil, p.errf("expected a comparison operator")
	}
	p.i += len(op)
	if op == "<>" && p.mode == Find {
		return nil, p.errf("<> is not allowed")
	}
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '\'' {
		return nil, p.errf("expected a value in single quotes")
	}
	val, err := p.quoted('\'')
	if err != nil {
		return nil, err
	}
	if err := p.note(key, op); err != nil {
		return nil, err
	}
	return cmp{key: key, op: op, val: val}, nil
}

func (p *parser) key() (string, error) {
	p.space()
	if p.i >= len(p.s) {
		return "", p.errf("expected a tag name")
	}
	var key string
	if p.s[p.i] == '"' {
		k, err := p.quoted('"')
		if err != nil {
			return "", err
		}
		key = k
	} else {
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune(" \t\r\n=<>()'\"", rune(p.s[p.i])) {
			p.i++
		}
		key = p.s[start:p.i]
	}
	if key == "" {
		return "", p.errf("expected a tag name")
	}
	if strings.HasPrefix(key, "@") {
		if p.mode == Condition || key != ContainerKey {
			return "", p.errf("%s is not allowed", key)
		}
	}
	return key, nil
}

// quoted reads a string opened by q at p.i; a doubled q is one literal q.
func (p *parser) quoted(q byte) (string, error) {
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		if c != q {
			b.WriteByte(c)
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == q {
			b.WriteByte(q)
			p.i++
			continue
		}
		return b.String(), nil
	}
	return "", p.errf("unterminated string")
}

// note counts a comparison and applies Find's rule on repeated keys.
func (p *parser) note(key, op string) error {
	p.count++
	if p.count > MaxComparisons {
		return p.errf("more than %d comparisons", MaxComparisons)
	}
	prev, seen := p.seen[key]
	if !seen && key != ContainerKey {
		p.keys = append(p.keys, key)
	}
	if p.mode == Find && seen {
		// Allowed only as the two ends of a range: one lower bound and one upper bound. A
		// third comparison is refused here too: it would repeat the kind of one of the two.
		lower := op == ">" || op == ">="
		upper := op == "<" || op == "<="
		for _, q := range prev {
			ql, qu := q == ">" || q == ">=", q == "<" || q == "<="
			if !(lower && qu || upper && ql) {
				return p.errf("%s is compared more than once outside a range", key)
			}
		}
	}
	p.seen[key] = append(prev, op)
	return nil
}
