package load

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"os"
	"time"
)

// Main runs `tablo bench` with args (without the "bench" word itself):
//
//	tablo bench --conn CONN [--compare CONN2] [flags]   run the workloads
//	tablo bench --null-server ADDR                      serve canned Table responses
//	tablo bench null-server [--addr ADDR] [flags]       the same, with null-server flags
//	tablo bench report [--ceiling L] [--ratio A/B] FILE...   markdown tables from JSON lines
//
// It returns flag.ErrHelp after printing usage for -h.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "null-server":
			return mainNullServer(ctx, args[1:], stdout, stderr)
		case "report":
			return mainReport(args[1:], stdout, stderr)
		}
	}
	cfg, err := parseBenchFlags(args, stderr)
	if err != nil {
		return err
	}
	switch {
	case cfg.List:
		for _, w := range cfg.workloads {
			fmt.Fprintf(stdout, "%-15s %s\n", w.name, w.summary)
		}
		return nil
	case cfg.wantsNull:
		return serveNull(ctx, cfg.NullServerAddr, NullConfig{EntitySize: cfg.EntitySize}, cfg.NullLifetime, stdout)
	}
	return runBench(ctx, cfg, stdout, stderr)
}

func mainNullServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tablo bench null-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:10202", "listen address")
	var nc NullConfig
	fs.IntVar(&nc.EntitySize, "entity-size", 256, "length of the Data property of canned entities")
	fs.IntVar(&nc.Pages, "pages", 3, "pages a query with $top returns before its continuation ends (1-1000)")
	fs.IntVar(&nc.ScanSize, "scan-size", 100, "entities a query without $top returns, in one page (1-1000)")
	lifetime := fs.Duration("lifetime", 30*time.Minute, "stop after this long (at most 24h)")
	fs.StringVar(&nc.BlobAddr, "blob-addr", "", "also answer the Blob workloads' requests on this address (path style)")
	fs.IntVar(&nc.ListBlobs, "list-blobs", 100000, "blobs a container listing on --blob-addr returns (1-5000000)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if nc.EntitySize < 0 || nc.EntitySize > maxDataSize {
		errs = append(errs, fmt.Errorf("--entity-size must be between 0 and %d", maxDataSize))
	}
	if nc.Pages < 1 || nc.Pages > 1000 || nc.ScanSize < 1 || nc.ScanSize > maxPageSize {
		errs = append(errs, errors.New("--pages and --scan-size must be between 1 and 1000"))
	}
	if nc.ListBlobs < 1 || nc.ListBlobs > maxNullList {
		errs = append(errs, fmt.Errorf("--list-blobs must be between 1 and %d", maxNullList))
	}
	if *lifetime <= 0 || *lifetime > 24*time.Hour {
		errs = append(errs, errors.New("--lifetime must be between 0 and 24h"))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return serveNull(ctx, *addr, nc, *lifetime, stdout)
}

func serveNull(ctx context.Context, addr string, nc NullConfig, lifetime time.Duration, stdout io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("null server: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, lifetime)
	defer cancel()
	if nc.BlobAddr == "" {
		fmt.Fprintf(stdout, "null server listening on %s (stops after %v)\n", ln.Addr(), lifetime)
		return NullServer(ctx, ln, nc)
	}
	bln, err := net.Listen("tcp", nc.BlobAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("null server: blob: %w", err)
	}
	fmt.Fprintf(stdout, "null server listening on %s, Blob on %s (stops after %v)\n", ln.Addr(), bln.Addr(), lifetime)
	blobDone := make(chan error, 1)
	go func() {
		err := NullBlobServer(ctx, bln, nc.ListBlobs)
		cancel() // one listener failing stops the other
		blobDone <- err
	}()
	err = NullServer(ctx, ln, nc)
	cancel()
	return errors.Join(err, <-blobDone)
}

// ErrInterrupted is returned when Ctrl-C (ctx) cut the run short; the results so far have
// been printed.
var ErrInterrupted = errors.New("bench interrupted; results so far are above")

// runBench runs every selected workload on every target and prints the results. Each error
// is printed once, in the table; the returned error only summarises.
func runBench(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	var targets []*target
	if cfg.Conn == "" { // --disk-dir alone
		targets = append(targets, &target{label: cfg.Label, pid: cfg.PID, diskDir: cfg.DiskDir})
	} else {
		targets = append(targets, &target{label: cfg.Label, conn: cfg.conn, pid: cfg.PID, alsoPID: cfg.AlsoPID, dbPID: cfg.DBPID})
	}
	if cfg.hasCompare {
		targets = append(targets, &target{label: cfg.CompareLabel, conn: cfg.compareConn, pid: cfg.ComparePID, dbPID: cfg.CompareDBPID})
	}
	// Ceilings run in the same rounds, after the endpoints under test.
	if cfg.CeilingConn != "" {
		targets = append(targets, &target{label: cfg.CeilingLabel, conn: cfg.ceilingConn, pid: cfg.CeilingPID, ceiling: true})
	}
	if cfg.DiskDir != "" && cfg.Conn != "" {
		targets = append(targets, &target{label: "disk", diskDir: cfg.DiskDir, ceiling: true})
	}
	for _, t := range targets {
		if t.diskDir != "" {
			continue
		}
		svc, err := newServiceClient(t.conn, cfg.Concurrency)
		if err != nil {
			return fmt.Errorf("%s: %w", t.label, err)
		}
		t.svc = svc
	}
	if cfg.AlsoConn != "" {
		also, err := newServiceClient(cfg.alsoConn, cfg.Concurrency)
		if err != nil {
			return fmt.Errorf("--also: %w", err)
		}
		targets[0].also = also
	}

	out := stdout
	var jsonOut io.Writer
	switch cfg.JSONPath {
	case "":
	case "-":
		jsonOut, out = stdout, io.Discard
	default:
		f, err := os.OpenFile(cfg.JSONPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("json output: %w", err)
		}
		defer f.Close()
		jsonOut = f
	}

	var prog *progress
	if isTerminal(stderr) {
		prog = startProgress(stderr)
		defer prog.stop()
	}

	names := []string{"preload"}
	for _, wl := range cfg.workloads {
		names = append(names, wl.name)
	}
	var labels []string
	for _, t := range targets {
		labels = append(labels, t.label)
	}
	table := newResultTable(out, names, labels)
	emit := func(r *Result) error {
		table.row(r)
		if jsonOut == nil {
			return nil
		}
		return jsonLine(jsonOut, r)
	}

	table.header()
	if cfg.Table != "" && !cfg.SkipPreload {
		for _, t := range targets {
			if t.diskDir != "" {
				continue
			}
			r := &Result{Target: t.label, Endpoint: t.conn.Endpoint, Workload: "preload",
				Concurrency: preloadWorkers(cfg), EntitySize: cfg.EntitySize, Preload: cfg.Preload,
				UniqueData: cfg.UniqueData, ServerPID: t.pid, hasDB: t.dbPID != 0}
			p, err := loadNamedTable(ctx, cfg, t, prog)
			if ctx.Err() != nil {
				if p.elapsed > 0 {
					r.add(p)
					r.Interrupted = true
					r.finish()
					if err := emit(r); err != nil {
						return err
					}
				}
				return ErrInterrupted
			}
			if err != nil {
				return fmt.Errorf("%s: table %s: %w", t.label, cfg.Table, err)
			}
			r.add(p)
			r.finish()
			if err := emit(r); err != nil {
				return err
			}
		}
		if cfg.PreloadOnly {
			return nil
		}
	}
	var ratios []Ratio
	failed, interrupted := 0, false
	for _, wl := range cfg.workloads {
		results := make([]*Result, len(targets))
		for i, t := range targets {
			results[i] = &Result{Target: t.label, Endpoint: t.conn.Endpoint, Workload: wl.name,
				Concurrency: cfg.Concurrency, EntitySize: cfg.EntitySize, Preload: cfg.Preload,
				UniqueData: cfg.UniqueData, ServerPID: t.pid, hasDB: t.dbPID != 0, BlobSize: wl.size}
			switch {
			case wl.blob:
				results[i].EntitySize, results[i].Preload, results[i].UniqueData = 0, 0, false
				if wl.name == "blob-list" {
					results[i].Preload = cfg.ListPreload
				}
			case wl.layout == layoutEmpty:
				results[i].Preload, results[i].UniqueData = 0, false
			}
		}
	rounds:
		for round := range cfg.Rounds {
			seed := workloadSeed(cfg.Seed, wl.name, round)
			for k := range targets {
				i := k
				if round%2 == 1 { // alternate which endpoint goes first
					i = len(targets) - 1 - k
				}
				if results[i].FailedToRun != "" || targets[i].diskDir != "" && !wl.upload {
					continue // the disk ceiling exists only for uploads
				}
				p, err := runWorkload(ctx, cfg, targets[i], wl, seed, prog)
				if ctx.Err() != nil {
					// Ctrl-C: keep what was measured, print it, run nothing more.
					if p.elapsed > 0 {
						results[i].add(p)
						results[i].Interrupted = true
					}
					interrupted = true
					break rounds
				}
				if err != nil && p.elapsed == 0 {
					results[i].FailedToRun = err.Error()
					continue
				}
				if err != nil && p.firstErr == "" {
					p.firstErr = err.Error()
				}
				results[i].add(p)
			}
		}
		for _, r := range results {
			if r.measuredPhases == 0 && r.FailedToRun == "" {
				continue // interrupted before it ran
			}
			r.finish()
			if r.FailedToRun != "" || r.Errors > 0 || r.FirstError != "" {
				failed++
			}
			if err := emit(r); err != nil {
				return err
			}
		}
		if cfg.hasCompare && results[0].FailedToRun == "" && results[1].FailedToRun == "" &&
			results[0].measuredPhases > 0 && results[1].measuredPhases > 0 {
			rt := newRatio(results[0], results[1])
			ratios = append(ratios, rt)
			if jsonOut != nil {
				if err := jsonLine(jsonOut, rt); err != nil {
					return err
				}
			}
		}
		if interrupted {
			break
		}
	}
	if len(ratios) > 0 {
		table.ratios(targets[0].label, targets[1].label, ratios)
	}
	switch {
	case interrupted:
		return ErrInterrupted
	case failed > 0:
		return fmt.Errorf("bench: %d results had errors (each is shown once in the table above)", failed)
	}
	return nil
}

// workloadSeed gives both targets of one round the same key sequence.
func workloadSeed(base uint64, name string, round int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name)) // hash writes cannot fail
	return base ^ h.Sum64() + uint64(round)
}
