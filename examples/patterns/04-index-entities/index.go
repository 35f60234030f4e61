package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Employee is keyed by department and employee id.
type Employee struct {
	PartitionKey string // department
	RowKey       string // employee id
	FirstName    string
	LastName     string
}

// LastNameIndex lives in the same partition as the employees, under RowKey "lastname_<name>",
// and lists the ids of the department's employees with that last name.
type LastNameIndex struct {
	PartitionKey string
	RowKey       string
	EmployeeIDs  string // space-separated ids
}

// Result is what the run found, for the test.
type Result struct {
	Jones   []Employee // found through the index entity
	Scanned []Employee // found by filtering the partition on LastName, for comparison
	Retries int        // index updates that lost an optimistic-concurrency race and retried
}

const table = "EmployeesIndexEntities"

var lastNames = []string{"Jones", "Smith", "Brown", "Wilson", "Taylor"}

// Run creates the table, adds employees (the Jones family concurrently, so that index updates
// race), finds every Jones through the index entity, and deletes the table again.
func Run(ctx context.Context, svc *aztables.ServiceClient, out io.Writer) (Result, error) {
	var res Result
	if _, err := svc.CreateTable(ctx, table, nil); err != nil {
		return res, fmt.Errorf("create table: %w", err)
	}
	defer svc.DeleteTable(context.WithoutCancel(ctx), table, nil)
	t := svc.NewClient(table)

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	add := func(e Employee) {
		retries, err := addEmployee(ctx, t, e)
		mu.Lock()
		defer mu.Unlock()
		res.Retries += retries
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	var jones []Employee
	for i := range 100 {
		e := Employee{PartitionKey: "Sales", RowKey: fmt.Sprintf("%06d", 100+i), FirstName: fmt.Sprintf("F%d", i), LastName: lastNames[i%len(lastNames)]}
		if e.LastName == "Jones" {
			jones = append(jones, e)
		} else {
			add(e)
		}
	}
	// 20 writers race for the one "lastname_Jones" index entity.
	for _, e := range jones {
		wg.Go(func() { add(e) })
	}
	wg.Wait()
	if firstErr != nil {
		return res, firstErr
	}
	fmt.Fprintf(out, "added 100 employees to Sales with their index entities; %d index updates lost a race and retried\n", res.Retries)

	var err error
	if res.Jones, err = findByLastName(ctx, out, t, "Sales", "Jones"); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "  %d employees named Jones\n", len(res.Jones))
	res.Scanned, err = query[Employee](ctx, out, t, "PartitionKey eq 'Sales' and LastName eq 'Jones'")
	return res, err
}

// addEmployee inserts e and adds its id to its last name's index entity in one entity group
// transaction. The index is replaced only if its ETag is unchanged since it was read; when
// another writer got there first, it reads the index again and retries.
func addEmployee(ctx context.Context, t *aztables.Client, e Employee) (retries int, err error) {
	for {
		idx := LastNameIndex{PartitionKey: e.PartitionKey, RowKey: "lastname_" + e.LastName}
		indexAction := aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd}
		got, err := t.GetEntity(ctx, idx.PartitionKey, idx.RowKey, nil)
		switch {
		case err == nil:
			if err := json.Unmarshal(got.Value, &idx); err != nil {
				return retries, err
			}
			indexAction = aztables.TransactionAction{ActionType: aztables.TransactionTypeUpdateReplace, IfMatch: &got.ETag}
		case !isStatus(err, http.StatusNotFound):
			return retries, fmt.Errorf("read index: %w", err)
		}
		idx.EmployeeIDs = strings.TrimSpace(idx.EmployeeIDs + " " + e.RowKey)
		indexAction.Entity, _ = json.Marshal(idx)
		employee, _ := json.Marshal(e)
		_, err = t.SubmitTransaction(ctx, []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: employee},
			indexAction,
		}, nil)
		if !lostRace(err) {
			return retries, err
		}
		retries++
	}
}

// lostRace reports a transaction refused because the index entity changed since it was read
// (or was created by someone else first). A failed transaction is a 202 response whose body
// names the failing operation's error code.
func lostRace(err error) bool {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, `"UpdateConditionNotSatisfied"`) || strings.Contains(msg, `"EntityAlreadyExists"`)
}

func isStatus(err error, status int) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status
}

// findByLastName reads the index entity (one point query), then fetches the employees it
// lists (one query for all of them).
func findByLastName(ctx context.Context, out io.Writer, t *aztables.Client, dept, last string) ([]Employee, error) {
	idx, err := query[LastNameIndex](ctx, out, t, fmt.Sprintf("PartitionKey eq '%s' and RowKey eq 'lastname_%s'", dept, last))
	if err != nil || len(idx) == 0 {
		return nil, err
	}
	ids := strings.Fields(idx[0].EmployeeIDs)
	slices.Sort(ids)
	conds := make([]string, len(ids))
	for i, id := range ids {
		conds[i] = fmt.Sprintf("RowKey eq '%s'", id)
	}
	return query[Employee](ctx, out, t, fmt.Sprintf("PartitionKey eq '%s' and (%s)", dept, strings.Join(conds, " or ")))
}

// query returns every entity matching filter, in key order.
func query[T any](ctx context.Context, out io.Writer, t *aztables.Client, filter string) ([]T, error) {
	fmt.Fprintf(out, "query $filter=%s\n", shorten(filter))
	var es []T
	pager := t.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", filter, err)
		}
		for _, b := range page.Entities {
			var e T
			if err := json.Unmarshal(b, &e); err != nil {
				return nil, err
			}
			es = append(es, e)
		}
	}
	return es, nil
}

func shorten(s string) string {
	if len(s) > 120 {
		return s[:100] + " … " + s[len(s)-16:]
	}
	return s
}
