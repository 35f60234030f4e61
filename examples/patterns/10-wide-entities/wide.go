package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// A year of daily message counts is 365 properties; an entity holds at most 252 besides
// PartitionKey, RowKey and Timestamp. So the logical entity is stored as two: RowKey
// "<id>_01" holds days 1-183, "<id>_02" days 184-365, both in the employee's department
// partition, written together by one entity group transaction and read by one row-range
// query.

// Result is what the run found, for the test.
type Result struct {
	OneEntityErr error       // storing all 365 properties in one entity
	Written      map[int]int // day → count
	Read         map[int]int // day → count, from the two entities
	Parts        int         // physical entities read
}

const (
	table = "MessageStatsWide"
	days  = 365
	split = 183 // days in the first entity
)

func day(d int) string { return fmt.Sprintf("D%03d", d) }

// Run creates the table, tries the year as one entity, writes it as two in one transaction,
// reads it back, and deletes the table again.
func Run(ctx context.Context, svc *aztables.ServiceClient, out io.Writer) (Result, error) {
	res := Result{Written: map[int]int{}, Read: map[int]int{}}
	if _, err := svc.CreateTable(ctx, table, nil); err != nil {
		return res, fmt.Errorf("create table: %w", err)
	}
	defer svc.DeleteTable(context.WithoutCancel(ctx), table, nil)
	t := svc.NewClient(table)

	whole := map[string]any{"PartitionKey": "Sales", "RowKey": "000123"}
	first := map[string]any{"PartitionKey": "Sales", "RowKey": "000123_01"}
	second := map[string]any{"PartitionKey": "Sales", "RowKey": "000123_02"}
	for d := 1; d <= days; d++ {
		n := (d * 37) % 50
		res.Written[d], whole[day(d)] = n, n
		if d <= split {
			first[day(d)] = n
		} else {
			second[day(d)] = n
		}
	}

	b, _ := json.Marshal(whole)
	_, res.OneEntityErr = t.AddEntity(ctx, b, nil)
	var re *azcore.ResponseError
	if errors.As(res.OneEntityErr, &re) {
		fmt.Fprintf(out, "one entity with %d properties: %d %s\n", days, re.StatusCode, re.ErrorCode)
	}

	b1, _ := json.Marshal(first)
	b2, _ := json.Marshal(second)
	if _, err := t.SubmitTransaction(ctx, []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: b1},
		{ActionType: aztables.TransactionTypeAdd, Entity: b2},
	}, nil); err != nil {
		return res, fmt.Errorf("write year: %w", err)
	}
	fmt.Fprintf(out, "two entities (%d + %d properties) in one transaction: stored\n", split, days-split)

	filter := "PartitionKey eq 'Sales' and RowKey ge '000123_01' and RowKey le '000123_02'"
	fmt.Fprintf(out, "query $filter=%s\n", filter)
	pager := t.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return res, fmt.Errorf("read year: %w", err)
		}
		for _, b := range page.Entities {
			res.Parts++
			var part map[string]any
			if err := json.Unmarshal(b, &part); err != nil {
				return res, err
			}
			for name, v := range part {
				var d int
				if n, ok := v.(float64); ok && strings.HasPrefix(name, "D") {
					if _, err := fmt.Sscanf(name, "D%03d", &d); err == nil {
						res.Read[d] = int(n)
					}
				}
			}
		}
	}
	fmt.Fprintf(out, "  %d days from %d entities\n", len(res.Read), res.Parts)
	return res, nil
}
