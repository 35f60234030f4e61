package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// Employee is stored under PartitionKey "empid_<department>" (RowKey the id) and copied under
// "email_<department>" (RowKey the address). The copies are in different partitions, so no
// transaction covers both: the primary is written first, and a queue message asks a worker to
// bring the index copy up to date.
type Employee struct {
	PartitionKey string
	RowKey       string
	EmployeeID   string
	Name         string
	Email        string
}

// IndexJob asks for the index copy of an employee to be refreshed; OldEmail, when set, is a
// copy to delete.
type IndexJob struct {
	Department, EmployeeID, OldEmail string
}

// Indexer writes primaries and keeps their index copies eventually consistent.
type Indexer struct {
	Table *aztables.Client
	Queue *azqueue.QueueClient
}

// Put writes the primary entity and asks for its index copy (a changed address replaces the
// old copy).
func (x *Indexer) Put(ctx context.Context, dept string, e Employee, oldEmail string) error {
	e.PartitionKey, e.RowKey = "empid_"+dept, e.EmployeeID
	b, _ := json.Marshal(e)
	if _, err := x.Table.UpsertEntity(ctx, b, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		return fmt.Errorf("write primary: %w", err)
	}
	job, _ := json.Marshal(IndexJob{Department: dept, EmployeeID: e.EmployeeID, OldEmail: oldEmail})
	_, err := x.Queue.EnqueueMessage(ctx, string(job), nil)
	return err
}

// Work applies queued index jobs until the queue is empty. Each step can be repeated: the
// copy is written from the primary as it is now, with insert-or-replace, and deletes accept
// a missing entity.
func (x *Indexer) Work(ctx context.Context) (int, error) {
	done := 0
	for {
		resp, err := x.Queue.DequeueMessage(ctx, nil)
		if err != nil || len(resp.Messages) == 0 {
			return done, err
		}
		msg := resp.Messages[0]
		var job IndexJob
		if err := json.Unmarshal([]byte(*msg.MessageText), &job); err != nil {
			return done, err
		}
		got, err := x.Table.GetEntity(ctx, "empid_"+job.Department, job.EmployeeID, nil)
		if err != nil {
			return done, err
		}
		var e Employee
		if err := json.Unmarshal(got.Value, &e); err != nil {
			return done, err
		}
		e.PartitionKey, e.RowKey = "email_"+job.Department, e.Email
		b, _ := json.Marshal(e)
		if _, err := x.Table.UpsertEntity(ctx, b, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
			return done, err
		}
		if job.OldEmail != "" && job.OldEmail != e.Email {
			if _, err := x.Table.DeleteEntity(ctx, "email_"+job.Department, job.OldEmail, nil); err != nil && !isNotFound(err) {
				return done, err
			}
		}
		if _, err := x.Queue.DeleteMessage(ctx, *msg.MessageID, *msg.PopReceipt, nil); err != nil {
			return done, err
		}
		done++
	}
}

func isNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}

// Result is what the run found, for the test.
type Result struct {
	BeforeWork     int      // index copies found for the new employee before the worker ran
	ByID, ByEmail  Employee // employee 000223 through each index
	AfterMove      Employee // found by the new address
	OldAddressHits int      // copies left under the old address
	EmailsA        []Employee
}

const (
	table     = "EmployeesInterIndex"
	queueName = "employee-index"
)

// Run creates the table and queue, writes employees, lets the worker index them, looks one up
// both ways, changes an address, and deletes everything again.
func Run(ctx context.Context, tables *aztables.ServiceClient, queues *azqueue.ServiceClient, out io.Writer) (Result, error) {
	var res Result
	if _, err := tables.CreateTable(ctx, table, nil); err != nil {
		return res, fmt.Errorf("create table: %w", err)
	}
	defer tables.DeleteTable(context.WithoutCancel(ctx), table, nil)
	if _, err := queues.CreateQueue(ctx, queueName, nil); err != nil {
		return res, fmt.Errorf("create queue: %w", err)
	}
	defer queues.DeleteQueue(context.WithoutCancel(ctx), queueName, nil)
	x := &Indexer{Table: tables.NewClient(table), Queue: queues.NewQueueClient(queueName)}

	for i := 200; i < 250; i++ {
		e := Employee{EmployeeID: fmt.Sprintf("%06d", i), Name: fmt.Sprintf("Employee %d", i), Email: fmt.Sprintf("%c%d@contoso.com", 'a'+i%26, i)}
		if i == 223 {
			e.Name, e.Email = "John Jones", "jonesj@contoso.com"
		}
		if err := x.Put(ctx, "Sales", e, ""); err != nil {
			return res, err
		}
	}
	fmt.Fprintln(out, "wrote 50 employees under empid_Sales and queued their index jobs")
	before, err := query(ctx, out, x.Table, "PartitionKey eq 'email_Sales' and RowKey eq 'jonesj@contoso.com'")
	if err != nil {
		return res, err
	}
	res.BeforeWork = len(before)
	fmt.Fprintf(out, "  %d entities: the index is not there yet (eventually consistent)\n", res.BeforeWork)

	start := time.Now()
	n, err := x.Work(ctx)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(out, "worker applied %d index jobs in %s\n", n, time.Since(start).Round(time.Millisecond))
	if res.ByID, err = one(ctx, out, x.Table, "PartitionKey eq 'empid_Sales' and RowKey eq '000223'"); err != nil {
		return res, err
	}
	if res.ByEmail, err = one(ctx, out, x.Table, "PartitionKey eq 'email_Sales' and RowKey eq 'jonesj@contoso.com'"); err != nil {
		return res, err
	}
	if res.EmailsA, err = query(ctx, out, x.Table, "PartitionKey eq 'email_Sales' and RowKey ge 'a' and RowKey lt 'b'"); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "  %d addresses starting with a\n", len(res.EmailsA))

	moved := res.ByID
	moved.Email = "john.jones@contoso.com"
	if err := x.Put(ctx, "Sales", moved, "jonesj@contoso.com"); err != nil {
		return res, err
	}
	if _, err := x.Work(ctx); err != nil {
		return res, err
	}
	fmt.Fprintln(out, "changed 000223's address; the worker moved its index copy")
	if res.AfterMove, err = one(ctx, out, x.Table, "PartitionKey eq 'email_Sales' and RowKey eq 'john.jones@contoso.com'"); err != nil {
		return res, err
	}
	old, err := query(ctx, out, x.Table, "PartitionKey eq 'email_Sales' and RowKey eq 'jonesj@contoso.com'")
	res.OldAddressHits = len(old)
	return res, err
}

func one(ctx context.Context, out io.Writer, t *aztables.Client, filter string) (Employee, error) {
	es, err := query(ctx, out, t, filter)
	if err != nil {
		return Employee{}, err
	}
	if len(es) != 1 {
		return Employee{}, fmt.Errorf("%s: %d entities, want 1", filter, len(es))
	}
	fmt.Fprintf(out, "  found %s %s <%s>\n", es[0].EmployeeID, es[0].Name, es[0].Email)
	return es[0], nil
}

func query(ctx context.Context, out io.Writer, t *aztables.Client, filter string) ([]Employee, error) {
	fmt.Fprintf(out, "query $filter=%s\n", filter)
	var es []Employee
	pager := t.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", filter, err)
		}
		for _, b := range page.Entities {
			var e Employee
			if err := json.Unmarshal(b, &e); err != nil {
				return nil, err
			}
			es = append(es, e)
		}
	}
	return es, nil
}
