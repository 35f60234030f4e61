package queuewire

import (
	"github.com/tablo/tablo/internal/partition"
)

// partitionOp describes the request to the partition layer. In Azure a queue is one
// partition, its name the partition key; service-level requests touch the account only.
// Put Message and Update Message are admitted by their handlers, which know the message's
// size (messageUnits).
func (c *call) partitionOp(op operation) partition.Op {
	if c.queue == "" {
		return partition.Op{Kind: partition.KindOther}
	}
	o := partition.Op{Container: c.queue, Key: c.queue}
	switch op {
	case opGetMessages:
		o.Kind = partition.KindDequeue
	case opPeekMessages:
		o.Kind = partition.KindPointRead
	case opDeleteMessage, opClearMessages:
		o.Kind = partition.KindDelete
	case opPutMessage:
		o.Kind = partition.KindInsert
	case opUpdateMessage:
		o.Kind = partition.KindUpdate
	default: // create, delete, metadata, ACL: the queue, not its messages
		o = partition.Op{Container: c.queue, Kind: partition.KindOther, DeleteContainer: op == opDeleteQueue}
	}
	return o
}

// messageUnits is a message's weight against the queue's target, which Azure states for
// 1 KiB messages: one unit per KiB begun.
func messageUnits(text string) int { return max(1, (len(text)+1023)/1024) }
