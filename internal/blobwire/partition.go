package blobwire

import (
	"net/http"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/partition"
)

// partitionOp describes the request to the partition layer. Azure's partition key for a
// blob is account + container + blob name: here each container's blobs are a key space of
// blob names, cut into range partitions like a table's PartitionKeys. A listing is a query
// over the names it may return; anything else is an account- or container-level request.
func (c *call) partitionOp(op auth.Operation) partition.Op {
	switch {
	case c.container == "":
		return partition.Op{Kind: partition.KindOther}
	case c.blob == "" && op == auth.ListBlobs:
		if prefix := c.q.Get("prefix"); prefix != "" {
			// Every name with the prefix sorts between the prefix and prefix+U+FFFF.
			return partition.Op{Container: c.container, Kind: partition.KindPartitionRange, Key: prefix, HiKey: prefix + "\uffff"}
		}
		return partition.Op{Container: c.container, Kind: partition.KindTableScan, Open: true}
	case c.blob == "":
		return partition.Op{Container: c.container, Kind: partition.KindOther, DeleteContainer: op == auth.DeleteContainer}
	}
	o := partition.Op{Container: c.container, Key: c.blob, Entities: 1}
	switch c.Method {
	case http.MethodGet, http.MethodHead:
		o.Kind = partition.KindPointRead
	case http.MethodDelete:
		o.Kind = partition.KindDelete
	default:
		switch c.q.Get("comp") {
		case "", "blocklist": // Put Blob, Copy Blob, Put Block List: the blob is (re)written
			o.Kind = partition.KindInsert
		default:
			o.Kind = partition.KindUpdate
		}
	}
	return o
}
