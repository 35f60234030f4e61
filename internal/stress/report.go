package stress

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is a stress run's result (also its JSON form).
type Report struct {
	Table        string         `json:"table"`
	Endpoint     string         `json:"endpoint"`
	PartitionKey string         `json:"partitionKey"`
	Concurrency  int            `json:"concurrency"`
	Rate         float64        `json:"targetOpsPerSec,omitempty"`
	Retry        string         `json:"retry"`
	Target       int            `json:"partitionTargetEntitiesPerSec"`
	Mix          map[string]int `json:"mix"`
	Preload      PreloadReport  `json:"preload"`
	Seconds      float64        `json:"seconds"`
	Planned      float64        `json:"plannedSeconds"`
	Ops          []OpReport     `json:"operations"`
	Total        OpReport       `json:"total"`
	Partitions   PartsReport    `json:"partitions"`
	// Queries that named their range partitions (Tablo does), and how many they touched.
	RangeQueries   int64   `json:"rangeQueries"`
	RangesPerQuery float64 `json:"rangesPerQuery"`
	RangesMax      int64   `json:"rangesMax"`
	// EntitiesPerSecond is the measured phase second by second; FirstBusy is when the
	// endpoint first answered ServerBusy or timed out (seconds; absent if it never did).
	EntitiesPerSecond []int64  `json:"entitiesPerSecond"`
	FirstBusy         *float64 `json:"firstBusySeconds,omitempty"`
	Verdict           []string `json:"verdict"`
}

// PreloadReport is step 2, loading the table.
type PreloadReport struct {
	Entities int64   `json:"entities"`
	Failed   int64   `json:"failed"`
	Seconds  float64 `json:"seconds"`
}

// OpReport is one operation kind's results.
type OpReport struct {
	Op          string  `json:"op"`
	OK          int64   `json:"ok"`
	Failed      int64   `json:"failed"`
	Retries     int64   `json:"retries"`
	ServerBusy  int64   `json:"serverBusy"`
	Timeouts    int64   `json:"timeouts"`
	OtherErrors int64   `json:"otherErrors"`
	OpsPerSec   float64 `json:"opsPerSec"`
	EntPerSec   float64 `json:"entitiesPerSec"`
	P50ms       float64 `json:"p50ms"`
	P99ms       float64 `json:"p99ms"`
	MaxMs       float64 `json:"maxMs"`
	FirstError  string  `json:"firstError,omitempty"`
}

// PartsReport is the per-partition throughput.
type PartsReport struct {
	Distinct int64          `json:"distinct"`
	Busiest  []PartitionRow `json:"busiest"`
}

// PartitionRow is one partition's throughput against the target.
type PartitionRow struct {
	Key            string  `json:"partitionKey"`
	Entities       int64   `json:"entities"`
	EntitiesPerSec float64 `json:"entitiesPerSec"`
	OfTarget       float64 `json:"ofTarget"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (rep *Report) fill(r *run, res map[string]*opStats, el time.Duration) {
	secs := el.Seconds()
	rep.Seconds = secs
	var all opStats
	for _, op := range opNames {
		s := res[op]
		if s == nil {
			continue
		}
		all.merge(s)
		rep.Ops = append(rep.Ops, opReport(op, s, secs))
	}
	rep.Total = opReport("total", &all, secs)
	r.partsMu.Lock()
	rep.Partitions.Distinct = int64(len(r.parts))
	rows := make([]PartitionRow, 0, len(r.parts))
	for k, n := range r.parts {
		rate := float64(n) / secs
		rows = append(rows, PartitionRow{k, n, rate, rate / float64(rep.Target)})
	}
	r.partsMu.Unlock()
	slices.SortFunc(rows, func(a, b PartitionRow) int {
		return cmp.Or(cmp.Compare(b.EntitiesPerSec, a.EntitiesPerSec), strings.Compare(a.Key, b.Key))
	})
	rep.Partitions.Busiest = rows[:min(len(rows), 5)]
	rep.RangeQueries = r.rangeQueries.Load()
	if rep.RangeQueries > 0 {
		rep.RangesPerQuery = float64(r.rangesTouched.Load()) / float64(rep.RangeQueries)
		rep.RangesMax = r.rangesMax.Load()
	}
	last := 0
	for i := range r.timeline {
		if r.timeline[i].Load() > 0 {
			last = i
		}
	}
	for i := 0; i <= last && i < int(el/time.Second)+1; i++ {
		rep.EntitiesPerSecond = append(rep.EntitiesPerSecond, r.timeline[i].Load())
	}
	if fb := r.firstBusy.Load(); fb > 0 {
		v := time.Duration(fb - 1).Seconds()
		rep.FirstBusy = &v
	}
	rep.Verdict = rep.verdict()
}

// throughput is the mean entities/s over seconds [from, to) of the timeline (full seconds).
func (rep *Report) throughput(from, to int) float64 {
	to = min(to, len(rep.EntitiesPerSecond)-1) // the last second is partial
	if to <= from || from < 0 {
		return 0
	}
	var n int64
	for _, c := range rep.EntitiesPerSecond[from:to] {
		n += c
	}
	return float64(n) / float64(to-from)
}

func opReport(op string, s *opStats, secs float64) OpReport {
	return OpReport{
		Op: op, OK: s.ok, Failed: s.failed, Retries: s.retries, ServerBusy: s.busy, Timeouts: s.timeouts,
		OtherErrors: s.otherErrs, OpsPerSec: float64(s.ok) / secs, EntPerSec: float64(s.entities) / secs,
		P50ms: ms(s.hist.Quantile(0.5)), P99ms: ms(s.hist.Quantile(0.99)), MaxMs: ms(s.hist.Max()),
		FirstError: s.firstErr,
	}
}

// verdict says in plain words what the run shows about the PartitionKey design.
func (rep *Report) verdict() []string {
	var v []string
	target := float64(rep.Target)
	var busiest PartitionRow
	if len(rep.Partitions.Busiest) > 0 {
		busiest = rep.Partitions.Busiest[0]
	}
	switch rep.PartitionKey {
	case "sequential":
		v = append(v, "append-only PartitionKey: every insert lands in the last range partition; the design is capped at one partition server however many partitions it creates (Azure cannot spread the inserts: a split leaves the newest keys together).")
	case "reverse":
		v = append(v, "prepend-only PartitionKey: every insert lands in the first range partition; the design is capped at one partition server however many partitions it creates.")
	case "fixed":
		v = append(v, fmt.Sprintf("one PartitionKey takes every request: the design is capped at one partition's target (%d entities/s), batches included.", rep.Target))
	}
	if busiest.EntitiesPerSec > target {
		v = append(v, fmt.Sprintf("partition %q ran at %.0f entities/s, %.1fx the %d entities/s target: on Azure it would answer ServerBusy once it has been hot for a few minutes.",
			busiest.Key, busiest.EntitiesPerSec, busiest.OfTarget, rep.Target))
	} else if rep.Partitions.Distinct > 0 {
		v = append(v, fmt.Sprintf("%d partitions; the busiest ran at %.1f entities/s (%.0f%% of the %d entities/s target).",
			rep.Partitions.Distinct, busiest.EntitiesPerSec, 100*busiest.OfTarget, rep.Target))
	}
	if (rep.PartitionKey == "guid" || rep.PartitionKey == "hashed") && busiest.EntitiesPerSec <= target {
		v = append(v, "the load is spread over many partitions, so Azure can move them to more partition servers as it grows.")
	}
	if rep.FirstBusy != nil {
		fb := int(*rep.FirstBusy)
		before, after := rep.throughput(0, fb), rep.throughput(fb+1, len(rep.EntitiesPerSecond))
		if before > 0 && after > 0 {
			v = append(v, fmt.Sprintf("the first ServerBusy or time-out came after %.1fs; throughput went from %.0f entities/s before it to %.0f after.", *rep.FirstBusy, before, after))
		}
		if end := int(rep.Planned); end-fb > 20 {
			v = append(v, fmt.Sprintf("over the last 10 seconds: %.0f entities/s.", rep.throughput(end-10, end)))
		}
	}
	t := rep.Total
	if t.ServerBusy+t.Timeouts > 0 {
		s := fmt.Sprintf("the endpoint answered %d ServerBusy and %d time-outs; %d retries", t.ServerBusy, t.Timeouts, t.Retries)
		if t.Failed > 0 {
			s += fmt.Sprintf(", and %d operations failed after all retries", t.Failed)
		} else {
			s += " completed every operation"
		}
		if rep.Retry == "none" {
			s += " (no retry policy: add exponential back-off)"
		}
		v = append(v, s+".")
	} else if t.Failed == 0 {
		v = append(v, "no ServerBusy or time-outs at this load.")
	}
	if rep.RangeQueries > 0 && rep.RangesMax > 1 {
		v = append(v, fmt.Sprintf("range queries touched %.1f range partitions on average (at most %d): each extra partition server is another round trip.", rep.RangesPerQuery, rep.RangesMax))
	}
	return v
}

// WriteText prints the report for a terminal.
func (rep *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "table %s at %s: PartitionKey %s, %d workers, ", rep.Table, rep.Endpoint, rep.PartitionKey, rep.Concurrency)
	if rep.Rate > 0 {
		fmt.Fprintf(w, "%.0f ops/s", rep.Rate)
	} else {
		fmt.Fprint(w, "flat out")
	}
	fmt.Fprintf(w, ", retry %s, %.1fs\n", rep.Retry, rep.Seconds)
	fmt.Fprintf(w, "loaded %d entities in %.1fs (%d failed)\n\n", rep.Preload.Entities, rep.Preload.Seconds, rep.Preload.Failed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tok\tfailed\tretries\tbusy\ttimeouts\tops/s\tentities/s\tp50 ms\tp99 ms\t")
	for _, o := range append(rep.Ops, rep.Total) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t\n",
			o.Op, o.OK, o.Failed, o.Retries, o.ServerBusy, o.Timeouts, o.OpsPerSec, o.EntPerSec, o.P50ms, o.P99ms)
	}
	tw.Flush()
	fmt.Fprintf(w, "\npartitions: %d distinct; busiest against the %d entities/s target:\n", rep.Partitions.Distinct, rep.Target)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, p := range rep.Partitions.Busiest {
		fmt.Fprintf(tw, "  %s\t%d entities\t%.1f entities/s\t%.0f%%\t\n", p.Key, p.Entities, p.EntitiesPerSec, 100*p.OfTarget)
	}
	tw.Flush()
	if n := len(rep.EntitiesPerSecond); n > 0 {
		fmt.Fprint(w, "entities/s, second by second:")
		for _, c := range rep.EntitiesPerSecond {
			fmt.Fprintf(w, " %d", c)
		}
		fmt.Fprintln(w)
	}
	if rep.RangeQueries > 0 {
		fmt.Fprintf(w, "range partitions per query: %.2f on average, %d at most (%d queries)\n", rep.RangesPerQuery, rep.RangesMax, rep.RangeQueries)
	}
	for _, o := range rep.Ops {
		if o.FirstError != "" {
			fmt.Fprintf(w, "first %s error: %s\n", o.Op, o.FirstError)
		}
	}
	fmt.Fprintln(w, "\nverdict:")
	for _, s := range rep.Verdict {
		fmt.Fprintln(w, "  - "+s)
	}
}
