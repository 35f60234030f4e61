package partition

import "time"

// Service is the storage service a request is for.
type Service uint8

// Services. Azure partitions Table by account/table/PartitionKey, Queue by account/queue (a
// queue is one partition) and Blob by account/container/blob; the wire package fills Op
// accordingly: Container is the table, queue or container, Key the PartitionKey, the queue's
// name or the blob's name.
const (
	Table Service = iota + 1
	Queue
	Blob
	numServices
)

var serviceNames = [...]string{Table: "table", Queue: "queue", Blob: "blob"}

func (s Service) String() string {
	if int(s) < len(serviceNames) && s > 0 {
		return serviceNames[s]
	}
	return "service?"
}

// Kind is what a request does to its partition(s).
type Kind uint8

// Kinds. Reads first, then writes; KindOther is an account- or container-level operation
// (create or delete a table, ACLs, service properties) that touches no partition.
const (
	KindOther Kind = iota
	KindPointRead
	KindRowRange       // a query within one partition
	KindPartition      // a query of one whole partition
	KindPartitionRange // a query across partitions
	KindUnion          // a query of several disjoint key ranges
	KindTableScan      // a query of the whole table
	KindDequeue        // Get Messages: reads messages and hides them (counted as a read)
	KindInsert
	KindUpdate // replace, merge, upsert
	KindDelete
	KindBatch
	numKinds
)

var kindNames = [numKinds]string{
	KindOther: "other", KindPointRead: "point-read", KindRowRange: "row-range",
	KindPartition: "partition", KindPartitionRange: "partition-range", KindUnion: "union",
	KindTableScan: "table-scan", KindDequeue: "dequeue", KindInsert: "insert", KindUpdate: "update",
	KindDelete: "delete", KindBatch: "batch",
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind?"
}

// Write reports whether the kind changes data.
func (k Kind) Write() bool { return k >= KindInsert && k < numKinds }

// query reports whether the kind is a query over a key span (Op.Key..Op.HiKey).
func (k Kind) query() bool { return k >= KindRowRange && k <= KindTableScan }

// Op describes one request as the wire package sees it. Strings may alias request buffers:
// the layer copies what it keeps.
type Op struct {
	Service Service
	Account string
	// Container is the table, queue or blob container; "" for account-level requests.
	Container string
	// Key is the partition key (Table: PartitionKey; Queue: the queue's name; Blob: the blob's
	// name). For a query, the lowest partition key it may touch ("" = from the start).
	Key  string
	Kind Kind
	// HiKey is a query's highest partition key; Open means no upper bound.
	HiKey string
	Open  bool
	// Entities is how many entities the request writes (a batch: its operations; a queue
	// message: its size in KiB units, as Azure's queue target assumes 1 KiB messages).
	Entities int
	// BytesIn is the request body's size.
	BytesIn int
	// DeleteContainer marks a request that deletes its container (Delete Table): once it
	// succeeds, the layer forgets the container.
	DeleteContainer bool
}

// Result is the outcome of an admitted request, for Finish.
type Result struct {
	Status   int
	BytesOut int
	// Entities read (a query: returned); Partitions: distinct partition keys returned.
	Entities, Partitions int
	Now                  time.Time
}
