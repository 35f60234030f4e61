// Package partition is Tablo's partition layer: it sees every request as Azure's partition
// servers would, keeps the load per account, table, PartitionKey and range partition, moves
// range partitions by load, and (only when asked) answers as Azure does when a target is
// exceeded or a fault is injected.
//
// The wire packages describe each request with an Op (the service, the account, the
// container — table, queue or blob container — and the partition key within it: a
// PartitionKey, the queue's name, the blob's name) and, through package edge, call Admit
// before the service runs and Finish after it. Admit's Ticket says whether to answer
// with an error instead (ServerBusy, OperationTimedOut, an injected fault), to wait, or to drop
// the connection; Finish records the outcome and may ask that an applied operation's reply be
// lost. The rules packages never see this package.
//
// Memory is bounded: per table, at most Options.TrackedKeys PartitionKeys are tracked (a
// Space-Saving heavy-hitters summary: a key hotter than 1/TrackedKeys of the table's traffic
// since it was last reset is always tracked, with an error bound), each costing a fixed
// ~0.3 KiB plus its key; ranges and servers cost a fixed amount each.
package partition
