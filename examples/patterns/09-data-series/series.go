package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// A day of message counts is one entity: PartitionKey the employee, RowKey the day, and a
// property per hour, H00 … H23. The alternative, an entity per hour, needs 24 entities read
// to draw the same chart.

// Result is what the run found, for the test.
type Result struct {
	Series    map[string]int // the series read back in one request
	PerHour   int            // entities the one-entity-per-hour design reads for the same chart
	Sent      map[string]int // the counts the writers added, per hour
	Conflicts int            // increments that met a newer ETag and retried
}

const (
	table   = "MessageStatsSeries"
	perHour = "MessageStatsPerHour"
)

// Run creates the tables, records a day of instant messages for one employee from 8
// concurrent writers, reads the day's series back both ways, and deletes the tables again.
func Run(ctx context.Context, svc *aztables.ServiceClient, out io.Writer) (Result, error) {
	res := Result{Sent: map[string]int{}}
	for _, name := range []string{table, perHour} {
		if _, err := svc.CreateTable(ctx, name, nil); err != nil {
			return res, fmt.Errorf("create table: %w", err)
		}
		defer svc.DeleteTable(context.WithoutCancel(ctx), name, nil)
	}
	t, hourly := svc.NewClient(table), svc.NewClient(perHour)

	// Start the day with every hour at zero.
	day := map[string]any{"PartitionKey": "000123", "RowKey": "2026-11-24"}
	for h := range 24 {
		day[hour(h)] = 0
	}
	b, _ := json.Marshal(day)
	if _, err := t.AddEntity(ctx, b, nil); err != nil {
		return res, fmt.Errorf("add day: %w", err)
	}

	// Writers count messages as they are sent. Each increment reads the entity, merges one
	// property back with If-Match on the ETag it read, and starts again if another writer
	// changed the entity in between (412).
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for w := range 8 {
		wg.Go(func() {
			for i := range 12 {
				h := hour((w*5 + i*7) % 24)
				conflicts, err := increment(ctx, t, "000123", "2026-11-24", h)
				mu.Lock()
				res.Conflicts += conflicts
				res.Sent[h]++
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return res, firstErr
	}
	fmt.Fprintf(out, "8 writers counted 96 messages into one entity; %d increments met a newer ETag and retried\n", res.Conflicts)

	// The chart: one point query returns the whole series.
	filter := "PartitionKey eq '000123' and RowKey eq '2026-11-24'"
	fmt.Fprintf(out, "query $filter=%s\n", filter)
	page, err := t.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter}).NextPage(ctx)
	if err != nil {
		return res, fmt.Errorf("read series: %w", err)
	}
	if len(page.Entities) != 1 {
		return res, fmt.Errorf("read series: %d entities", len(page.Entities))
	}
	var series map[string]any
	if err := json.Unmarshal(page.Entities[0], &series); err != nil {
		return res, err
	}
	res.Series = map[string]int{}
	line := " "
	for h := range 24 {
		n, _ := series[hour(h)].(float64)
		res.Series[hour(h)] = int(n)
		line += fmt.Sprintf(" %d", int(n))
	}
	fmt.Fprintln(out, line)

	// The same chart from an entity per hour: 24 entities to read.
	var rows []aztables.TransactionAction
	for h := range 24 {
		b, _ := json.Marshal(map[string]any{"PartitionKey": "000123", "RowKey": "2026-11-24T" + hour(h)[1:], "Count": res.Series[hour(h)]})
		rows = append(rows, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: b})
	}
	if _, err := hourly.SubmitTransaction(ctx, rows, nil); err != nil {
		return res, fmt.Errorf("add hours: %w", err)
	}
	filter = "PartitionKey eq '000123' and RowKey ge '2026-11-24T' and RowKey lt '2026-11-24U'"
	fmt.Fprintf(out, "query $filter=%s\n", filter)
	page, err = hourly.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter}).NextPage(ctx)
	res.PerHour = len(page.Entities)
	return res, err
}

func hour(h int) string { return fmt.Sprintf("H%02d", h) }

// increment adds one to a property of an entity with optimistic concurrency; it returns how
// many attempts lost to another writer.
func increment(ctx context.Context, t *aztables.Client, pk, rk, prop string) (conflicts int, err error) {
	for {
		got, err := t.GetEntity(ctx, pk, rk, nil)
		if err != nil {
			return conflicts, fmt.Errorf("read: %w", err)
		}
		var cur map[string]any
		if err := json.Unmarshal(got.Value, &cur); err != nil {
			return conflicts, err
		}
		n, _ := cur[prop].(float64) // JSON numbers decode as float64
		b, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": rk, prop: int(n) + 1})
		_, err = t.UpdateEntity(ctx, b, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &got.ETag})
		var re *azcore.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusPreconditionFailed {
			conflicts++
			continue
		}
		return conflicts, err
	}
}
