package load

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// tableHeader and tableRow print the readable results table one row at a time, so a long run
// shows results as each workload finishes.
func tableHeader(w io.Writer) {
	fmt.Fprintf(w, "%-15s %-10s %4s %9s %6s %7s %10s %11s %8s %8s %8s %11s\n",
		"workload", "target", "conc", "ops", "errors", "secs", "ops/s", "entities/s", "p50 ms", "p99 ms", "srv cpu", "ops/cpu-s")
}

func tableRow(w io.Writer, r *Result) {
	if r.FailedToRun != "" {
		fmt.Fprintf(w, "%-15s %-10s %4d  failed: %s\n", r.Workload, r.Target, r.Concurrency, r.FailedToRun)
		return
	}
	fmt.Fprintf(w, "%-15s %-10s %4d %9d %6d %7.2f %10.1f %11.1f %8.3f %8.3f %8s %11s\n",
		r.Workload, r.Target, r.Concurrency, r.Ops, r.Errors, r.Seconds, r.OpsPerSec, r.EntsPerSec,
		r.P50Ms, r.P99Ms, optFloat(r.ServerCPU, 2), optFloat(r.OpsPerCPUSec, 1))
	if r.FirstError != "" {
		fmt.Fprintf(w, "%-15s %-10s      first error: %s\n", "", "", r.FirstError)
	}
}

func ratioHeader(w io.Writer, a, b string) {
	fmt.Fprintf(w, "\nratios %s/%s (throughput > 1 means %s is faster; latency < 1 means %s is faster)\n", a, b, a, a)
	fmt.Fprintf(w, "%-15s %4s %10s %8s %8s %11s\n", "workload", "conc", "ops/s", "p50", "p99", "ops/cpu-s")
}

func ratioRow(w io.Writer, r Ratio) {
	fmt.Fprintf(w, "%-15s %4d %10s %8s %8s %11s\n", r.Workload, r.Concurrency,
		optFloat(r.OpsPerSec, 3), optFloat(r.P50, 3), optFloat(r.P99, 3), optFloat(r.OpsPerCPUSec, 3))
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
