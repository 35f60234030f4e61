package query

import (
	"slices"

	"github.com/tablo/tablo/internal/keys"
)

// Kind classifies a plan, from cheapest to most expensive.
type Kind uint8

// Plan kinds.
const (
	Empty          Kind = iota + 1 // the filter can never match: no I/O at all
	Point                          // one (PartitionKey, RowKey)
	RowRange                       // one partition, bounded RowKeys
	Partition                      // one whole partition
	PartitionRange                 // a contiguous range across partitions
	Union                          // several disjoint ranges (an "or" of key conditions)
	TableScan                      // the whole table
)

var kindNames = [...]string{
	Empty: "empty", Point: "point", RowRange: "row-range", Partition: "partition",
	PartitionRange: "partition-range", Union: "union", TableScan: "table-scan",
}

func (k Kind) String() string {
	if k == 0 || int(k) >= len(kindNames) {
		return "kind?"
	}
	return kindNames[k]
}

// BoundKind says where a Bound lies relative to the keys it names.
type BoundKind uint8

// Bound kinds, in key order for equal keys.
const (
	NegInf          BoundKind = iota // before every key
	BeforePartition                  // before the first row of partition PK
	BeforeRow                        // just before (PK, RK): inclusive start, exclusive end
	AfterRow                         // just after (PK, RK): exclusive start, inclusive end
	AfterPartition                   // after the last row of partition PK
	PosInf                           // after every key
)

// Bound is a position between entities in (PartitionKey, RowKey) order.
type Bound struct {
	Kind   BoundKind
	PK, RK string
}

// Range is the half-open interval [Start, End) of key positions.
type Range struct {
	Start, End Bound
}

// Plan is how to execute a query: scan Ranges in order and keep the entities that satisfy
// Residual. Ranges are sorted, non-empty and disjoint, so results come out in key order.
type Plan struct {
	Kind   Kind
	Ranges []Range
	// Residual is the part of the filter the ranges do not already guarantee; nil means every
	// entity in the ranges matches.
	Residual *Filter
}

// PlanQuery plans a filter; a nil filter is a table scan. The plan never changes results:
// exactly the entities in the ranges that satisfy the residual match the filter, given that
// every entity has String PartitionKey and RowKey properties with valid UTF-8 values.
//
// Key bounds come from each top-level conjunct (including nested ands and ors of key
// comparisons, which become unions). A conjunct whose key set the ranges express exactly is
// dropped from the residual; every other conjunct stays in it.
func PlanQuery(f *Filter) *Plan {
	if f == nil {
		return &Plan{Kind: TableScan, Ranges: []Range{{Start: Bound{Kind: NegInf}, End: Bound{Kind: PosInf}}}}
	}
	conjuncts := []Expr{f.Root}
	if l, ok := f.Root.(*Logical); ok && l.Op == And {
		conjuncts = l.Terms
	}
	total := fullSet(true)
	widened := false
	sets := make([]keySet, len(conjuncts))
	for i, c := range conjuncts {
		sets[i] = keySetOf(c)
		var ok bool
		if total, ok = intersect(total, sets[i]); !ok {
			widened = true
		}
	}
	p := &Plan{Ranges: toRanges(total.boxes)}
	p.Kind = classify(p.Ranges)
	switch {
	case p.Kind == Empty:
		return p
	case widened:
		// The ranges may no longer imply any conjunct: keep the whole filter.
		p.Residual = f
		return p
	}
	// An exact conjunct can be dropped when the ranges imply it: each final box lies inside
	// one of its boxes, and a range widens a box only by dropping a RowKey restriction across
	// partitions, which stays inside a conjunct box that has no RowKey restriction.
	finalExact := total.representable()
	var rest []Expr
	for i, c := range conjuncts {
		if !sets[i].exact || !finalExact && !sets[i].representable() {
			rest = append(rest, c)
		}
	}
	switch {
	case len(rest) == len(conjuncts):
		p.Residual = f
	case len(rest) == 1:
		p.Residual = &Filter{Root: rest[0]}
	case len(rest) > 1:
		p.Residual = &Filter{Root: &Logical{Op: And, Terms: rest}}
	}
	return p
}

// toRanges maps boxes to key ranges (dropping a RowKey restriction that spans partitions,
// which the residual still checks), then sorts and merges them.
func toRanges(boxes []box) []Range {
	rs := make([]Range, 0, len(boxes))
	for _, b := range boxes {
		rs = append(rs, boxRange(b))
	}
	slices.SortFunc(rs, func(a, b Range) int { return compareBound(a.Start, b.Start) })
	out := rs[:0]
	for _, r := range rs {
		if compareBound(r.Start, r.End) >= 0 {
			continue
		}
		if n := len(out); n > 0 && compareBound(r.Start, out[n-1].End) <= 0 {
			if compareBound(r.End, out[n-1].End) > 0 {
				out[n-1].End = r.End
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func boxRange(b box) Range {
	if pk, ok := b.pk.point(); ok {
		r := Range{Start: Bound{Kind: BeforePartition, PK: pk}, End: Bound{Kind: AfterPartition, PK: pk}}
		switch {
		case b.rk.loK == excl:
			r.Start = Bound{Kind: AfterRow, PK: pk, RK: b.rk.lo}
		case b.rk.lo != "":
			r.Start = Bound{Kind: BeforeRow, PK: pk, RK: b.rk.lo}
		}
		switch b.rk.hiK {
		case incl:
			r.End = Bound{Kind: AfterRow, PK: pk, RK: b.rk.hi}
		case excl:
			r.End = Bound{Kind: BeforeRow, PK: pk, RK: b.rk.hi}
		}
		return r
	}
	r := Range{Start: Bound{Kind: NegInf}, End: Bound{Kind: PosInf}}
	switch {
	case b.pk.loK == excl:
		r.Start = Bound{Kind: AfterPartition, PK: b.pk.lo}
	case b.pk.lo != "":
		r.Start = Bound{Kind: BeforePartition, PK: b.pk.lo}
	}
	switch b.pk.hiK {
	case incl:
		r.End = Bound{Kind: AfterPartition, PK: b.pk.hi}
	case excl:
		r.End = Bound{Kind: BeforePartition, PK: b.pk.hi}
	}
	return r
}

// compareBound orders positions: by PartitionKey, then partition start < rows < partition end,
// rows by RowKey with "before" < "after".
func compareBound(a, b Bound) int {
	switch {
	case a.Kind == b.Kind && (a.Kind == NegInf || a.Kind == PosInf):
		return 0
	case a.Kind == NegInf || b.Kind == PosInf:
		return -1
	case a.Kind == PosInf || b.Kind == NegInf:
		return 1
	}
	if c := keys.CompareOrdinal(a.PK, b.PK); c != 0 {
		return c
	}
	rank := func(k BoundKind) int {
		switch k {
		case BeforePartition:
			return 0
		case AfterPartition:
			return 2
		}
		return 1
	}
	if c := rank(a.Kind) - rank(b.Kind); c != 0 {
		return c
	}
	if a.Kind == BeforePartition || a.Kind == AfterPartition {
		return 0
	}
	if c := keys.CompareOrdinal(a.RK, b.RK); c != 0 {
		return c
	}
	return int(a.Kind) - int(b.Kind) // BeforeRow < AfterRow
}

func classify(rs []Range) Kind {
	switch len(rs) {
	case 0:
		return Empty
	case 1:
		return classifyRange(rs[0])
	}
	return Union
}

func classifyRange(r Range) Kind {
	s, e := r.Start, r.End
	switch {
	case s.Kind == NegInf && e.Kind == PosInf:
		return TableScan
	case s.Kind == NegInf || e.Kind == PosInf || s.Kind == AfterPartition || e.Kind == BeforePartition || s.PK != e.PK:
		return PartitionRange
	case s.Kind == BeforePartition && e.Kind == AfterPartition:
		return Partition
	case s.Kind == BeforeRow && e.Kind == AfterRow && s.RK == e.RK:
		return Point
	}
	return RowRange
}

// Point returns the key of a point plan.
func (p *Plan) Point() (pk, rk string, ok bool) {
	if p.Kind != Point {
		return "", "", false
	}
	return p.Ranges[0].Start.PK, p.Ranges[0].Start.RK, true
}
