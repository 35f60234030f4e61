package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// Archiver moves employees from the Current table to the Archive table. The two tables
// cannot share an entity group transaction, so a queue message carries the request and a
// worker completes it; every step can be repeated, so a worker that dies midway leaves a
// message that a later worker finishes.
type Archiver struct {
	Queue      *azqueue.QueueClient
	Poison     *azqueue.QueueClient // messages received MaxDequeue times go here
	Current    *aztables.Client
	Archive    *aztables.Client
	Visibility int32 // seconds a received message stays invisible to other workers
	MaxDequeue int64
	// Crash, when set, is asked after each step whether the worker dies there (a test's
	// stand-in for a killed process).
	Crash func(step string) bool
}

// ErrCrashed is what a worker returns when Crash killed it.
var ErrCrashed = errors.New("worker died")

// Request asks for an employee to be archived (step 1).
func (a *Archiver) Request(ctx context.Context, dept, id string) error {
	_, err := a.Queue.EnqueueMessage(ctx, dept+"/"+id, nil)
	return err
}

// Work handles one message, if one is visible; ok is false when the queue had none.
func (a *Archiver) Work(ctx context.Context) (ok bool, err error) {
	// Step 2: receive; the message stays in the queue, invisible for Visibility seconds.
	resp, err := a.Queue.DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: &a.Visibility})
	if err != nil || len(resp.Messages) == 0 {
		return false, err
	}
	msg := resp.Messages[0]
	if *msg.DequeueCount > a.MaxDequeue {
		// Poison: it failed too often; park it for a person to look at.
		if _, err := a.Poison.EnqueueMessage(ctx, *msg.MessageText, nil); err != nil {
			return true, err
		}
		_, err := a.Queue.DeleteMessage(ctx, *msg.MessageID, *msg.PopReceipt, nil)
		return true, err
	}
	dept, id, _ := strings.Cut(*msg.MessageText, "/")

	// Step 3: read the current entity. Absent means an earlier worker got past step 5.
	got, err := a.Current.GetEntity(ctx, dept, id, nil)
	switch {
	case err == nil:
		// Step 4: insert or replace, so a repeat writes the same entity again.
		if _, err := a.Archive.UpsertEntity(ctx, got.Value, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
			return true, err
		}
		if a.crash("archived") {
			return true, ErrCrashed
		}
		// Step 5: delete if it exists (a repeat finds it gone).
		if _, err := a.Current.DeleteEntity(ctx, dept, id, nil); err != nil && !isStatus(err, http.StatusNotFound) {
			return true, err
		}
		if a.crash("deleted") {
			return true, ErrCrashed
		}
	case !isStatus(err, http.StatusNotFound):
		return true, err
	}
	// Step 6: the request is done.
	_, err = a.Queue.DeleteMessage(ctx, *msg.MessageID, *msg.PopReceipt, nil)
	return true, err
}

func (a *Archiver) crash(step string) bool { return a.Crash != nil && a.Crash(step) }

func isStatus(err error, status int) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status
}

// Result is the final state, for the test.
type Result struct {
	Current, Archive []string // RowKeys left in each table
	Crashes          int
	Left, Poisoned   int // messages left in the queue and in the poison queue
}

const (
	currentTable = "EmployeesCurrent"
	archiveTable = "EmployeesArchive"
	queueName    = "archive-requests"
)

// Run creates the tables and queues, archives three of five employees with a first worker
// that dies twice midway, lets a second worker finish after the messages reappear, and
// deletes everything again.
func Run(ctx context.Context, tables *aztables.ServiceClient, queues *azqueue.ServiceClient, out io.Writer) (Result, error) {
	var res Result
	for _, name := range []string{currentTable, archiveTable} {
		if _, err := tables.CreateTable(ctx, name, nil); err != nil {
			return res, fmt.Errorf("create table: %w", err)
		}
		defer tables.DeleteTable(context.WithoutCancel(ctx), name, nil)
	}
	for _, name := range []string{queueName, queueName + "-poison"} {
		if _, err := queues.CreateQueue(ctx, name, nil); err != nil {
			return res, fmt.Errorf("create queue: %w", err)
		}
		defer queues.DeleteQueue(context.WithoutCancel(ctx), name, nil)
	}
	a := &Archiver{
		Queue: queues.NewQueueClient(queueName), Poison: queues.NewQueueClient(queueName + "-poison"),
		Current: tables.NewClient(currentTable), Archive: tables.NewClient(archiveTable),
		Visibility: 1, MaxDequeue: 5,
	}
	for i := range 5 {
		b, _ := json.Marshal(map[string]any{"PartitionKey": "Sales", "RowKey": fmt.Sprintf("%06d", 454+i), "Name": fmt.Sprintf("Employee %d", 454+i)})
		if _, err := a.Current.AddEntity(ctx, b, nil); err != nil {
			return res, fmt.Errorf("add employee: %w", err)
		}
	}
	for _, id := range []string{"000455", "000456", "000457"} {
		if err := a.Request(ctx, "Sales", id); err != nil {
			return res, fmt.Errorf("request: %w", err)
		}
	}
	fmt.Fprintln(out, "5 employees in EmployeesCurrent; archiving 000455, 000456, 000457 requested on queue archive-requests")

	// The first worker dies after step 4 of its first message and after step 5 of its second.
	dies := []string{"archived", "deleted"}
	a.Crash = func(step string) bool {
		if len(dies) > 0 && dies[0] == step {
			dies = dies[1:]
			res.Crashes++
			fmt.Fprintf(out, "worker 1 dies after step %s\n", map[string]string{"archived": "4 (copied to Archive)", "deleted": "5 (deleted from Current)"}[step])
			return true
		}
		return false
	}
	for {
		ok, err := a.Work(ctx)
		if err != nil && !errors.Is(err, ErrCrashed) {
			return res, err
		}
		if !ok {
			break
		}
	}
	fmt.Fprintln(out, "read both tables")
	cur, _ := keys(ctx, a.Current)
	arc, _ := keys(ctx, a.Archive)
	fmt.Fprintf(out, "after worker 1: EmployeesCurrent %v, EmployeesArchive %v\n", cur, arc)

	// A second worker finds the unfinished messages once their invisibility ends.
	a.Crash = nil
	time.Sleep(time.Duration(a.Visibility)*time.Second + 100*time.Millisecond)
	for {
		ok, err := a.Work(ctx)
		if err != nil {
			return res, err
		}
		if !ok {
			break
		}
	}
	fmt.Fprintln(out, "read both tables")
	var err error
	if res.Current, err = keys(ctx, a.Current); err != nil {
		return res, err
	}
	if res.Archive, err = keys(ctx, a.Archive); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "after worker 2: EmployeesCurrent %v, EmployeesArchive %v\n", res.Current, res.Archive)
	for q, n := range map[*azqueue.QueueClient]*int{a.Queue: &res.Left, a.Poison: &res.Poisoned} {
		props, err := q.GetProperties(ctx, nil)
		if err != nil {
			return res, err
		}
		*n = int(*props.ApproximateMessagesCount)
	}
	fmt.Fprintf(out, "messages left: %d, poisoned: %d\n", res.Left, res.Poisoned)
	return res, nil
}

// keys lists a table's RowKeys with one query.
func keys(ctx context.Context, t *aztables.Client) ([]string, error) {
	sel := "RowKey"
	var rks []string
	pager := t.NewListEntitiesPager(&aztables.ListEntitiesOptions{Select: &sel})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, b := range page.Entities {
			var e struct{ RowKey string }
			if err := json.Unmarshal(b, &e); err != nil {
				return nil, err
			}
			rks = append(rks, e.RowKey)
		}
	}
	return rks, nil
}
