package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Employee and Review share the department's partition. An employee's RowKey is its id; a
// review's RowKey joins the id and the year ("000123_2012"), so one employee's reviews are
// adjacent, in year order, and any one of them is a point query.
type Employee struct {
	PartitionKey string
	RowKey       string // "000123"
	FirstName    string
	LastName     string
	LastReview   int
}

// Review is one year's performance review.
type Review struct {
	PartitionKey  string
	RowKey        string // "<employee id>_<year>"
	ManagerRating int
	PeerRating    int
	Comments      string
}

// Result is what the run found, for the test.
type Result struct {
	Review2012 Review   // one point query on both keys
	AllReviews []Review // one row-range query, in year order
	Employee   Employee // updated in the same transaction as the last review
}

const table = "EmployeesCompoundKey"

// Run creates the table, stores employees with five years of reviews each, queries one review
// and one employee's reviews, and deletes the table again.
func Run(ctx context.Context, svc *aztables.ServiceClient, out io.Writer) (Result, error) {
	var res Result
	if _, err := svc.CreateTable(ctx, table, nil); err != nil {
		return res, fmt.Errorf("create table: %w", err)
	}
	defer svc.DeleteTable(context.WithoutCancel(ctx), table, nil)
	t := svc.NewClient(table)

	for i := range 20 {
		id := fmt.Sprintf("%06d", 113+i)
		if _, err := t.AddEntity(ctx, marshal(Employee{PartitionKey: "Sales", RowKey: id, FirstName: "F", LastName: fmt.Sprintf("L%d", i)}), nil); err != nil {
			return res, fmt.Errorf("add employee: %w", err)
		}
		for year := 2010; year < 2015; year++ {
			// The review and the employee's LastReview change together: same partition, one
			// entity group transaction.
			r := Review{PartitionKey: "Sales", RowKey: fmt.Sprintf("%s_%d", id, year), ManagerRating: 1 + (i+year)%5, PeerRating: 1 + (i*year)%5, Comments: fmt.Sprintf("%d review of %s", year, id)}
			// A merge sets every property it carries: send only the one that changes.
			e := map[string]any{"PartitionKey": "Sales", "RowKey": id, "LastReview": year}
			if _, err := t.SubmitTransaction(ctx, []aztables.TransactionAction{
				{ActionType: aztables.TransactionTypeAdd, Entity: marshal(r)},
				{ActionType: aztables.TransactionTypeUpdateMerge, Entity: marshal(e)},
			}, nil); err != nil {
				return res, fmt.Errorf("add review: %w", err)
			}
		}
	}
	fmt.Fprintln(out, "stored 20 employees of Sales with five yearly reviews each (120 entities, one partition)")

	one, err := query[Review](ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq '000123_2012'", "")
	if err != nil {
		return res, err
	}
	if len(one) == 1 {
		res.Review2012 = one[0]
	}
	// "_" sorts before every digit-free suffix and "000124" after every "000123_…", so this
	// range holds exactly 000123's reviews.
	if res.AllReviews, err = query[Review](ctx, out, t, "PartitionKey eq 'Sales' and RowKey gt '000123_' and RowKey lt '000124'", "RowKey,ManagerRating,PeerRating,Comments"); err != nil {
		return res, err
	}
	for _, r := range res.AllReviews {
		fmt.Fprintf(out, "  %s manager %d peer %d %q\n", r.RowKey, r.ManagerRating, r.PeerRating, r.Comments)
	}
	es, err := query[Employee](ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq '000123'", "")
	if len(es) == 1 {
		res.Employee = es[0]
	}
	return res, err
}

func marshal(v any) []byte {
	b, _ := json.Marshal(v) // structs of strings and ints always marshal
	return b
}

// query returns every entity matching filter, in key order, with only the properties in sel
// (all when empty).
func query[T any](ctx context.Context, out io.Writer, t *aztables.Client, filter, sel string) ([]T, error) {
	opts := &aztables.ListEntitiesOptions{Filter: &filter}
	fmt.Fprintf(out, "query $filter=%s", filter)
	if sel != "" {
		opts.Select = &sel
		fmt.Fprintf(out, "&$select=%s", sel)
	}
	fmt.Fprintln(out)
	var es []T
	pager := t.NewListEntitiesPager(opts)
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
