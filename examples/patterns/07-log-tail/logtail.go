package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Expense is keyed by employee and by the inverted time of submission, so a partition lists
// its newest expense first.
type Expense struct {
	PartitionKey string // employee id
	RowKey       string // InvertedTicks(submitted)
	Submitted    time.Time
	Amount       float64
}

// .NET's DateTime.MaxValue.Ticks and the Unix epoch in ticks (100 ns since 0001-01-01), so
// that keys written here sort with keys written by the guide's C#:
// string.Format("{0:D19}", DateTime.MaxValue.Ticks - DateTime.UtcNow.Ticks).
const (
	maxTicks   = 3155378975999999999
	epochTicks = 621355968000000000
)

// InvertedTicks is a RowKey that sorts newer times first. It is zero-padded to 19 digits so
// that string order is numeric order.
func InvertedTicks(t time.Time) string {
	ticks := epochTicks + t.UnixNano()/100
	return fmt.Sprintf("%019d", maxTicks-ticks)
}

// FromInvertedTicks reads the time back from a RowKey.
func FromInvertedTicks(rk string) (time.Time, error) {
	n, err := strconv.ParseInt(rk, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, (maxTicks-n-epochTicks)*100).UTC(), nil
}

// Result is what the run found, for the test.
type Result struct {
	Written  []time.Time // submission times, oldest first
	Latest   []Expense   // the newest ten
	LastHour []Expense   // everything since an hour before the newest
}

const table = "EmployeeExpenseLogTail"

// Run creates the table, submits 200 expenses over three days for each of three employees,
// fetches one employee's ten newest with one query, then everything in their last hour, and
// deletes the table again.
func Run(ctx context.Context, svc *aztables.ServiceClient, out io.Writer) (Result, error) {
	var res Result
	if _, err := svc.CreateTable(ctx, table, nil); err != nil {
		return res, fmt.Errorf("create table: %w", err)
	}
	defer svc.DeleteTable(context.WithoutCancel(ctx), table, nil)
	t := svc.NewClient(table)

	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for _, emp := range []string{"000122", "000123", "000124"} {
		var batch []aztables.TransactionAction
		for i := range 200 {
			at := start.Add(time.Duration(i) * 21 * time.Minute)
			if emp == "000123" {
				res.Written = append(res.Written, at)
			}
			b, _ := json.Marshal(Expense{PartitionKey: emp, RowKey: InvertedTicks(at), Submitted: at, Amount: float64(10 + i%90)})
			batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: b})
			if len(batch) == 100 { // an entity group transaction holds at most 100 operations
				if _, err := t.SubmitTransaction(ctx, batch, nil); err != nil {
					return res, fmt.Errorf("add expenses: %w", err)
				}
				batch = batch[:0]
			}
		}
	}
	fmt.Fprintf(out, "submitted 200 expenses each for 3 employees, %s to %s\n",
		res.Written[0].Format(time.DateTime), res.Written[len(res.Written)-1].Format(time.DateTime))

	// The ten newest: the first ten of the partition. The guide's
	// EmployeeExpense(PartitionKey='000123')?$top=10.
	var err error
	if res.Latest, err = query(ctx, out, t, "PartitionKey eq '000123'", 10); err != nil {
		return res, err
	}
	for _, e := range res.Latest[:3] {
		at, _ := FromInvertedTicks(e.RowKey)
		fmt.Fprintf(out, "  %s  %s  %.2f\n", e.RowKey, at.Format(time.DateTime), e.Amount)
	}
	fmt.Fprintln(out, "  …")

	// Everything newer than a time is a prefix of the partition: a row range ending at that
	// time's inverted key.
	since := res.Written[len(res.Written)-1].Add(-time.Hour)
	res.LastHour, err = query(ctx, out, t, fmt.Sprintf("PartitionKey eq '000123' and RowKey lt '%s'", InvertedTicks(since)), 0)
	fmt.Fprintf(out, "  %d expenses since %s\n", len(res.LastHour), since.Format(time.DateTime))
	return res, err
}

// query returns the first top entities matching filter (all when top is 0), in key order.
func query(ctx context.Context, out io.Writer, t *aztables.Client, filter string, top int32) ([]Expense, error) {
	opts := &aztables.ListEntitiesOptions{Filter: &filter}
	fmt.Fprintf(out, "query $filter=%s", filter)
	if top > 0 {
		opts.Top = &top
		fmt.Fprintf(out, "&$top=%d", top)
	}
	fmt.Fprintln(out)
	var es []Expense
	pager := t.NewListEntitiesPager(opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", filter, err)
		}
		for _, b := range page.Entities {
			var e Expense
			if err := json.Unmarshal(b, &e); err != nil {
				return nil, err
			}
			es = append(es, e)
		}
		if top > 0 && len(es) >= int(top) {
			break // $top limits a page; the pager would go on to the next one
		}
	}
	return es, nil
}
