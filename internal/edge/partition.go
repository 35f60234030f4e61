package edge

import (
	"errors"
	"hash/maphash"
	"net"
	"time"

	"github.com/tablo/tablo/internal/partition"
)

// The partition layer's hooks, shared by the three services: a handler reports its
// operation and partition with Admit just before the service runs (Admit's answer may refuse
// it), and the service's request handler reports the outcome with FinishPartition once the
// reply is written. Throttling and faults are the layer's decisions; this file only carries
// them out.

// ErrDropConnection asks WriteError to close the connection without an answer.
var ErrDropConnection = errors.New("edge: drop the connection")

// PartitionCall is a call's state in the partition layer.
type PartitionCall struct {
	admitted bool
	ticket   partition.Ticket
	// Entities is what the request read (entities, messages; a blob read: 1); Partitions
	// the distinct partition keys among a query's entities (NoteEntity counts both).
	Entities, Partitions int
	lastPK               uint64
}

// Admit reports op to the partition layer before the service runs it (op's Service and
// Account are filled in). A non-nil error is the answer instead of the operation.
func (p *Pipeline) Admit(c *Call, op partition.Op) error {
	if p.parts == nil {
		return nil
	}
	op.Service, op.Account = p.partSvc, c.Account
	if op.BytesIn == 0 {
		if c.FC.RequestBodyStream() != nil { // a streamed body is not read yet
			op.BytesIn = max(c.FC.Request.Header.ContentLength(), 0)
		} else {
			op.BytesIn = len(c.FC.Request.Body())
		}
	}
	c.Part.ticket = p.parts.Admit(&op, c.Start)
	c.Part.admitted = true
	tk := &c.Part.ticket
	if tk.Delay > 0 {
		time.Sleep(tk.Delay)
	}
	if tk.Drop {
		return ErrDropConnection
	}
	return tk.Err
}

// NoteEntity counts an entity a query returned, by its partition key: the distinct
// partitions it touched, and the range partition that served it.
func (p *Pipeline) NoteEntity(c *Call, pk string) {
	pc := &c.Part
	if !pc.admitted {
		return
	}
	h := maphash.String(p.pkSeed, pk)
	if pc.Entities == 0 || h != pc.lastPK {
		pc.Partitions++
		pc.lastPK = h
	}
	pc.Entities++
	pc.ticket.NoteKey(pk)
}

// Ranges is how many range partitions the request touched and, for a query, their names.
func (pc *PartitionCall) Ranges() (int, string) {
	if !pc.admitted {
		return 0, ""
	}
	return pc.ticket.RangeCount, pc.ticket.Ranges
}

// FinishPartition reports the outcome; for an applied operation it first carries out an
// after-apply fault: the reply is replaced by writeError's answer (it is lost), delayed, or
// the connection dropped.
func (p *Pipeline) FinishPartition(c *Call, writeError func(error)) {
	pc := &c.Part
	if !pc.admitted {
		return
	}
	tk := &pc.ticket
	if c.Status > 0 && c.Status < 300 {
		drop, delay, err := p.parts.AfterFault(tk)
		if delay > 0 {
			time.Sleep(delay)
		}
		switch {
		case drop:
			p.DropConnection(c)
		case err != nil:
			c.FC.Response.Reset()
			p.SetCommonHeaders(c)
			writeError(err)
		}
	}
	p.parts.Finish(tk, partition.Result{
		Status: c.Status, BytesOut: bytesOut(c),
		Entities: pc.Entities, Partitions: pc.Partitions, Now: time.Now(),
	})
}

// DropConnection closes the connection without answering, as a failing front end would.
func (p *Pipeline) DropConnection(c *Call) {
	c.Status = 0
	c.FC.Response.Reset()
	c.FC.HijackSetNoResponse(true)
	c.FC.Hijack(func(net.Conn) {}) // fasthttp closes the connection once this returns
}
