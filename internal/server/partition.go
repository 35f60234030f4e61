package server

import (
	"strconv"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/query"
	"github.com/tablo/tablo/internal/table"
)

// The partition layer's hooks are package edge's (edge/partition.go): each handler admits
// its operation just before the service runs, and Handle finishes it. This file describes the
// Table service's operations in the layer's terms.

// admit reports op to the partition layer before the service runs it. A non-nil error is
// the answer instead of the operation.
func (s *Server) admit(c *call, op partition.Op) error { return s.p.Admit(&c.Call, op) }

// admitQuery admits a query over the key span its filter plans (from the continuation on).
func (s *Server) admitQuery(c *call, q *table.Query) error {
	if s.parts == nil {
		return nil
	}
	plan := query.PlanQuery(q.Filter)
	op := partition.Op{Container: c.res.table, Kind: partition.KindTableScan, Open: true}
	if len(plan.Ranges) > 0 {
		lo, hi := plan.Ranges[0].Start, plan.Ranges[len(plan.Ranges)-1].End
		op.Key = lo.PK
		if hi.Kind != query.PosInf {
			op.HiKey, op.Open = hi.PK, false
		}
	}
	switch plan.Kind {
	case query.Point:
		op.Kind = partition.KindPointRead
	case query.RowRange:
		op.Kind = partition.KindRowRange
	case query.Partition:
		op.Kind = partition.KindPartition
	case query.PartitionRange:
		op.Kind = partition.KindPartitionRange
	case query.Union:
		op.Kind = partition.KindUnion
	}
	if op.Kind == partition.KindPointRead {
		op.Kind = partition.KindRowRange // a query, even of one row: it has a span
	}
	if plan.Kind == query.Empty {
		op = partition.Op{Container: c.res.table, Kind: partition.KindOther} // touches nothing
	} else if q.HasNext && keys.CompareOrdinal(op.Key, q.NextPartitionKey) < 0 {
		op.Key = q.NextPartitionKey
	}
	return s.admit(c, op)
}

// finishPartition reports the outcome (after-apply faults included).
func (s *Server) finishPartition(c *call) {
	s.p.FinishPartition(&c.Call, func(err error) { s.writeError(c, err) })
}

// rangesHeader is the query plan's note of the range partitions a query touched.
func rangesHeader(c *call) string {
	n, names := c.Part.Ranges()
	if n == 0 {
		return ""
	}
	return "; ranges=" + strconv.Itoa(n) + " " + names
}
