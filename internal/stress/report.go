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

// PartsReport is the per-partition throughput: the busiest partitions by name, the rest as
// one summary (a design with unique keys has as many partitions as entities, each of them
// idle), and the key-order view, which is what decides such a design's fate: range partitions
// hold consecutive keys, so where in the key order the writes land matters more than how many
// partitions they spread over.
type PartsReport struct {
	Distinct int64 `json:"distinct"`
	// Entities is every entity the measured phase read or wrote, attributed to partitions.
	Entities int64          `json:"entities"`
	Busiest  []PartitionRow `json:"busiest"`
	// BusiestShare is the busiest partitions' share of Entities.
	BusiestShare float64     `json:"busiestShare"`
	Tail         *TailReport `json:"tail,omitempty"`
	// KeyRanges cuts the distinct PartitionKeys, in key order, into slices of equal count.
	KeyRanges []KeyRangeRow `json:"keyRanges,omitempty"`
	// Inserts of the measured phase (those with keys written 0.2 s before them to compare
	// with), and the shares of them whose PartitionKey was above (Appends) or below
	// (Prepends) every key written 0.2 s before.
	Inserts  int64   `json:"inserts"`
	Appends  float64 `json:"appendShare"`
	Prepends float64 `json:"prependShare"`
	// Recent is how many of the latest writes KeyRanges' recent shares count.
	Recent int `json:"recentWrites"`
}

// TailReport summarises the partitions not listed among the busiest.
type TailReport struct {
	Partitions int64   `json:"partitions"`
	Entities   int64   `json:"entities"`
	Share      float64 `json:"share"`
	// MaxEntitiesPerSec is the busiest of them; MeanEntitiesPerSec their mean.
	MaxEntitiesPerSec  float64 `json:"maxEntitiesPerSec"`
	MeanEntitiesPerSec float64 `json:"meanEntitiesPerSec"`
}

// KeyRangeRow is one slice of the key order: PartitionKeys From..To (inclusive), their share of
// the load over the run, and their share of the most recent writes (Recent, the last
// sixteenth of the run's inserts): an append-only design puts them all in the last slice.
type KeyRangeRow struct {
	From       string  `json:"from"`
	To         string  `json:"to"`
	Partitions int     `json:"partitions"`
	Entities   int64   `json:"entities"`
	Share      float64 `json:"share"`
	Recent     float64 `json:"recentShare"`
}

const (
	busiestRows = 5
	keySlices   = 8
)

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
	rep.Partitions = r.partitions(secs, rep.Target)
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

// partitions summarises the load per partition over secs seconds.
func (r *run) partitions(secs float64, target int) PartsReport {
	r.partsMu.Lock()
	defer r.partsMu.Unlock()
	p := PartsReport{Distinct: int64(len(r.parts)), Inserts: r.inserts}
	if r.inserts > 0 {
		p.Appends = float64(r.appends) / float64(r.inserts)
		p.Prepends = float64(r.prepends) / float64(r.inserts)
	}
	rows := make([]PartitionRow, 0, len(r.parts))
	p.Entities = r.others
	for k, n := range r.parts {
		rate := float64(n) / secs
		rows = append(rows, PartitionRow{k, n, rate, rate / float64(target)})
		p.Entities += n
	}
	if p.Entities == 0 {
		return p
	}
	share := func(n int64) float64 { return float64(n) / float64(p.Entities) }
	// The key-order slices, from the keys sorted by name.
	slices.SortFunc(rows, func(a, b PartitionRow) int { return strings.Compare(a.Key, b.Key) })
	n := min(len(rows), keySlices)
	var bounds []string // each slice's first key
	for i := range n {
		lo, hi := i*len(rows)/n, (i+1)*len(rows)/n
		kr := KeyRangeRow{From: rows[lo].Key, To: rows[hi-1].Key, Partitions: hi - lo}
		for _, row := range rows[lo:hi] {
			kr.Entities += row.Entities
		}
		kr.Share = share(kr.Entities)
		p.KeyRanges = append(p.KeyRanges, kr)
		bounds = append(bounds, kr.From)
	}
	// The most recent writes: the last sixteenth of the run's inserts (at most the ring).
	r.knownMu.Lock()
	recentN := min(r.knownN, knownKeys, max(1, int(r.inserts)/(2*keySlices)))
	p.Recent = recentN
	for j := range recentN {
		k := r.known[(r.knownN-1-j)%knownKeys]
		i, found := slices.BinarySearch(bounds, k[0])
		if !found {
			i--
		}
		if i >= 0 {
			p.KeyRanges[i].Recent += 1 / float64(recentN)
		}
	}
	r.knownMu.Unlock()
	// The busiest partitions by name, and the rest in one line.
	slices.SortFunc(rows, func(a, b PartitionRow) int {
		return cmp.Or(cmp.Compare(b.EntitiesPerSec, a.EntitiesPerSec), strings.Compare(a.Key, b.Key))
	})
	top := rows[:min(len(rows), busiestRows)]
	p.Busiest = top
	var topN int64
	for _, row := range top {
		topN += row.Entities
	}
	p.BusiestShare = share(topN)
	if rest := rows[len(top):]; len(rest) > 0 || r.others > 0 {
		t := &TailReport{Partitions: int64(len(rest)), Entities: p.Entities - topN}
		if len(rest) > 0 {
			t.MaxEntitiesPerSec = rest[0].EntitiesPerSec
		}
		if r.others > 0 {
			t.Partitions++ // at least one more, uncounted by name
		}
		t.Share = share(t.Entities)
		t.MeanEntitiesPerSec = float64(t.Entities) / secs / float64(t.Partitions)
		p.Tail = t
	}
	return p
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
	} else if p := rep.Partitions; p.Tail != nil && p.Tail.Share > 0.5 && p.Entities < 10*p.Distinct {
		// Keys (nearly) unique to each write: GUIDs, sequence numbers, timestamps.
		v = append(v, fmt.Sprintf("%d partitions share the load thinly: the busiest %d took %.1f%% of it, the other %d at most %.1f entities/s each; no partition is near the %d entities/s target, so what limits this design is how its keys fall into range partitions.",
			p.Distinct, len(p.Busiest), 100*p.BusiestShare, p.Tail.Partitions, p.Tail.MaxEntitiesPerSec, rep.Target))
	} else if rep.Partitions.Distinct > 0 {
		v = append(v, fmt.Sprintf("%d partitions; the busiest ran at %.1f entities/s (%.0f%% of the %d entities/s target).",
			rep.Partitions.Distinct, busiest.EntitiesPerSec, 100*busiest.OfTarget, rep.Target))
	}
	v = append(v, rep.keyOrderVerdict()...)
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

// keyOrderVerdict says what the key order of the inserts means for range partitions.
func (rep *Report) keyOrderVerdict() []string {
	p := rep.Partitions
	if p.Inserts < 20 { // too few to judge
		return nil
	}
	last, first := 0.0, 0.0
	if n := len(p.KeyRanges); n > 1 {
		last, first = p.KeyRanges[n-1].Recent, p.KeyRanges[0].Recent
	}
	switch {
	case p.Appends > 0.5:
		return []string{fmt.Sprintf("%.0f%% of inserts went above every PartitionKey written 0.2 s before, and the last key-order slice took %.0f%% of the most recent writes: they all land in the last range partition, whatever the splits.",
			100*p.Appends, 100*last)}
	case p.Prepends > 0.5:
		return []string{fmt.Sprintf("%.0f%% of inserts went below every PartitionKey written 0.2 s before, and the first key-order slice took %.0f%% of the most recent writes: they all land in the first range partition, whatever the splits.",
			100*p.Prepends, 100*first)}
	case len(p.KeyRanges) == keySlices && p.Appends+p.Prepends < 0.1:
		return []string{fmt.Sprintf("inserts land all over the key order (%.1f%% above and %.1f%% below every earlier key): each range partition takes its share, so splits spread the load.",
			100*p.Appends, 100*p.Prepends)}
	}
	return nil
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
	ps := rep.Partitions
	fmt.Fprintf(w, "\npartitions: %d distinct, %d entities; the busiest (%.1f%% of the load) against the %d entities/s target:\n",
		ps.Distinct, ps.Entities, 100*ps.BusiestShare, rep.Target)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, p := range ps.Busiest {
		fmt.Fprintf(tw, "  %s\t%d entities\t%.1f entities/s\t%.0f%%\t\n", p.Key, p.Entities, p.EntitiesPerSec, 100*p.OfTarget)
	}
	tw.Flush()
	if t := ps.Tail; t != nil {
		fmt.Fprintf(w, "  the other %d: %d entities (%.1f%% of the load), at most %.1f entities/s each, %.2f on average\n",
			t.Partitions, t.Entities, 100*t.Share, t.MaxEntitiesPerSec, t.MeanEntitiesPerSec)
	}
	if len(ps.KeyRanges) > 1 {
		fmt.Fprintf(w, "key order (the distinct PartitionKeys in %d slices; recent: share of the last %d writes):\n", len(ps.KeyRanges), ps.Recent)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  from\tto\tkeys\tentities\tshare\trecent")
		for _, k := range ps.KeyRanges {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%.1f%%\t%.1f%%\n", k.From, k.To, k.Partitions, k.Entities, 100*k.Share, 100*k.Recent)
		}
		tw.Flush()
	}
	if ps.Inserts > 0 {
		fmt.Fprintf(w, "inserts above every key written 0.2 s before: %.1f%%; below: %.1f%%\n", 100*ps.Appends, 100*ps.Prepends)
	}
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
