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
)

// LoginAttempt is keyed by user and time, so inserts spread over the users' partitions.
type LoginAttempt struct {
	PartitionKey string // user
	RowKey       string // time of the attempt, RFC 3339
	Succeeded    bool
}

// Result is what the run found, for the test.
type Result struct {
	PerDay          int      // attempts stored per day
	TablesBefore    []string // the daily tables before the purge
	TablesAfter     []string // and after
	DeleteRequests  int      // requests to purge one day with a table per day: 1
	OldDayAfter     error    // a query of the purged day's table, after the purge
	Remaining       []int    // entities in the two remaining daily tables
	SingleTableReqs int      // requests to purge the same day from one shared table
}

// dayTable names the table holding one day's attempts; a table name is alphanumeric.
func dayTable(day time.Time) string { return "LoginAttempts" + day.Format("20060102") }

const (
	users      = 10
	perUserDay = 100
	shared     = "LoginAttemptsAllDays"
)

// Run stores three days of login attempts in a table per day (and, for comparison, in one
// shared table), purges the oldest day both ways, and deletes its tables again.
func Run(ctx context.Context, svc *aztables.ServiceClient, out io.Writer) (Result, error) {
	res := Result{PerDay: users * perUserDay}
	first := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	days := []time.Time{first, first.AddDate(0, 0, 1), first.AddDate(0, 0, 2)}
	if _, err := svc.CreateTable(ctx, shared, nil); err != nil {
		return res, fmt.Errorf("create table: %w", err)
	}
	defer svc.DeleteTable(context.WithoutCancel(ctx), shared, nil)
	for _, day := range days {
		if _, err := svc.CreateTable(ctx, dayTable(day), nil); err != nil {
			return res, fmt.Errorf("create table: %w", err)
		}
		defer svc.DeleteTable(context.WithoutCancel(ctx), dayTable(day), nil)
		for _, name := range []string{dayTable(day), shared} {
			if err := load(ctx, svc.NewClient(name), day); err != nil {
				return res, err
			}
		}
	}
	fmt.Fprintf(out, "stored %d login attempts per day for 3 days: a table per day, and all in %s\n", res.PerDay, shared)

	var err error
	if res.TablesBefore, err = listTables(ctx, svc); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "tables: %v\n", res.TablesBefore)

	// A table per day: purging the oldest day is one request, whatever it holds.
	fmt.Fprintf(out, "delete table %s\n", dayTable(days[0]))
	if _, err := svc.DeleteTable(ctx, dayTable(days[0]), nil); err != nil {
		return res, fmt.Errorf("purge: %w", err)
	}
	res.DeleteRequests = 1
	if res.TablesAfter, err = listTables(ctx, svc); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "tables: %v\n", res.TablesAfter)
	_, res.OldDayAfter = svc.NewClient(dayTable(days[0])).NewListEntitiesPager(nil).NextPage(ctx)
	if isNotFound(res.OldDayAfter) {
		fmt.Fprintf(out, "  %s: not found\n", dayTable(days[0]))
	}

	for _, day := range days[1:] {
		fmt.Fprintf(out, "count %s\n", dayTable(day))
		n, err := count(ctx, svc.NewClient(dayTable(day)))
		if err != nil {
			return res, err
		}
		fmt.Fprintf(out, "  %d entities\n", n)
		res.Remaining = append(res.Remaining, n)
	}

	// One shared table: find the day's entities (a table scan, since the date is not the
	// PartitionKey), then delete them in transactions of at most 100, one partition each.
	fmt.Fprintf(out, "purge %s from %s\n", days[0].Format(time.DateOnly), shared)
	res.SingleTableReqs, err = purgeShared(ctx, out, svc.NewClient(shared), days[0])
	fmt.Fprintf(out, "  %d requests\n", res.SingleTableReqs)
	return res, err
}

// load writes one day of attempts, a transaction per user.
func load(ctx context.Context, t *aztables.Client, day time.Time) error {
	for u := range users {
		batch := make([]aztables.TransactionAction, 0, perUserDay)
		for i := range perUserDay {
			at := day.Add(time.Duration(i) * 14 * time.Minute)
			b, _ := json.Marshal(LoginAttempt{PartitionKey: fmt.Sprintf("user%03d", u), RowKey: at.Format(time.RFC3339), Succeeded: i%7 != 0})
			batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: b})
		}
		if _, err := t.SubmitTransaction(ctx, batch, nil); err != nil {
			return fmt.Errorf("load: %w", err)
		}
	}
	return nil
}

// purgeShared deletes one day's attempts from the shared table and counts its requests.
func purgeShared(ctx context.Context, out io.Writer, t *aztables.Client, day time.Time) (requests int, err error) {
	filter := fmt.Sprintf("RowKey ge '%s' and RowKey lt '%s'", day.Format(time.RFC3339), day.AddDate(0, 0, 1).Format(time.RFC3339))
	sel := "PartitionKey,RowKey"
	fmt.Fprintf(out, "query $filter=%s&$select=%s\n", filter, sel)
	byUser := map[string][]aztables.TransactionAction{}
	var order []string
	pager := t.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Select: &sel})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		requests++
		if err != nil {
			return requests, fmt.Errorf("find: %w", err)
		}
		for _, b := range page.Entities {
			var k LoginAttempt
			if err := json.Unmarshal(b, &k); err != nil {
				return requests, err
			}
			if byUser[k.PartitionKey] == nil {
				order = append(order, k.PartitionKey)
			}
			key, _ := json.Marshal(map[string]string{"PartitionKey": k.PartitionKey, "RowKey": k.RowKey})
			byUser[k.PartitionKey] = append(byUser[k.PartitionKey], aztables.TransactionAction{ActionType: aztables.TransactionTypeDelete, Entity: key})
		}
	}
	for _, user := range order {
		for ops := byUser[user]; len(ops) > 0; {
			n := min(len(ops), 100)
			if _, err := t.SubmitTransaction(ctx, ops[:n], nil); err != nil {
				return requests, fmt.Errorf("delete: %w", err)
			}
			requests++
			ops = ops[n:]
		}
	}
	return requests, nil
}

// count counts a table's entities, reading only their keys.
func count(ctx context.Context, t *aztables.Client) (int, error) {
	n, sel := 0, "PartitionKey"
	pager := t.NewListEntitiesPager(&aztables.ListEntitiesOptions{Select: &sel})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("count: %w", err)
		}
		n += len(page.Entities)
	}
	return n, nil
}

func listTables(ctx context.Context, svc *aztables.ServiceClient) ([]string, error) {
	filter := "TableName ge 'LoginAttempts' and TableName lt 'LoginAttemptt'"
	var names []string
	pager := svc.NewListTablesPager(&aztables.ListTablesOptions{Filter: &filter})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		for _, t := range page.Tables {
			names = append(names, *t.Name)
		}
	}
	return names, nil
}

// isNotFound reports a 404 (TableNotFound or ResourceNotFound).
func isNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}
