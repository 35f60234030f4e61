package server

import (
	"errors"
	"hash/maphash"
	"net"
	"strconv"
	"time"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/query"
	"github.com/tablo/tablo/internal/table"
)

// The partition layer's hooks: each handler reports its operation and partition with admit
// just before the service runs (admit's answer may refuse it), and Handle reports the outcome
// with finishPartition. Throttling and faults are the layer's decisions; this file only
// carries them out.

// errDropConnection asks Handle to close the connection without an answer.
var errDropConnection = errors.New("server: drop the connection")

// partitionCall is a call's state in the partition layer.
type partitionCall struct {
	admitted bool
	ticket   partition.Ticket
	// entities read, and distinct partitions among them (a query's), for Finish.
	entities, partitions int
	lastPK               uint64
}

// admit reports op to the partition layer before the service runs it. A non-nil error is
// the answer instead of the operation.
func (s *Server) admit(c *call, op partition.Op) error {
	if s.parts == nil {
		return nil
	}
	op.Service, op.Account, op.BytesIn = partition.Table, c.Account, len(c.FC.Request.Body())
	c.part.ticket = s.parts.Admit(&op, c.Start)
	c.part.admitted = true
	tk := &c.part.ticket
	if tk.Delay > 0 {
		time.Sleep(tk.Delay)
	}
	if tk.Drop {
		return errDropConnection
	}
	return tk.Err
}

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

// notePartition counts an entity a query returned (its partition key, for the distinct
// partitions it touched).
func (s *Server) notePartition(c *call, pk string) {
	h := maphash.String(s.pkSeed, pk)
	if c.part.entities == 0 || h != c.part.lastPK {
		c.part.partitions++
		c.part.lastPK = h
	}
	c.part.entities++
}

// finishPartition reports the outcome; for an applied operation it carries out an
// after-apply fault (the reply is lost, delayed or the connection dropped).
func (s *Server) finishPartition(c *call) {
	if !c.part.admitted {
		return
	}
	tk := &c.part.ticket
	if c.Status > 0 && c.Status < 300 {
		drop, delay, err := s.parts.AfterFault(tk)
		if delay > 0 {
			time.Sleep(delay)
		}
		switch {
		case drop:
			s.dropConnection(c)
		case err != nil:
			c.FC.Response.Reset()
			s.p.SetCommonHeaders(&c.Call)
			s.writeError(c, err)
		}
	}
	s.parts.Finish(tk, partition.Result{
		Status: c.Status, BytesOut: len(c.FC.Response.Body()),
		Entities: c.part.entities, Partitions: c.part.partitions, Now: time.Now(),
	})
}

// dropConnection closes the connection without answering, as a failing front end would.
func (s *Server) dropConnection(c *call) {
	c.Status = 0
	c.FC.Response.Reset()
	c.FC.HijackSetNoResponse(true)
	c.FC.Hijack(func(net.Conn) {}) // fasthttp closes the connection once this returns
}

// rangesHeader is the query plan's note of the range partitions a query touched.
func rangesHeader(c *call) string {
	if !c.part.admitted || c.part.ticket.RangeCount == 0 {
		return ""
	}
	return "; ranges=" + strconv.Itoa(c.part.ticket.RangeCount) + " " + c.part.ticket.Ranges
}
