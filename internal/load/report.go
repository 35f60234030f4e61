package load

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// maxJSONLine bounds one line of a results file.
const maxJSONLine = 1 << 20

// ReportOptions says how to lay out the markdown report.
type ReportOptions struct {
	// Ceiling is the label of the null-server results, or several comma-separated ceilings
	// (null,disk); throughput is shown as a fraction of the lowest one measured for the row.
	Ceiling string
	RatioA  string // with RatioB: add A/B columns (throughput and ops per server CPU-second)
	RatioB  string
	// More are further A/B pairs, each adding its columns after RatioA/RatioB's.
	More [][2]string
}

func mainReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tablo bench report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opt ReportOptions
	fs.StringVar(&opt.Ceiling, "ceiling", "", "label of the null-server results, or comma-separated ceiling labels (throughput is shown as a fraction of the lowest)")
	ratio := fs.String("ratio", "", "A/B[,C/D...]: add columns comparing labels A and B (and C and D, ...)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ratio != "" {
		for i, pair := range strings.Split(*ratio, ",") {
			a, b, ok := strings.Cut(pair, "/")
			if !ok || a == "" || b == "" {
				return fmt.Errorf("--ratio %q: want A/B[,C/D...]", *ratio)
			}
			if i == 0 {
				opt.RatioA, opt.RatioB = a, b
			} else {
				opt.More = append(opt.More, [2]string{a, b})
			}
		}
	}
	if fs.NArg() == 0 {
		return errors.New("report: give one or more JSON-lines files")
	}
	var all []Result
	for _, path := range fs.Args() {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		rs, err := ReadResults(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("report: %s: %w", path, err)
		}
		all = append(all, rs...)
	}
	return WriteReport(stdout, all, opt)
}

// ReadResults reads the "result" lines of a JSON-lines file; other kinds are skipped.
func ReadResults(r io.Reader) ([]Result, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxJSONLine)
	var out []Result
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var res Result
		if err := json.Unmarshal(b, &res); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if res.Kind == "result" {
			out = append(out, res)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	return out, nil
}

// reportKey identifies one row of the report.
type reportKey struct {
	workload    string
	concurrency int
}

// WriteReport renders results as markdown tables: throughput (with the ceiling fraction),
// latency, and server efficiency. A later result for the same target, workload and concurrency
// replaces an earlier one.
func WriteReport(w io.Writer, results []Result, opt ReportOptions) error {
	var labels []string
	byKey := make(map[reportKey]map[string]*Result)
	var keys []reportKey
	for i := range results {
		r := &results[i]
		if r.FailedToRun != "" {
			continue
		}
		k := reportKey{r.Workload, r.Concurrency}
		if byKey[k] == nil {
			byKey[k] = make(map[string]*Result)
			keys = append(keys, k)
		}
		byKey[k][r.Target] = r
		if !slices.Contains(labels, r.Target) {
			labels = append(labels, r.Target)
		}
	}
	if len(keys) == 0 {
		return errors.New("report: no results")
	}
	// The ceilings go first; rows follow the bench's workload order, then concurrency.
	var ceilings []string
	if opt.Ceiling != "" {
		ceilings = strings.Split(opt.Ceiling, ",")
	}
	for j := len(ceilings) - 1; j >= 0; j-- {
		if i := slices.Index(labels, ceilings[j]); i > 0 {
			labels = append([]string{ceilings[j]}, slices.Delete(labels, i, i+1)...)
		}
	}
	order := make(map[string]int)
	blobRows := false
	for i, wl := range allWorkloads() {
		order[wl.name] = i
	}
	for _, k := range keys {
		blobRows = blobRows || strings.HasPrefix(k.workload, "blob-")
	}
	// throughput is MB/s for a blob transfer of 1 MiB or more, operations/s otherwise (a
	// 1 KiB blob's cost is per operation).
	throughput := func(r *Result) float64 {
		if r.BlobSize >= 1<<20 {
			return r.MBPerSec
		}
		return r.OpsPerSec
	}
	// lowestCeiling is the lowest ceiling measured for row k (0: none).
	lowestCeiling := func(k reportKey) float64 {
		low := 0.0
		for _, c := range ceilings {
			if r := byKey[k][c]; r != nil && throughput(r) > 0 && (low == 0 || throughput(r) < low) {
				low = throughput(r)
			}
		}
		return low
	}
	slices.SortStableFunc(keys, func(a, b reportKey) int {
		return cmp.Or(cmp.Compare(order[a.workload], order[b.workload]), cmp.Compare(a.concurrency, b.concurrency))
	})
	ratio := opt.RatioA != "" && opt.RatioB != ""
	var pairs [][2]string
	if ratio {
		pairs = append([][2]string{{opt.RatioA, opt.RatioB}}, opt.More...)
	}

	var b strings.Builder
	// Throughput.
	b.WriteString("### Throughput (operations/s")
	if blobRows {
		b.WriteString("; MB/s for blob uploads and downloads of 1 MiB and more")
	}
	switch {
	case len(ceilings) == 1:
		b.WriteString("; in parentheses the fraction of the " + opt.Ceiling + " ceiling")
	case len(ceilings) > 1:
		b.WriteString("; in parentheses the fraction of the lower of the " + strings.Join(ceilings, " and ") + " ceilings")
	}
	b.WriteString(")\n\n")
	head := []string{"workload", "conc"}
	head = append(head, labels...)
	if ratio {
		for _, p := range pairs {
			head = append(head, p[0]+"/"+p[1])
		}
	}
	writeMDRow(&b, head)
	writeMDSep(&b, len(head))
	for _, k := range keys {
		row := []string{k.workload, strconv.Itoa(k.concurrency)}
		ceil := lowestCeiling(k)
		for _, l := range labels {
			r := byKey[k][l]
			switch {
			case r == nil:
				row = append(row, "-")
			case ceil > 0 && !slices.Contains(ceilings, l):
				row = append(row, fmt.Sprintf("%.0f (%.2f)", throughput(r), throughput(r)/ceil))
			default:
				row = append(row, fmt.Sprintf("%.0f", throughput(r)))
			}
		}
		if ratio {
			for _, p := range pairs {
				row = append(row, ratioCell(byKey[k][p[0]], byKey[k][p[1]], func(r *Result) *float64 { return &r.OpsPerSec }))
			}
		}
		writeMDRow(&b, row)
	}

	// Entities per second (differs from ops/s for batch, paging, scans and range reads).
	b.WriteString("\n### Entities/s\n\n")
	head = append([]string{"workload", "conc"}, labels...)
	writeMDRow(&b, head)
	writeMDSep(&b, len(head))
	for _, k := range keys {
		row := []string{k.workload, strconv.Itoa(k.concurrency)}
		for _, l := range labels {
			if r := byKey[k][l]; r != nil {
				row = append(row, fmt.Sprintf("%.0f", r.EntsPerSec))
			} else {
				row = append(row, "-")
			}
		}
		writeMDRow(&b, row)
	}

	// Latency.
	b.WriteString("\n### Latency p50 / p99 (ms), errors\n\n")
	writeMDRow(&b, head)
	writeMDSep(&b, len(head))
	for _, k := range keys {
		row := []string{k.workload, strconv.Itoa(k.concurrency)}
		for _, l := range labels {
			r := byKey[k][l]
			switch {
			case r == nil:
				row = append(row, "-")
			case r.Errors > 0:
				row = append(row, fmt.Sprintf("%.2f / %.2f, %d errors", r.P50Ms, r.P99Ms, r.Errors))
			default:
				row = append(row, fmt.Sprintf("%.2f / %.2f", r.P50Ms, r.P99Ms))
			}
		}
		writeMDRow(&b, row)
	}

	// Server efficiency, for labels that have CPU data.
	var cpuLabels []string
	for _, l := range labels {
		for _, k := range keys {
			if r := byKey[k][l]; r != nil && r.OpsPerCPUSec != nil {
				cpuLabels = append(cpuLabels, l)
				break
			}
		}
	}
	if len(cpuLabels) > 0 {
		b.WriteString("\n### Server efficiency (operations per server CPU-second; entities per CPU-second in parentheses)\n\n")
		head = append([]string{"workload", "conc"}, cpuLabels...)
		if ratio {
			for _, p := range pairs {
				head = append(head, p[0]+"/"+p[1])
			}
		}
		writeMDRow(&b, head)
		writeMDSep(&b, len(head))
		for _, k := range keys {
			row := []string{k.workload, strconv.Itoa(k.concurrency)}
			for _, l := range cpuLabels {
				if r := byKey[k][l]; r != nil && r.OpsPerCPUSec != nil {
					cell := fmt.Sprintf("%.0f (%.0f)", *r.OpsPerCPUSec, *r.EntsPerCPUSec)
					if r.DBCPU != nil && r.ServerCPU != nil && *r.ServerCPU > 0 {
						// The database's share of the CPU (--db-pid), so the front end's is the rest.
						cell += fmt.Sprintf(", db %.0f%%", 100**r.DBCPU / *r.ServerCPU)
					}
					row = append(row, cell)
				} else {
					row = append(row, "-")
				}
			}
			if ratio {
				for _, p := range pairs {
					row = append(row, ratioCell(byKey[k][p[0]], byKey[k][p[1]], func(r *Result) *float64 { return r.OpsPerCPUSec }))
				}
			}
			writeMDRow(&b, row)
		}
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

func ratioCell(a, b *Result, get func(*Result) *float64) string {
	if a == nil || b == nil {
		return "-"
	}
	va, vb := get(a), get(b)
	if va == nil || vb == nil {
		return "-"
	}
	return optFloat(div(*va, *vb), 2)
}

func writeMDRow(b *strings.Builder, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + strings.ReplaceAll(c, "|", `\|`) + " |")
	}
	b.WriteString("\n")
}

func writeMDSep(b *strings.Builder, n int) {
	b.WriteString("|")
	for range n {
		b.WriteString("---|")
	}
	b.WriteString("\n")
}
