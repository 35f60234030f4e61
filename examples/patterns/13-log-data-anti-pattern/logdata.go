package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Message is one log message. Levels as in Windows event logs: 1 critical, 2 error,
// 3 warning, 4 information.
type Message struct {
	At     time.Time
	Source string // the server that logged it
	Level  int
	ID     int64
}

// Design is a way to key log messages.
type Design struct {
	Name  string
	Table string
	Key   func(m Message) (pk, rk string)
	// Window is the $filter for "errors and critical messages from 15:04 to 15:06".
	Window string
}

// ByTime keys a message by its date and hour: the time-range query reads one partition, but
// every message being written goes to the same one.
var ByTime = Design{
	Name:  "PartitionKey = date and hour",
	Table: "LogByTime",
	Key: func(m Message) (string, string) {
		return m.At.Format("2006010215"), fmt.Sprintf("%s_%08d", m.At.Format("150405.000"), m.ID)
	},
	Window: "PartitionKey eq '2026112415' and RowKey ge '150400' and RowKey lt '150600' and Level le 2",
}

// BySource keys a message by the server that logged it: writes spread over the servers, but
// a time range is in every partition.
var BySource = Design{
	Name:  "PartitionKey = source",
	Table: "LogBySource",
	Key: func(m Message) (string, string) {
		return m.Source, fmt.Sprintf("%s_%08d", m.At.Format("20060102150405.000"), m.ID)
	},
	Window: "RowKey ge '20261124150400' and RowKey lt '20261124150600' and Level le 2",
}

// Load is how hard each design is written.
type Load struct {
	Rate     int // messages per second, all writers together
	Duration time.Duration
	Writers  int
}

// Outcome is what one design met.
type Outcome struct {
	Design     string
	Written    int
	Refused    int       // 503 ServerBusy or 500 OperationTimedOut
	Partitions int       // distinct PartitionKeys written
	Expected   []int64   // ids of stored errors and criticals in the window
	Found      []int64   // ids the time-range query returned
	Hottest    []HotKey  // from Tablo's partition statistics (nil without them)
	Query      queryCost // from the query's x-tablo-query-plan
}

// HotKey is one PartitionKey of Tablo's heavy-hitters summary.
type HotKey struct {
	Key   string `json:"partitionKey"`
	Count uint64 `json:"count"`
}

type queryCost struct{ Pages int }

// The log covers 15:00 to 15:10; the messages written are spread evenly over it, so that the
// query always has the same share of them.
var logStart = time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC)

const logSpan = 10 * time.Minute

// Run writes the log through each design and runs the time-range query on each.
func Run(ctx context.Context, svc *aztables.ServiceClient, statsURL string, load Load, out io.Writer) ([]Outcome, error) {
	var outs []Outcome
	total := int(int64(load.Rate) * int64(load.Duration) / int64(time.Second))
	for _, d := range []Design{ByTime, BySource} {
		fmt.Fprintln(out, d.Name)
		o, err := write(ctx, svc, d, load, total)
		if err != nil {
			return outs, err
		}
		fmt.Fprintf(out, "  %d messages: %d stored in %d partitions, %d refused (ServerBusy)\n", o.Written, o.Written-o.Refused, o.Partitions, o.Refused)
		if statsURL != "" {
			if o.Hottest, err = hottest(ctx, statsURL, d.Table); err != nil {
				return outs, err
			}
			line := "  hottest partitions (Tablo's statistics):"
			for _, h := range o.Hottest[:min(3, len(o.Hottest))] {
				line += fmt.Sprintf(" %s %d", h.Key, h.Count)
			}
			fmt.Fprintln(out, line)
		}
		fmt.Fprintf(out, "query $filter=%s\n", d.Window)
		opts := &aztables.ListEntitiesOptions{Filter: &d.Window}
		pager := svc.NewClient(d.Table).NewListEntitiesPager(opts)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			// The partition the writes made hot refuses reads too, until it cools: back off
			// and try again (the guide's exponential back-off, without its jitter). A pager
			// that failed stays failed, so a new one resumes from the last continuation.
			for wait := 50 * time.Millisecond; refused(err) && wait < 10*time.Second; wait *= 2 {
				fmt.Fprintf(out, "  ServerBusy; retrying in %s\n", wait)
				time.Sleep(wait)
				pager = svc.NewClient(d.Table).NewListEntitiesPager(opts)
				page, err = pager.NextPage(ctx)
			}
			if err != nil {
				return outs, fmt.Errorf("query: %w", err)
			}
			opts.NextPartitionKey, opts.NextRowKey = page.NextPartitionKey, page.NextRowKey
			o.Query.Pages++
			for _, b := range page.Entities {
				var m struct{ ID int64 }
				if err := json.Unmarshal(b, &m); err != nil {
					return outs, err
				}
				o.Found = append(o.Found, m.ID)
			}
		}
		fmt.Fprintf(out, "  %d errors and critical messages between 15:04 and 15:06\n", len(o.Found))
		outs = append(outs, o)
	}
	return outs, nil
}

// write creates the design's table and writes total messages at load.Rate.
func write(ctx context.Context, svc *aztables.ServiceClient, d Design, load Load, total int) (Outcome, error) {
	o := Outcome{Design: d.Name}
	if _, err := svc.CreateTable(ctx, d.Table, nil); err != nil {
		return o, fmt.Errorf("create table: %w", err)
	}
	t := svc.NewClient(d.Table)
	var (
		seq      atomic.Int64
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
		parts    = map[string]bool{}
		start    = time.Now()
	)
	interval := time.Second / time.Duration(load.Rate)
	for range load.Writers {
		wg.Go(func() {
			for {
				n := seq.Add(1) - 1
				if n >= int64(total) {
					return
				}
				time.Sleep(time.Until(start.Add(time.Duration(n) * interval)))
				m := Message{At: logStart.Add(logSpan * time.Duration(n) / time.Duration(total)), Source: fmt.Sprintf("web%02d", n%16), Level: 1 + int(n*7%10)%4, ID: n}
				pk, rk := d.Key(m)
				b, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": rk, "Source": m.Source, "Level": m.Level, "ID": m.ID, "Text": "request failed"})
				_, err := t.AddEntity(ctx, b, nil)
				mu.Lock()
				o.Written++
				switch {
				case err == nil:
					parts[pk] = true
					if m.Level <= 2 && !m.At.Before(logStart.Add(4*time.Minute)) && m.At.Before(logStart.Add(6*time.Minute)) {
						o.Expected = append(o.Expected, m.ID)
					}
				case refused(err):
					o.Refused++
				case firstErr == nil:
					firstErr = fmt.Errorf("write: %w", err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	o.Partitions = len(parts)
	return o, firstErr
}

// refused reports the answers Azure gives a partition beyond its targets or while it moves.
func refused(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && (re.ErrorCode == "ServerBusy" || re.ErrorCode == "OperationTimedOut")
}

// hottest reads the table's most written PartitionKeys from Tablo's partition statistics.
func hottest(ctx context.Context, url, table string) ([]HotKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"?top=3", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("partition statistics: %w", err)
	}
	defer resp.Body.Close()
	var snap struct {
		Tables []struct {
			Name       string   `json:"name"`
			Partitions []HotKey `json:"partitions"`
		} `json:"tables"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		return nil, fmt.Errorf("partition statistics: %w", err)
	}
	for _, t := range snap.Tables {
		if t.Name == table {
			slices.SortStableFunc(t.Partitions, func(a, b HotKey) int { return cmp.Compare(b.Count, a.Count) })
			return t.Partitions, nil
		}
	}
	return nil, fmt.Errorf("partition statistics: no table %s", table)
}
