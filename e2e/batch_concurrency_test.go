package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Optimistic concurrency under load (spec/batch.md §1 "Atomicity"): read-modify-write with
// ETags through single updates and through transactions never loses an update, never applies
// half a transaction, and readers never see half of one. No timing is asserted.

// counterEntity is the integer state tests keep in an entity.
type counterEntity struct {
	PartitionKey, RowKey  string
	Value, Moves, Singles int64
}

// json encodes c; it cannot fail, so the racing goroutines call it without a testing.TB.
func (c counterEntity) json() []byte {
	return jsonOf(map[string]any{
		"PartitionKey": c.PartitionKey, "RowKey": c.RowKey,
		"Value": c.Value, "Moves": c.Moves, "Singles": c.Singles,
	})
}

func readCounter(tc *aztables.Client, pk, rk string) (counterEntity, azcore.ETag, error) {
	resp, err := tc.GetEntity(ctx, pk, rk, nil)
	if err != nil {
		return counterEntity{}, "", err
	}
	var c counterEntity
	if err := json.Unmarshal(resp.Value, &c); err != nil {
		return counterEntity{}, "", err
	}
	return c, resp.ETag, nil
}

// isConflict reports an ETag mismatch, stand-alone (412) or inside a failed transaction
// (Go reports those as 202 with the part's code in the text).
func isConflict(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && (re.ErrorCode == "UpdateConditionNotSatisfied" ||
		re.StatusCode == 202 && strings.Contains(err.Error(), `"code":"UpdateConditionNotSatisfied"`))
}

// TestConcurrentSingleUpdateCounters: goroutines increment shared counters with
// read-modify-write under If-Match, retrying on 412; each counter ends at exactly its number
// of successful increments.
func TestConcurrentSingleUpdateCounters(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	const counters, workers, perWorker = 3, 8, 15
	var wins [counters]atomic.Int64
	for i := range counters {
		if _, err := tc.AddEntity(ctx, counterEntity{PartitionKey: "single", RowKey: fmt.Sprint("c", i)}.json(), nil); err != nil {
			t.Fatal(err)
		}
	}
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for done := 0; done < perWorker; {
				i := r.IntN(counters)
				c, etag, err := readCounter(tc, "single", fmt.Sprint("c", i))
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				c.Value++
				_, err = tc.UpdateEntity(ctx, c.json(), &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
				switch {
				case err == nil:
					wins[i].Add(1)
					done++
				case isConflict(err):
					conflicts.Add(1)
				default:
					t.Errorf("update: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	total := int64(0)
	for i := range counters {
		c, _, err := readCounter(tc, "single", fmt.Sprint("c", i))
		if err != nil {
			t.Fatal(err)
		}
		if c.Value != wins[i].Load() {
			t.Errorf("c%d = %d after %d successful increments (lost update)", i, c.Value, wins[i].Load())
		}
		total += c.Value
	}
	if total != workers*perWorker {
		t.Errorf("total %d, want %d", total, workers*perWorker)
	}
	t.Logf("%d increments, %d retried conflicts", total, conflicts.Load())
}

// TestConcurrentBatchTransfers: transactions move value between two entities of one
// partition (both ETags checked), single merges bump a per-entity counter in between, and
// readers query the partition throughout. The pair's sum never changes, in any snapshot;
// each counter equals its number of successful writes.
func TestConcurrentBatchTransfers(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	const start, movers, singlers, readers, perWorker = 1000, 6, 2, 2, 12
	for _, rk := range []string{"a", "b"} {
		if _, err := tc.AddEntity(ctx, counterEntity{PartitionKey: "pair", RowKey: rk, Value: start}.json(), nil); err != nil {
			t.Fatal(err)
		}
	}
	var (
		transfers, netAtoB, conflicts atomic.Int64
		singles                       = map[string]*atomic.Int64{"a": {}, "b": {}}
		wg, rwg                       sync.WaitGroup
		stop                          = make(chan struct{})
	)
	for w := range movers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for done := 0; done < perWorker; {
				a, ea, err := readCounter(tc, "pair", "a")
				if err != nil {
					t.Errorf("read a: %v", err)
					return
				}
				b, eb, err := readCounter(tc, "pair", "b")
				if err != nil {
					t.Errorf("read b: %v", err)
					return
				}
				x := int64(r.IntN(21) - 10)
				a.Value, b.Value = a.Value-x, b.Value+x
				a.Moves++
				b.Moves++
				_, err = tc.SubmitTransaction(ctx, []aztables.TransactionAction{
					{ActionType: aztables.TransactionTypeUpdateReplace, Entity: a.json(), IfMatch: &ea},
					{ActionType: aztables.TransactionTypeUpdateReplace, Entity: b.json(), IfMatch: &eb},
				}, nil)
				switch {
				case err == nil:
					transfers.Add(1)
					netAtoB.Add(x)
					done++
				case isConflict(err):
					conflicts.Add(1)
				default:
					t.Errorf("transfer: %v", err)
					return
				}
			}
		})
	}
	for w := range singlers {
		rk := []string{"a", "b"}[w%2]
		wg.Go(func() {
			for done := 0; done < perWorker; {
				c, etag, err := readCounter(tc, "pair", rk)
				if err != nil {
					t.Errorf("read %s: %v", rk, err)
					return
				}
				patch := jsonOf(map[string]any{"PartitionKey": "pair", "RowKey": rk, "Singles": c.Singles + 1})
				_, err = tc.UpdateEntity(ctx, patch, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeMerge})
				switch {
				case err == nil:
					singles[rk].Add(1)
					done++
				case isConflict(err):
					conflicts.Add(1)
				default:
					t.Errorf("single %s: %v", rk, err)
					return
				}
			}
		})
	}
	var snapshots atomic.Int64
	for range readers {
		rwg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				pair, err := queryPair(tc)
				if err != nil {
					t.Errorf("query: %v", err)
					return
				}
				if pair["a"].Value+pair["b"].Value != 2*start || pair["a"].Moves != pair["b"].Moves {
					t.Errorf("torn transaction visible to a reader: %+v", pair)
					return
				}
				snapshots.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	rwg.Wait()

	pair, err := queryPair(tc)
	if err != nil {
		t.Fatal(err)
	}
	a, b := pair["a"], pair["b"]
	if a.Value+b.Value != 2*start || a.Value != start-netAtoB.Load() {
		t.Errorf("values a=%d b=%d, want a=%d (net moved %d) and sum %d", a.Value, b.Value, start-netAtoB.Load(), netAtoB.Load(), 2*start)
	}
	if a.Moves != transfers.Load() || b.Moves != transfers.Load() {
		t.Errorf("moves a=%d b=%d after %d successful transactions", a.Moves, b.Moves, transfers.Load())
	}
	if a.Singles != singles["a"].Load() || b.Singles != singles["b"].Load() {
		t.Errorf("singles a=%d b=%d, want %d %d", a.Singles, b.Singles, singles["a"].Load(), singles["b"].Load())
	}
	t.Logf("%d transfers, %d single merges, %d retried conflicts, %d consistent snapshots read",
		transfers.Load(), singles["a"].Load()+singles["b"].Load(), conflicts.Load(), snapshots.Load())
}

// queryPair reads the whole "pair" partition in one query (one engine snapshot).
func queryPair(tc *aztables.Client) (map[string]counterEntity, error) {
	pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'pair'")})
	out := map[string]counterEntity{}
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, raw := range p.Entities {
			var c counterEntity
			if err := json.Unmarshal(raw, &c); err != nil {
				return nil, err
			}
			out[c.RowKey] = c
		}
	}
	if len(out) != 2 {
		return nil, fmt.Errorf("pair partition holds %d entities", len(out))
	}
	return out, nil
}

// TestConcurrentBatchesOnDifferentPartitions: transactions on distinct partitions never
// conflict with each other, and all of them apply.
func TestConcurrentBatchesOnDifferentPartitions(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	const partitions, rows, rounds = 6, 10, 8
	var wg sync.WaitGroup
	for p := range partitions {
		pk := fmt.Sprint("part", p)
		wg.Go(func() {
			etags := make([]azcore.ETag, rows)
			for round := range rounds {
				actions := make([]aztables.TransactionAction, rows)
				for i := range actions {
					c := counterEntity{PartitionKey: pk, RowKey: fmt.Sprint("r", i), Value: int64(round + 1)}
					actions[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: c.json()}
					if round > 0 {
						actions[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeUpdateReplace, Entity: c.json(), IfMatch: &etags[i]}
					}
				}
				if _, err := tc.SubmitTransaction(ctx, actions, nil); err != nil {
					t.Errorf("%s round %d: %v", pk, round, err)
					return
				}
				for i := range etags {
					resp, err := tc.GetEntity(ctx, pk, fmt.Sprint("r", i), nil)
					if err != nil {
						t.Errorf("%s get: %v", pk, err)
						return
					}
					etags[i] = resp.ETag
				}
			}
		})
	}
	wg.Wait()
	for p := range partitions {
		for i := range rows {
			c, _, err := readCounter(tc, fmt.Sprint("part", p), fmt.Sprint("r", i))
			if err != nil {
				t.Fatal(err)
			}
			if c.Value != rounds {
				t.Errorf("part%d/r%d = %d, want %d", p, i, c.Value, rounds)
			}
		}
	}
}
