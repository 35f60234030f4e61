package load

import (
	"time"
)

// Result is one workload's outcome on one target, summed over its rounds. It is also the JSON
// line format ("kind":"result"); `tablo bench report` reads it back.
type Result struct {
	Kind        string  `json:"kind"` // "result"
	Target      string  `json:"target"`
	Endpoint    string  `json:"endpoint"`
	Workload    string  `json:"workload"`
	Concurrency int     `json:"concurrency"`
	EntitySize  int     `json:"entity_size"`
	Preload     int     `json:"preload"`
	UniqueData  bool    `json:"unique_data,omitempty"` // preloaded entities had their own random Data
	Rounds      int     `json:"rounds"`
	Ops         int64   `json:"ops"`
	Entities    int64   `json:"entities"`
	Errors      int64   `json:"errors"`
	Seconds     float64 `json:"seconds"`
	OpsPerSec   float64 `json:"ops_per_s"`
	EntsPerSec  float64 `json:"entities_per_s"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	MeanMs      float64 `json:"mean_ms"`
	MaxMs       float64 `json:"max_ms"`
	ClientCPU   float64 `json:"client_cpu_s"`
	// BlobSize is the bytes one operation of a blob transfer workload moves; MBPerSec is the
	// resulting throughput (10^6 bytes per second).
	BlobSize int64   `json:"blob_size,omitempty"`
	MBPerSec float64 `json:"mb_per_s,omitempty"`
	// Server CPU fields are present only when --pid (or --compare-pid) was given.
	ServerPID    int      `json:"server_pid,omitempty"`
	ServerCPU    *float64 `json:"server_cpu_s,omitempty"`
	OpsPerCPUSec *float64 `json:"ops_per_cpu_s,omitempty"`
	// DBCPU is the part of ServerCPU a database behind the server used (--db-pid).
	DBCPU           *float64 `json:"db_cpu_s,omitempty"`
	EntsPerCPUSec   *float64 `json:"entities_per_cpu_s,omitempty"`
	Aborted         bool     `json:"aborted,omitempty"`     // stopped by --max-errors
	Interrupted     bool     `json:"interrupted,omitempty"` // cut short by Ctrl-C
	FirstError      string   `json:"first_error,omitempty"`
	FailedToRun     string   `json:"failed,omitempty"` // setup failed; no measurement
	measuredPhases  int
	hist            Histogram
	elapsed, srvCPU time.Duration
	dbCPU           time.Duration
	hasDB           bool
	cpuOK           bool
}

// add folds one measured phase into r.
func (r *Result) add(p phase) {
	r.measuredPhases++
	r.hist.Merge(&p.hist)
	r.Ops += p.ops
	r.Entities += p.entities
	r.Errors += p.errors
	r.elapsed += p.elapsed
	r.ClientCPU += p.clientCPU.Seconds()
	if r.measuredPhases == 1 {
		r.cpuOK = p.cpuOK
	} else {
		r.cpuOK = r.cpuOK && p.cpuOK
	}
	r.srvCPU += p.serverCPU
	r.dbCPU += p.dbCPU
	r.Aborted = r.Aborted || p.aborted
	if r.FirstError == "" {
		r.FirstError = p.firstErr
	}
}

// finish computes the derived fields.
func (r *Result) finish() {
	r.Kind = "result"
	r.Rounds = r.measuredPhases
	r.Seconds = r.elapsed.Seconds()
	if r.Seconds > 0 {
		r.OpsPerSec = float64(r.Ops) / r.Seconds
		r.EntsPerSec = float64(r.Entities) / r.Seconds
		r.MBPerSec = float64(r.Ops) * float64(r.BlobSize) / r.Seconds / 1e6
	}
	r.P50Ms = ms(r.hist.Quantile(0.50))
	r.P99Ms = ms(r.hist.Quantile(0.99))
	r.MeanMs = ms(r.hist.Mean())
	r.MaxMs = ms(r.hist.Max())
	r.ServerCPU, r.OpsPerCPUSec, r.EntsPerCPUSec, r.DBCPU = nil, nil, nil, nil
	if r.ServerPID != 0 && r.cpuOK && r.measuredPhases > 0 {
		cpu := r.srvCPU.Seconds()
		r.ServerCPU = &cpu
		if r.hasDB {
			db := r.dbCPU.Seconds()
			r.DBCPU = &db
		}
		if cpu > 0 {
			o, e := float64(r.Ops)/cpu, float64(r.Entities)/cpu
			r.OpsPerCPUSec, r.EntsPerCPUSec = &o, &e
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Ratio compares one workload across the two targets of --compare ("kind":"ratio"); each ratio is
// A/B where A is the primary target and B the --compare target. Missing values are omitted.
type Ratio struct {
	Kind          string   `json:"kind"` // "ratio"
	Workload      string   `json:"workload"`
	Concurrency   int      `json:"concurrency"`
	A             string   `json:"a"`
	B             string   `json:"b"`
	OpsPerSec     *float64 `json:"ops_per_s,omitempty"`
	P50           *float64 `json:"p50,omitempty"`
	P99           *float64 `json:"p99,omitempty"`
	OpsPerCPUSec  *float64 `json:"ops_per_cpu_s,omitempty"`
	EntsPerCPUSec *float64 `json:"entities_per_cpu_s,omitempty"`
}

func newRatio(a, b *Result) Ratio {
	r := Ratio{Kind: "ratio", Workload: a.Workload, Concurrency: a.Concurrency, A: a.Target, B: b.Target}
	r.OpsPerSec = div(a.OpsPerSec, b.OpsPerSec)
	r.P50 = div(a.P50Ms, b.P50Ms)
	r.P99 = div(a.P99Ms, b.P99Ms)
	if a.OpsPerCPUSec != nil && b.OpsPerCPUSec != nil {
		r.OpsPerCPUSec = div(*a.OpsPerCPUSec, *b.OpsPerCPUSec)
		r.EntsPerCPUSec = div(*a.EntsPerCPUSec, *b.EntsPerCPUSec)
	}
	return r
}

// div returns a/b, or nil when the ratio means nothing.
func div(a, b float64) *float64 {
	if b <= 0 || a < 0 {
		return nil
	}
	v := a / b
	return &v
}
