package query

import (
	"bytes"
	"strings"

	"github.com/tablo/tablo/internal/keys"
)

// Span is a half-open range [Start, End) of encoded entity keys (package keys).
type Span struct {
	Start, End []byte
}

// Spans maps the plan's ranges into one table's encoded key space, in ascending order.
// An empty plan has no spans.
func (p *Plan) Spans(tableID uint64) []Span {
	out := make([]Span, 0, len(p.Ranges))
	for _, r := range p.Ranges {
		out = append(out, Span{Start: encodeBound(tableID, r.Start), End: encodeBound(tableID, r.End)})
	}
	return out
}

// encodeBound maps a position to the smallest encoded key at or after it. The encoding is
// order-preserving and prefix-free, so key(pk, rk)+0x00 lies after key(pk, rk) and before
// every greater entity key, and PrefixEnd(partition prefix) after every row of the partition.
func encodeBound(tableID uint64, b Bound) []byte {
	switch b.Kind {
	case NegInf:
		return keys.TablePrefix(tableID)
	case BeforePartition:
		return keys.PartitionPrefix(tableID, b.PK)
	case BeforeRow:
		return keys.Entity(tableID, b.PK, b.RK)
	case AfterRow:
		return append(keys.Entity(tableID, b.PK, b.RK), 0x00)
	case AfterPartition:
		return keys.PrefixEnd(keys.PartitionPrefix(tableID, b.PK))
	}
	return keys.TableEnd(tableID)
}

// ClipSpans returns the parts of spans at or after from (a continuation's resume key),
// dropping spans that end at or before it. spans must be sorted as Spans returns them.
func ClipSpans(spans []Span, from []byte) []Span {
	out := make([]Span, 0, len(spans))
	for _, s := range spans {
		if bytes.Compare(s.End, from) <= 0 {
			continue
		}
		if bytes.Compare(s.Start, from) < 0 {
			s.Start = from
		}
		out = append(out, s)
	}
	return out
}

// String describes the plan for a debug header, e.g.
//
//	point pk='p1' rk='r1'
//	row-range pk='p1' rk=['a','b')
//	partition-range pk=('a',+inf]
//	union partition pk='a' | partition pk='b'
//
// with " +residual" when entities in the ranges are still filtered. Non-printable and
// non-ASCII bytes are percent-escaped so the text is a valid header value.
func (p *Plan) String() string {
	var b strings.Builder
	switch p.Kind {
	case Empty, TableScan:
		b.WriteString(p.Kind.String())
	case Union:
		b.WriteString("union")
		for i, r := range p.Ranges {
			if i > 0 {
				b.WriteString(" |")
			}
			b.WriteByte(' ')
			describeRange(&b, r)
		}
	default:
		describeRange(&b, p.Ranges[0])
	}
	if p.Residual != nil {
		b.WriteString(" +residual")
	}
	return b.String()
}

func describeRange(b *strings.Builder, r Range) {
	k := classifyRange(r)
	b.WriteString(k.String())
	s, e := r.Start, r.End
	switch k {
	case Point:
		b.WriteString(" pk=" + headerQuote(s.PK) + " rk=" + headerQuote(s.RK))
	case Partition:
		b.WriteString(" pk=" + headerQuote(s.PK))
	case RowRange:
		b.WriteString(" pk=" + headerQuote(s.PK) + " rk=")
		switch s.Kind {
		case BeforePartition:
			b.WriteString("[-inf")
		case BeforeRow:
			b.WriteString("[" + headerQuote(s.RK))
		default:
			b.WriteString("(" + headerQuote(s.RK))
		}
		b.WriteByte(',')
		switch e.Kind {
		case AfterPartition:
			b.WriteString("+inf]")
		case BeforeRow:
			b.WriteString(headerQuote(e.RK) + ")")
		default:
			b.WriteString(headerQuote(e.RK) + "]")
		}
	case PartitionRange:
		b.WriteString(" pk=")
		describeStart(b, s)
		b.WriteByte(',')
		describeEnd(b, e)
	}
}

// describeStart and describeEnd write a general bound: 'pk' for a partition edge, 'pk'/'rk'
// for a row edge, with [ ] for inclusive and ( ) for exclusive.
func describeStart(b *strings.Builder, s Bound) {
	switch s.Kind {
	case NegInf:
		b.WriteString("[-inf")
	case BeforePartition:
		b.WriteString("[" + headerQuote(s.PK))
	case AfterPartition:
		b.WriteString("(" + headerQuote(s.PK))
	case BeforeRow:
		b.WriteString("[" + headerQuote(s.PK) + "/" + headerQuote(s.RK))
	case AfterRow:
		b.WriteString("(" + headerQuote(s.PK) + "/" + headerQuote(s.RK))
	}
}

func describeEnd(b *strings.Builder, e Bound) {
	switch e.Kind {
	case PosInf:
		b.WriteString("+inf]")
	case BeforePartition:
		b.WriteString(headerQuote(e.PK) + ")")
	case AfterPartition:
		b.WriteString(headerQuote(e.PK) + "]")
	case BeforeRow:
		b.WriteString(headerQuote(e.PK) + "/" + headerQuote(e.RK) + ")")
	case AfterRow:
		b.WriteString(headerQuote(e.PK) + "/" + headerQuote(e.RK) + "]")
	}
}

// headerQuote quotes s like a filter string literal, percent-escaping '%', control and
// non-ASCII bytes.
func headerQuote(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			b.WriteString("''")
		case c == '%' || c < 0x20 || c >= 0x7F:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xF])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
