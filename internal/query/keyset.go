package query

import (
	"unicode/utf8"

	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
)

// This file is the planner's algebra: sets of (PartitionKey, RowKey) pairs described as unions
// of boxes, one string interval per key. A keySet over-approximates the pairs for which an
// expression can be true; when exact is set it describes them precisely.

// Names of the key properties.
const (
	propPK = "PartitionKey"
	propRK = "RowKey"
)

// maxBoxes caps the size of a keySet; beyond it the planner gives up precision (falls back to
// a wider scan), never correctness.
const maxBoxes = 64

type boundKind uint8

const (
	unbounded boundKind = iota // only for hi: no upper bound
	incl
	excl
)

// interval is a set of strings in ordinal order. lo is always bounded: the smallest string
// is "" (inclusive), which is how "no lower bound" is written. That makes "less than the
// empty string" empty and "at most the empty string" the point "".
type interval struct {
	lo, hi   string
	loK, hiK boundKind
}

var fullInterval = interval{loK: incl}

func (a interval) isFull() bool { return a.lo == "" && a.loK == incl && a.hiK == unbounded }

func (a interval) point() (string, bool) {
	return a.lo, a.loK == incl && a.hiK == incl && a.lo == a.hi
}

func (a interval) isEmpty() bool {
	if a.hiK == unbounded {
		return false
	}
	c := keys.CompareOrdinal(a.lo, a.hi)
	return c > 0 || c == 0 && (a.loK == excl || a.hiK == excl)
}

func (a interval) intersect(b interval) interval {
	r := a
	switch c := keys.CompareOrdinal(a.lo, b.lo); {
	case c < 0:
		r.lo, r.loK = b.lo, b.loK
	case c == 0 && b.loK == excl:
		r.loK = excl
	}
	switch {
	case a.hiK == unbounded:
		r.hi, r.hiK = b.hi, b.hiK
	case b.hiK == unbounded:
	default:
		switch c := keys.CompareOrdinal(a.hi, b.hi); {
		case c > 0:
			r.hi, r.hiK = b.hi, b.hiK
		case c == 0 && b.hiK == excl:
			r.hiK = excl
		}
	}
	return r
}

// box is PartitionKey ∈ pk and RowKey ∈ rk.
type box struct{ pk, rk interval }

var fullBox = box{pk: fullInterval, rk: fullInterval}

// representable reports whether a key range can describe the box exactly: one partition, or
// no RowKey restriction.
func (b box) representable() bool {
	_, point := b.pk.point()
	return point || b.rk.isFull()
}

// keySet is a union of boxes. exact means membership is equivalent to the expression.
type keySet struct {
	boxes []box
	exact bool
}

func fullSet(exact bool) keySet { return keySet{boxes: []box{fullBox}, exact: exact} }
func emptySet() keySet          { return keySet{exact: true} }

func (s keySet) isFull() bool {
	return len(s.boxes) == 1 && s.boxes[0].pk.isFull() && s.boxes[0].rk.isFull()
}

func (s keySet) representable() bool {
	for _, b := range s.boxes {
		if !b.representable() {
			return false
		}
	}
	return true
}

// intersect returns a ∩ b. ok is false when the result had to be widened to fit maxBoxes.
func intersect(a, b keySet) (keySet, bool) {
	switch {
	case a.exact && len(a.boxes) == 0:
		return a, true
	case b.exact && len(b.boxes) == 0:
		return b, true
	}
	r := keySet{exact: a.exact && b.exact}
	for _, x := range a.boxes {
		for _, y := range b.boxes {
			z := box{pk: x.pk.intersect(y.pk), rk: x.rk.intersect(y.rk)}
			if z.pk.isEmpty() || z.rk.isEmpty() {
				continue
			}
			if len(r.boxes) == maxBoxes {
				return fullSet(false), false
			}
			r.boxes = append(r.boxes, z)
		}
	}
	return r, true
}

// union returns a ∪ b, widened to the full set if it would exceed maxBoxes.
func union(a, b keySet) keySet {
	switch {
	case a.exact && a.isFull():
		return a
	case b.exact && b.isFull():
		return b
	}
	if len(a.boxes)+len(b.boxes) > maxBoxes {
		return fullSet(false)
	}
	boxes := make([]box, 0, len(a.boxes)+len(b.boxes))
	return keySet{boxes: append(append(boxes, a.boxes...), b.boxes...), exact: a.exact && b.exact}
}

// keySetOf computes the key set of an expression.
func keySetOf(x Expr) keySet {
	switch x := x.(type) {
	case *Compare:
		return compareSet(x)
	case *BoolConst:
		if x.Value {
			return fullSet(true)
		}
		return emptySet()
	case *BoolProp:
		if x.Name == propPK || x.Name == propRK {
			return emptySet() // keys are Strings, never Boolean true
		}
	case *Not:
		c := keySetOf(x.X)
		switch {
		case c.exact && len(c.boxes) == 0:
			return fullSet(true)
		case c.exact && c.isFull():
			return emptySet()
		}
	case *Logical:
		s := keySetOf(x.Terms[0])
		for _, t := range x.Terms[1:] {
			if x.Op == Or {
				s = union(s, keySetOf(t))
			} else {
				s, _ = intersect(s, keySetOf(t)) // a widened result is inexact, so still safe
			}
		}
		return s
	}
	return fullSet(false)
}

// compareSet is the key set of one comparison. Keys are always present Strings, so a key
// compared with a String literal is an exact interval, and with any other literal a type
// mismatch whose outcome is constant (eq false, ne true, lt/le true, gt/ge false).
func compareSet(c *Compare) keySet {
	if c.Prop != propPK && c.Prop != propRK {
		return fullSet(false)
	}
	if c.Value.Type != entity.String {
		if c.Op.holds(mismatch) {
			return fullSet(true)
		}
		return emptySet()
	}
	v := c.Value.S
	if !utf8.ValidString(v) {
		// CompareOrdinal and the key encoding agree only on valid UTF-8; leave such a
		// comparison to the residual.
		return fullSet(false)
	}
	var ivs []interval
	switch c.Op {
	case Eq:
		ivs = []interval{{lo: v, loK: incl, hi: v, hiK: incl}}
	case Ne:
		ivs = []interval{{loK: incl, hi: v, hiK: excl}, {lo: v, loK: excl}}
	case Gt:
		ivs = []interval{{lo: v, loK: excl}}
	case Ge:
		ivs = []interval{{lo: v, loK: incl}}
	case Lt:
		ivs = []interval{{loK: incl, hi: v, hiK: excl}}
	case Le:
		ivs = []interval{{loK: incl, hi: v, hiK: incl}}
	}
	s := keySet{exact: true}
	for _, iv := range ivs {
		if iv.isEmpty() {
			continue
		}
		b := box{pk: iv, rk: fullInterval}
		if c.Prop == propRK {
			b = box{pk: fullInterval, rk: iv}
		}
		s.boxes = append(s.boxes, b)
	}
	return s
}
