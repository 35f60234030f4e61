package load

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// resultTable prints the readable results one row at a time, so a long run shows each
// workload's results as it finishes. The text columns are as wide as the longest workload
// and target names, known before the first row; the numeric columns are wide enough for
// any plausible value, and right-aligned under right-aligned headings.
type resultTable struct {
	w            io.Writer
	wlW, targetW int
}

var resultColumns = []struct {
	head  string
	width int
}{
	{"conc", 4}, {"ops", 10}, {"errors", 7}, {"secs", 8}, {"ops/s", 10}, {"entities/s", 11},
	{"p50 ms", 9}, {"p99 ms", 9}, {"srv cpu", 8}, {"ops/cpu-s", 10}, {"MB/s", 8},
}

func newResultTable(w io.Writer, workloads, targets []string) *resultTable {
	t := &resultTable{w: w, wlW: len("workload"), targetW: len("target")}
	for _, n := range workloads {
		t.wlW = max(t.wlW, len(n))
	}
	for _, n := range targets {
		t.targetW = max(t.targetW, len(n))
	}
	return t
}

func (t *resultTable) header() {
	fmt.Fprintf(t.w, "%-*s  %-*s", t.wlW, "workload", t.targetW, "target")
	for _, c := range resultColumns {
		fmt.Fprintf(t.w, " %*s", c.width, c.head)
	}
	fmt.Fprintln(t.w)
}

func (t *resultTable) row(r *Result) {
	fmt.Fprintf(t.w, "%-*s  %-*s", t.wlW, r.Workload, t.targetW, r.Target)
	if r.FailedToRun != "" {
		fmt.Fprintf(t.w, " %*d  failed: %s\n", resultColumns[0].width, r.Concurrency, r.FailedToRun)
		return
	}
	cells := []string{
		strconv.Itoa(r.Concurrency), strconv.FormatInt(r.Ops, 10), strconv.FormatInt(r.Errors, 10),
		strconv.FormatFloat(r.Seconds, 'f', 2, 64), strconv.FormatFloat(r.OpsPerSec, 'f', 1, 64),
		strconv.FormatFloat(r.EntsPerSec, 'f', 1, 64), strconv.FormatFloat(r.P50Ms, 'f', 3, 64),
		strconv.FormatFloat(r.P99Ms, 'f', 3, 64), optFloat(r.ServerCPU, 2), optFloat(r.OpsPerCPUSec, 1), "-",
	}
	if r.BlobSize > 0 {
		cells[len(cells)-1] = strconv.FormatFloat(r.MBPerSec, 'f', 1, 64)
	}
	for i, c := range cells {
		fmt.Fprintf(t.w, " %*s", resultColumns[i].width, c)
	}
	var notes []string
	if r.Interrupted {
		notes = append(notes, "interrupted")
	}
	if r.Aborted {
		notes = append(notes, "stopped by --max-errors")
	}
	if len(notes) > 0 {
		fmt.Fprintf(t.w, "  (%s)", strings.Join(notes, ", "))
	}
	fmt.Fprintln(t.w)
	if r.FirstError != "" {
		fmt.Fprintf(t.w, "%-*s  %-*s first error: %s\n", t.wlW, "", t.targetW, "", r.FirstError)
	}
}

func (t *resultTable) ratios(a, b string, rs []Ratio) {
	fmt.Fprintf(t.w, "\nratios %s/%s (throughput > 1 means %s is faster; latency < 1 means %s is faster)\n", a, b, a, a)
	fmt.Fprintf(t.w, "%-*s %4s %10s %8s %8s %10s\n", t.wlW, "workload", "conc", "ops/s", "p50", "p99", "ops/cpu-s")
	for _, r := range rs {
		fmt.Fprintf(t.w, "%-*s %4d %10s %8s %8s %10s\n", t.wlW, r.Workload, r.Concurrency,
			optFloat(r.OpsPerSec, 3), optFloat(r.P50, 3), optFloat(r.P99, 3), optFloat(r.OpsPerCPUSec, 3))
	}
}

func optFloat(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

// jsonLine writes v as one JSON line.
func jsonLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}
