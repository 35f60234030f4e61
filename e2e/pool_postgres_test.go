package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// TestPostgresPoolOfOne runs each service's main operations, several clients at once, on the
// PostgreSQL engine with a pool of one connection. The engine's rule is that no pooled
// connection is held while another is acquired: a request breaking it waits for a connection
// only it can free, which a full pool turns into every request timing out. With one
// connection any such path deadlocks on its own (and the engine's nesting check, on in every
// test server on PostgreSQL, reports it at once with its stack), so every operation here must
// simply succeed. Each runs under a deadline, so a regression fails instead of hanging.
func TestPostgresPoolOfOne(t *testing.T) {
	if onPostgres() {
		t.Skip("runs on its own database in the default pass")
	}
	url := pgtest.URL(t) // skips without a test database
	cfg := config.Config{Host: "127.0.0.1", DataDir: t.TempDir(), Accounts: []auth.Account{auth.DevAccount()},
		PostgresURL: url, PostgresPoolSize: 1, PostgresStatementTimeout: time.Second}
	ts := startServerConfig(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const clients = 3
	var wg sync.WaitGroup
	errs := make(chan error, 3*clients)
	run := func(name string, i int, f func(context.Context, int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx, i); err != nil {
				errs <- fmt.Errorf("%s %d: %w", name, i, err)
			}
		}()
	}
	for i := range clients {
		run("table", i, func(ctx context.Context, i int) error { return poolTableWork(ctx, ts, i) })
		run("queue", i, func(ctx context.Context, i int) error { return poolQueueWork(ctx, ts, i) })
		run("blob", i, func(ctx context.Context, i int) error { return poolBlobWork(ctx, t, ts, i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// poolTableWork: create, every entity write, point get, query with a filter, batch, list,
// delete (the dropper purges in the background).
func poolTableWork(ctx context.Context, ts *testServer, i int) error {
	svc, err := aztables.NewServiceClientFromConnectionString(ts.connString(), clientOptions())
	if err != nil {
		return err
	}
	name := fmt.Sprintf("pool%d", i)
	if _, err := svc.CreateTable(ctx, name, nil); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	tc := svc.NewClient(name)
	entity := func(rk string, n int) []byte {
		return fmt.Appendf(nil, `{"PartitionKey":"p","RowKey":%q,"N":%d}`, rk, n)
	}
	for r := range 5 {
		if _, err := tc.AddEntity(ctx, entity(fmt.Sprint(r), r), nil); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
	}
	if _, err := tc.UpsertEntity(ctx, entity("0", 10), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if _, err := tc.UpdateEntity(ctx, entity("1", 11), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	if _, err := tc.GetEntity(ctx, "p", "2", nil); err != nil {
		return fmt.Errorf("get: %w", err)
	}
	pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("N ge 3"), Top: to.Ptr(int32(1))})
	got := 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("query: %w", err)
		}
		got += len(page.Entities)
	}
	if got != 4 { // 0 (merged to 10), 1 (replaced by 11), 3, 4
		return fmt.Errorf("query found %d entities, want 4", got)
	}
	batch := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: entity("b1", 1)},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: entity("2", 2)},
		{ActionType: aztables.TransactionTypeDelete, Entity: entity("3", 3)},
	}
	if _, err := tc.SubmitTransaction(ctx, batch, nil); err != nil {
		return fmt.Errorf("batch: %w", err)
	}
	if _, err := tc.DeleteEntity(ctx, "p", "4", nil); err != nil {
		return fmt.Errorf("delete entity: %w", err)
	}
	tables := svc.NewListTablesPager(nil)
	for tables.More() {
		if _, err := tables.NextPage(ctx); err != nil {
			return fmt.Errorf("list tables: %w", err)
		}
	}
	if _, err := svc.DeleteTable(ctx, name, nil); err != nil {
		return fmt.Errorf("delete table: %w", err)
	}
	return nil
}

// poolQueueWork: create, put, peek, get, update, delete, count, clear, list, delete queue.
func poolQueueWork(ctx context.Context, ts *testServer, i int) error {
	svc, err := azqueue.NewServiceClientFromConnectionString(ts.queueConnString(), queueClientOptions())
	if err != nil {
		return err
	}
	qc := svc.NewQueueClient(fmt.Sprintf("pool%d", i))
	if _, err := qc.Create(ctx, nil); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	for m := range 6 {
		if _, err := qc.EnqueueMessage(ctx, fmt.Sprint("m", m), nil); err != nil {
			return fmt.Errorf("put: %w", err)
		}
	}
	if _, err := qc.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(3))}); err != nil {
		return fmt.Errorf("peek: %w", err)
	}
	got, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(4))})
	if err != nil {
		return fmt.Errorf("get: %w", err)
	}
	if len(got.Messages) != 4 {
		return fmt.Errorf("get returned %d messages, want 4", len(got.Messages))
	}
	m0, m1 := got.Messages[0], got.Messages[1]
	if _, err := qc.UpdateMessage(ctx, *m0.MessageID, *m0.PopReceipt, "changed", nil); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	if _, err := qc.DeleteMessage(ctx, *m1.MessageID, *m1.PopReceipt, nil); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	props, err := qc.GetProperties(ctx, nil)
	if err != nil {
		return fmt.Errorf("properties: %w", err)
	}
	if props.ApproximateMessagesCount == nil || *props.ApproximateMessagesCount != 5 {
		return fmt.Errorf("count %v, want 5", props.ApproximateMessagesCount)
	}
	if _, err := qc.ClearMessages(ctx, nil); err != nil {
		return fmt.Errorf("clear: %w", err)
	}
	queues := svc.NewListQueuesPager(nil)
	for queues.More() {
		if _, err := queues.NextPage(ctx); err != nil {
			return fmt.Errorf("list: %w", err)
		}
	}
	if _, err := qc.Delete(ctx, nil); err != nil {
		return fmt.Errorf("delete queue: %w", err)
	}
	return nil
}

// poolBlobWork: container, small and multi-chunk blobs, blocks, snapshot, copy, append,
// page blob, listing, ranged reads, deletions (the sweep runs in the background).
func poolBlobWork(ctx context.Context, t *testing.T, ts *testServer, i int) error {
	c := blobClient(t, ts)
	name := fmt.Sprintf("pool%d", i)
	cc := c.ServiceClient().NewContainerClient(name)
	if _, err := cc.Create(ctx, nil); err != nil {
		return fmt.Errorf("create container: %w", err)
	}
	small := []byte("small blob")
	big := randomBytes(5<<20+123, uint64(i)) // several chunks on the PostgreSQL engine
	if _, err := c.UploadBuffer(ctx, name, "small", small, nil); err != nil {
		return fmt.Errorf("put small: %w", err)
	}
	if _, err := c.UploadBuffer(ctx, name, "big", big, &azblob.UploadBufferOptions{BlockSize: 4 << 20, Concurrency: 2}); err != nil {
		return fmt.Errorf("put big in blocks: %w", err)
	}
	bb := cc.NewBlockBlobClient("big")
	dl, err := bb.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 1 << 20, Count: 3 << 20}})
	if err != nil {
		return fmt.Errorf("get range: %w", err)
	}
	part, err := io.ReadAll(dl.Body)
	dl.Body.Close()
	if err != nil || !bytes.Equal(part, big[1<<20:4<<20]) {
		return fmt.Errorf("range read differs (%v)", err)
	}
	if _, err := bb.GetBlockList(ctx, blockblob.BlockListTypeAll, nil); err != nil {
		return fmt.Errorf("block list: %w", err)
	}
	if _, err := bb.StageBlock(ctx, "AAAA", streamOf([]byte("staged")), nil); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	sc := cc.NewBlockBlobClient("small")
	snap, err := sc.CreateSnapshot(ctx, nil)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if _, err := cc.NewBlobClient("copy").StartCopyFromURL(ctx, sc.URL(), nil); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	ab := cc.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		return fmt.Errorf("append create: %w", err)
	}
	if _, err := ab.AppendBlock(ctx, streamOf([]byte("line\n")), nil); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	pb := cc.NewPageBlobClient("pages")
	if _, err := pb.Create(ctx, 4096, nil); err != nil {
		return fmt.Errorf("page create: %w", err)
	}
	if _, err := pb.UploadPages(ctx, streamOf(bytes.Repeat([]byte{7}, 1024)), blob.HTTPRange{Offset: 512, Count: 1024}, nil); err != nil {
		return fmt.Errorf("put pages: %w", err)
	}
	ranges := pb.NewGetPageRangesPager(nil)
	for ranges.More() {
		if _, err := ranges.NextPage(ctx); err != nil {
			return fmt.Errorf("page ranges: %w", err)
		}
	}
	include := container.ListBlobsInclude{Snapshots: true, UncommittedBlobs: true, Metadata: true}
	blobs := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: include, MaxResults: to.Ptr(int32(2))})
	listed := 0
	for blobs.More() {
		page, err := blobs.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		listed += len(page.Segment.BlobItems)
	}
	if listed != 6 { // small, its snapshot, big, copy, log, pages
		return fmt.Errorf("listed %d blobs, want 6", listed)
	}
	ssc, err := sc.WithSnapshot(*snap.Snapshot)
	if err != nil {
		return err
	}
	if _, err := ssc.Delete(ctx, nil); err != nil {
		return fmt.Errorf("delete snapshot: %w", err)
	}
	if _, err := bb.Delete(ctx, nil); err != nil {
		return fmt.Errorf("delete blob: %w", err)
	}
	if _, err := cc.Delete(ctx, nil); err != nil {
		return fmt.Errorf("delete container: %w", err)
	}
	return nil
}
