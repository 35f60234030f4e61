package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Event is one network or resource access by an employee.
type Event struct {
	At         time.Time
	Department string
	EmployeeID string
	Resource   string
}

// Design is a way to key events.
type Design struct {
	Name  string
	Table string
	Key   func(e Event, seq int64) (pk, rk string)
}

// ByHour is the anti-pattern: PartitionKey is the current hour, so at any moment every insert
// goes to one partition, and each new hour's key sorts after every key before it.
var ByHour = Design{
	Name:  "PartitionKey = hour (append-only)",
	Table: "AccessLogByHour",
	Key: func(e Event, seq int64) (string, string) {
		return e.At.Format("2006010215"), fmt.Sprintf("%s_%08d", e.At.Format("150405.000000"), seq)
	},
}

// ByEmployee is the guide's alternative: PartitionKey joins department and employee, RowKey
// the time, so inserts spread over as many partitions as there are employees.
var ByEmployee = Design{
	Name:  "PartitionKey = department_employee",
	Table: "AccessLogByEmployee",
	Key: func(e Event, seq int64) (string, string) {
		return e.Department + "_" + e.EmployeeID, fmt.Sprintf("%s_%08d", e.At.Format("20060102150405.000000"), seq)
	},
}

// Load is how hard each design is driven.
type Load struct {
	Rate     int // inserts per second, all writers together
	Duration time.Duration
	Writers  int
}

// Outcome is what one design met.
type Outcome struct {
	Design       string
	Inserts      int            // attempted
	Busy         int            // refused: 503 ServerBusy or 500 OperationTimedOut
	PerPartition map[string]int // stored, per PartitionKey
	Appended     int            // inserts whose key sorts after the keys of every event before it
	Stats        *TableStats    // Tablo's partition statistics for the table (nil without them)
	// Refusals by Tablo's reason during this design's run: "partition" (a PartitionKey over
	// its target), "server" (a partition server over capacity), "moving" (a range moving).
	Reasons map[string]uint64
}

// TableStats is the part of Tablo's partition statistics (GET /partitions) read here.
type TableStats struct {
	Name   string `json:"name"`
	Ranges []struct {
		Name   string `json:"name"`
		Low    string `json:"low"`
		High   string `json:"high"`
		Server int    `json:"server"`
		Rates  struct {
			Write  float64 `json:"writeEntitiesPerSec"`
			Demand float64 `json:"demandEntitiesPerSec"`
			Busy   float64 `json:"busyPerSec"`
		} `json:"rates"`
		Splits int `json:"splits"`
	} `json:"ranges"`
	Events []string `json:"-"` // split, move and no-split events for this table
}

// Run drives the load through each design in turn and reports what each met.
func Run(ctx context.Context, svc *aztables.ServiceClient, statsURL string, load Load, out io.Writer) ([]Outcome, error) {
	var outs []Outcome
	for _, d := range []Design{ByHour, ByEmployee} {
		var before map[string]uint64
		if statsURL != "" {
			var err error
			if _, before, err = stats(ctx, statsURL, ""); err != nil {
				return outs, err
			}
		}
		o, err := drive(ctx, svc, d, load)
		if err != nil {
			return outs, err
		}
		if statsURL != "" {
			var after map[string]uint64
			if o.Stats, after, err = stats(ctx, statsURL, d.Table); err != nil {
				return outs, err
			}
			o.Reasons = map[string]uint64{}
			for k, v := range after {
				o.Reasons[k] = v - before[k]
			}
		}
		report(out, o)
		outs = append(outs, o)
	}
	return outs, nil
}

// drive creates the design's table, inserts events at load.Rate for load.Duration and
// counts what was refused.
func drive(ctx context.Context, svc *aztables.ServiceClient, d Design, load Load) (Outcome, error) {
	o := Outcome{Design: d.Name, PerPartition: map[string]int{}}
	if _, err := svc.CreateTable(ctx, d.Table, nil); err != nil {
		return o, fmt.Errorf("create table: %w", err)
	}
	t := svc.NewClient(d.Table)
	var (
		seq      atomic.Int64
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
		keys     []string // by event number
		start    = time.Now()
		clock    = time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC) // the log's clock
	)
	interval := time.Second / time.Duration(load.Rate)
	for range load.Writers {
		wg.Go(func() {
			for {
				n := seq.Add(1) - 1
				due := time.Duration(n) * interval
				if due >= load.Duration {
					return
				}
				time.Sleep(time.Until(start.Add(due)))
				e := Event{At: clock.Add(due), Department: fmt.Sprintf("D%d", n%4), EmployeeID: fmt.Sprintf("%06d", n%20), Resource: "vpn"}
				pk, rk := d.Key(e, n)
				b, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": rk, "Resource": e.Resource})
				_, err := t.AddEntity(ctx, b, nil)
				mu.Lock()
				o.Inserts++
				for int64(len(keys)) <= n {
					keys = append(keys, "")
				}
				keys[n] = pk + "\x00" + rk
				switch {
				case err == nil:
					o.PerPartition[pk]++
				case refused(err):
					o.Busy++
				case firstErr == nil:
					firstErr = fmt.Errorf("insert: %w", err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Where did each event's key go, relative to the keys of the events before it?
	maxKey := ""
	for _, k := range keys {
		if k > maxKey {
			maxKey = k
			o.Appended++
		}
	}
	return o, firstErr
}

// refused reports the answers Azure gives a partition beyond its targets or while it moves.
func refused(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && (re.ErrorCode == "ServerBusy" || re.ErrorCode == "OperationTimedOut")
}

// stats reads Tablo's partition statistics: one table's (none when table is ""), and the
// refusals so far by reason.
func stats(ctx context.Context, url, table string) (*TableStats, map[string]uint64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("partition statistics: %w", err)
	}
	defer resp.Body.Close()
	var snap struct {
		Tables []TableStats `json:"tables"`
		Events []struct {
			Time, Kind, Table, Range, New, Key string
		} `json:"events"`
		Busy map[string]uint64 `json:"serverBusy"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		return nil, nil, fmt.Errorf("partition statistics: %w", err)
	}
	if table == "" {
		return nil, snap.Busy, nil
	}
	for _, ts := range snap.Tables {
		if ts.Name == table {
			for _, e := range snap.Events {
				if e.Table == table {
					ts.Events = append(ts.Events, fmt.Sprintf("%s %s %s", e.Kind, e.Range, e.Key))
				}
			}
			return &ts, snap.Busy, nil
		}
	}
	return nil, nil, fmt.Errorf("partition statistics: no table %s", table)
}

func report(out io.Writer, o Outcome) {
	stored := 0
	for _, n := range o.PerPartition {
		stored += n
	}
	fmt.Fprintf(out, "%s\n  %d inserts: %d stored, %d refused (ServerBusy)\n", o.Design, o.Inserts, stored, o.Busy)
	fmt.Fprintf(out, "  %d of the %d keys sorted after every key written before them (appended at the end of the key space)\n", o.Appended, o.Inserts)
	keys := make([]string, 0, len(o.PerPartition))
	for k := range o.PerPartition {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return o.PerPartition[keys[i]] > o.PerPartition[keys[j]] })
	line := fmt.Sprintf("  %d partitions; busiest:", len(keys))
	for _, k := range keys[:min(3, len(keys))] {
		line += fmt.Sprintf(" %s %d (%.0f%%)", k, o.PerPartition[k], 100*float64(o.PerPartition[k])/float64(max(stored, 1)))
	}
	fmt.Fprintln(out, line)
	if o.Stats == nil {
		return
	}
	fmt.Fprintf(out, "  refused because: a partition over its target %d, a partition server over capacity %d, a range moving %d\n",
		o.Reasons["partition"], o.Reasons["server"], o.Reasons["moving"])
	fmt.Fprintf(out, "  range partitions: %d\n", len(o.Stats.Ranges))
	for _, r := range o.Stats.Ranges {
		high := r.High
		if high == "" {
			high = "(end)"
		}
		fmt.Fprintf(out, "    %s [%q, %q) on server %d: %.0f entities/s written, %.0f demanded, %.0f refused/s, %d splits\n",
			r.Name, r.Low, high, r.Server, r.Rates.Write, r.Rates.Demand, r.Rates.Busy, r.Splits)
	}
	for _, e := range slices.Compact(o.Stats.Events) {
		fmt.Fprintf(out, "    event: %s\n", e)
	}
}
