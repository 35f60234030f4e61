package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// layout says what a workload needs in its table before the measured phase.
type layout int

const (
	layoutEmpty  layout = iota
	layoutSpread        // Preload entities, 100 per partition (spreadKey)
	layoutPage          // Preload entities, all in partition "page"
	layoutQueue         // Preload messages into a fresh queue
	layoutBlobs         // Preload blobs into a fresh container
)

// Limits on one operation's paging, so a misbehaving server cannot keep a worker forever.
const (
	batchSize     = 100 // entities per batch-insert transaction (Azure's maximum)
	maxScanPages  = 10000
	rangeQueryTop = 100
)

// workload is one named benchmark. op performs one measured operation and returns how many
// entities it wrote or read.
type workload struct {
	name    string
	summary string
	layout  layout
	// queue marks a Queue service workload (w.queue is its client, w.client nil).
	queue bool
	// blob marks a Blob service workload (w.blob is its state); size is the bytes one
	// operation moves (0: not a transfer), upload that it writes them.
	blob   bool
	size   int64
	upload bool
	op     func(ctx context.Context, w *worker) (int, error)
}

// worker is one client goroutine's state. Nothing in it is shared.
type worker struct {
	id      int
	rng     *rand.Rand
	client  *aztables.Client
	queue   *azqueue.QueueClient
	blob    blobWorker
	preload int                         // entities preloaded in the table
	key     func(i int) (pk, rk string) // keys of preloaded entity i
	data    string                      // Data property of written entities
	seq     int                         // operations issued by this worker, for unique row keys
	nextPK  *string
	nextRK  *string // page-partition continuation; nil means start over
}

// workloads lists every workload in the order the bench runs them.
func workloads() []workload {
	return []workload{
		{name: "insert-one-pk", summary: "insert single entities into one partition", layout: layoutEmpty, op: opInsertOnePK},
		{name: "insert-many-pk", summary: "insert single entities spread over 1,024 partitions", layout: layoutEmpty, op: opInsertManyPK},
		{name: "get", summary: "point get of a random preloaded entity", layout: layoutSpread, op: opGet},
		{name: "upsert-merge", summary: "upsert (merge) of a random preloaded entity", layout: layoutSpread, op: opUpsertMerge},
		{name: "batch-insert", summary: "insert 100 entities in one transaction", layout: layoutEmpty, op: opBatchInsert},
		{name: "page-partition", summary: "page through one partition, 1,000 per page (one op = one page)", layout: layoutPage, op: opPagePartition},
		{name: "filter-scan", summary: "table scan filtered on a non-key property (1% match; one op = whole query)", layout: layoutSpread, op: opFilterScan},
		{name: "mixed", summary: "60% get, 30% upsert-merge, 10% 100-row range query", layout: layoutSpread, op: opMixed},
	}
}

// allWorkloads is every workload of every service, in the order reports list them.
func allWorkloads() []workload {
	return append(append(workloads(), queueWorkloads()...), blobWorkloads()...)
}

// selectWorkloads resolves a comma-separated list: "all" or empty means every Table
// workload, "queue" every Queue workload, "blob" every Blob workload; names may mix them.
func selectWorkloads(list string) ([]workload, error) {
	all := allWorkloads()
	switch list {
	case "", "all":
		return workloads(), nil
	case "queue":
		return queueWorkloads(), nil
	case "blob":
		return blobWorkloads(), nil
	}
	var out []workload
	seen := make(map[string]bool)
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		found := false
		for _, w := range all {
			if w.name == name {
				out, found = append(out, w), true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown workload %q (have: %s)", name, workloadNames())
		}
		seen[name] = true
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no workload selected")
	}
	return out, nil
}

func workloadNames() string {
	var names []string
	for _, w := range allWorkloads() {
		names = append(names, w.name)
	}
	return strings.Join(names, ", ") + " (all = the Table workloads; queue = the Queue workloads; blob = the Blob workloads)"
}

// uniqueRowKey is unique across workers and operations within one table.
func (w *worker) uniqueRowKey() string {
	w.seq++
	return fmt.Sprintf("w%03d-%09d", w.id, w.seq)
}

func opInsertOnePK(ctx context.Context, w *worker) (int, error) {
	rk := w.uniqueRowKey()
	_, err := w.client.AddEntity(ctx, entityJSON("p0", rk, w.seq, w.data), nil)
	return 1, err
}

func opInsertManyPK(ctx context.Context, w *worker) (int, error) {
	rk := w.uniqueRowKey()
	pk := spreadPartition(w.rng.IntN(1024))
	_, err := w.client.AddEntity(ctx, entityJSON(pk, rk, w.seq, w.data), nil)
	return 1, err
}

func opGet(ctx context.Context, w *worker) (int, error) {
	pk, rk := w.key(w.rng.IntN(w.preload))
	_, err := w.client.GetEntity(ctx, pk, rk, nil)
	return 1, err
}

func opUpsertMerge(ctx context.Context, w *worker) (int, error) {
	i := w.rng.IntN(w.preload)
	pk, rk := w.key(i)
	w.seq++
	_, err := w.client.UpsertEntity(ctx, entityJSON(pk, rk, i, w.data), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	return 1, err
}

func opBatchInsert(ctx context.Context, w *worker) (int, error) {
	w.seq++
	pk := fmt.Sprintf("w%03d-%09d", w.id, w.seq)
	actions := make([]aztables.TransactionAction, batchSize)
	for j := range actions {
		actions[j] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: entityJSON(pk, rowKey(j), j, w.data)}
	}
	_, err := w.client.SubmitTransaction(ctx, actions, nil)
	return batchSize, err
}

func opPagePartition(ctx context.Context, w *worker) (int, error) {
	pager := w.client.NewListEntitiesPager(&aztables.ListEntitiesOptions{
		Filter:           to.Ptr("PartitionKey eq '" + pagePartition + "'"),
		Top:              to.Ptr[int32](maxPageSize),
		NextPartitionKey: w.nextPK,
		NextRowKey:       w.nextRK,
	})
	page, err := pager.NextPage(ctx)
	if err != nil {
		w.nextPK, w.nextRK = nil, nil
		return 0, err
	}
	w.nextPK, w.nextRK = page.NextPartitionKey, page.NextRowKey
	if !pager.More() {
		w.nextPK, w.nextRK = nil, nil
	}
	return len(page.Entities), nil
}

func opFilterScan(ctx context.Context, w *worker) (int, error) {
	pager := w.client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("Category eq '" + filterCategory + "'")})
	n := 0
	for pages := 0; pager.More(); pages++ {
		if pages >= maxScanPages {
			return n, fmt.Errorf("filter scan: more than %d pages", maxScanPages)
		}
		page, err := pager.NextPage(ctx)
		if err != nil {
			return n, err
		}
		n += len(page.Entities)
	}
	return n, nil
}

func opRangeQuery(ctx context.Context, w *worker) (int, error) {
	pk, rk := w.key(w.rng.IntN(w.preload))
	filter := "PartitionKey eq " + quoteLiteral(pk) + " and RowKey ge " + quoteLiteral(rk)
	pager := w.client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Top: to.Ptr[int32](rangeQueryTop)})
	page, err := pager.NextPage(ctx)
	return len(page.Entities), err
}

func opMixed(ctx context.Context, w *worker) (int, error) {
	switch r := w.rng.IntN(100); {
	case r < 60:
		return opGet(ctx, w)
	case r < 90:
		return opUpsertMerge(ctx, w)
	default:
		return opRangeQuery(ctx, w)
	}
}
