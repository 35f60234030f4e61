package load

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"
)

// Bounds on the flags, so every run ends by itself and stays within Azure's limits.
const (
	maxConcurrency = 1024
	maxDataSize    = 32 * 1024 // a String property holds at most 64 KiB = 32K UTF-16 units
	maxPreload     = 10_000_000
	maxDuration    = time.Hour
	maxRounds      = 100
	maxOpTimeout   = 10 * time.Minute
)

// config is a parsed and validated `tablo bench` command line.
type config struct {
	Conn, CompareConn   string // connection strings; CompareConn empty without --compare
	Label, CompareLabel string
	PID, ComparePID     int
	// AlsoConn is a second front end of the --conn service (same data): workers alternate
	// between the two. AlsoPID is its process, counted as the server's CPU.
	AlsoConn string
	AlsoPID  int
	// DBPID, CompareDBPID: a database's main process behind the target; its CPU and its
	// children's count as the server's, and are also reported on their own (db_cpu_s).
	DBPID, CompareDBPID   int
	alsoConn              ConnInfo
	WorkloadList          string
	Concurrency           int
	EntitySize            int // length of each entity's Data property
	Preload               int
	Ops                   int64 // total operations per workload per target per round; 0 = no count bound
	Duration              time.Duration
	Rounds                int
	OpTimeout             time.Duration
	MaxErrors             int64
	Seed                  uint64
	JSONPath              string // "" = none, "-" = stdout instead of the table
	List                  bool
	NullServerAddr        string
	NullLifetime          time.Duration
	workloads             []workload
	conn, compareConn     ConnInfo
	hasCompare, wantsNull bool

	// Table names one table that every workload uses and that is kept afterwards; "" means a
	// fresh, deleted table per workload. SinglePartition puts every preloaded entity in one
	// partition. PreloadOnly creates and fills Table, then stops; SkipPreload measures a Table
	// an earlier --preload-only run filled with the same --preload and --single-partition.
	Table                    string
	SinglePartition          bool
	PreloadOnly, SkipPreload bool
	UniqueData               bool // each preloaded entity gets its own incompressible Data

	// ListPreload is how many empty blobs blob-list lists. DiskDir makes the run the disk
	// ceiling of the upload workloads instead of driving an endpoint.
	ListPreload int
	DiskDir     string
	payloads    *blobPayloads
	// CeilingConn names a do-nothing endpoint (the null server) measured in the same rounds
	// as the endpoints under test, as is --disk-dir beside --conn: ceilings side by side.
	CeilingConn, CeilingLabel string
	CeilingPID                int
	ceilingConn               ConnInfo
}

// parseBenchFlags parses the bench command line with its own FlagSet.
func parseBenchFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("tablo bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Conn, "conn", "", "connection string of the endpoint under test (loopback only)")
	fs.StringVar(&c.Label, "label", "", "name of the endpoint in results (default host:port)")
	fs.IntVar(&c.PID, "pid", 0, "server process id: report operations per server CPU-second from /proc/<pid>/stat")
	fs.StringVar(&c.CompareConn, "compare", "", "second connection string: run each workload on both, alternating, and print ratios")
	fs.StringVar(&c.CompareLabel, "compare-label", "", "name of the --compare endpoint in results (default host:port)")
	fs.IntVar(&c.ComparePID, "compare-pid", 0, "server process id of the --compare endpoint")
	fs.StringVar(&c.AlsoConn, "also", "", "connection string of a second front end of the --conn service (the same data): workers alternate between the two")
	fs.IntVar(&c.AlsoPID, "also-pid", 0, "process id of the --also front end: its CPU counts as the server's")
	fs.IntVar(&c.DBPID, "db-pid", 0, "main process id of a database behind --conn (e.g. PostgreSQL's postmaster): its CPU and its children's count as the server's and are reported as db_cpu_s")
	fs.IntVar(&c.CompareDBPID, "compare-db-pid", 0, "like --db-pid, for the --compare endpoint")
	fs.StringVar(&c.WorkloadList, "workloads", "all", "comma-separated workloads: "+workloadNames())
	fs.IntVar(&c.Concurrency, "concurrency", 4, "concurrent client workers")
	fs.IntVar(&c.EntitySize, "entity-size", 256, "characters in each entity's Data property (at most 32768)")
	fs.IntVar(&c.Preload, "preload", 10000, "entities loaded before get, upsert, paging, scan and mixed workloads")
	fs.Int64Var(&c.Ops, "ops", 0, "operations per workload and endpoint (0 = bounded by --duration only)")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "time bound per workload and endpoint (0 = bounded by --ops only; at most 1h)")
	fs.IntVar(&c.Rounds, "rounds", 1, "times each workload runs on each endpoint (alternating order with --compare)")
	fs.DurationVar(&c.OpTimeout, "op-timeout", 30*time.Second, "timeout of one operation")
	fs.Int64Var(&c.MaxErrors, "max-errors", 1000, "stop a workload after this many failed operations")
	fs.Uint64Var(&c.Seed, "seed", 1, "random seed for key choice")
	fs.StringVar(&c.JSONPath, "json", "", "append results as JSON lines to this file (- = stdout, replacing the table)")
	fs.StringVar(&c.Table, "table", "", "use this one table for every workload and keep it (only workloads that do not insert new entities)")
	fs.BoolVar(&c.SinglePartition, "single-partition", false, "preload every entity into one partition (get, upsert-merge, filter-scan and mixed then use it)")
	fs.BoolVar(&c.PreloadOnly, "preload-only", false, "with --table: create the table, load --preload entities (reported as workload \"preload\") and stop")
	fs.BoolVar(&c.SkipPreload, "skip-preload", false, "with --table: measure a table an earlier --preload-only run loaded with the same --preload and --single-partition")
	fs.BoolVar(&c.UniqueData, "unique-data", false, "give each preloaded entity its own random Data (barely compressible, like real data) instead of one repeated string")
	fs.IntVar(&c.ListPreload, "list-preload", 100000, "empty blobs loaded before blob-list")
	fs.StringVar(&c.DiskDir, "disk-dir", "", "write and fsync each blob upload's bytes to a file in this directory (the disk ceiling, label \"disk\"): alone, or beside --conn in the same rounds")
	fs.StringVar(&c.CeilingConn, "ceiling", "", "connection string of a do-nothing endpoint (the null server) measured in the same rounds (no ratios)")
	fs.StringVar(&c.CeilingLabel, "ceiling-label", "null", "name of the --ceiling endpoint in results")
	fs.IntVar(&c.CeilingPID, "ceiling-pid", 0, "server process id of the --ceiling endpoint")
	fs.BoolVar(&c.List, "list", false, "list the workloads (those --workloads selects) and exit")
	fs.StringVar(&c.NullServerAddr, "null-server", "", "instead of benchmarking, serve canned Table responses on ADDR")
	fs.DurationVar(&c.NullLifetime, "lifetime", 30*time.Minute, "with --null-server: stop after this long")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return c, c.validate()
}

// validate checks every flag and reports all problems at once.
func (c *config) validate() error {
	c.payloads = &blobPayloads{}
	if c.List {
		var err error
		c.workloads, err = selectWorkloads(c.WorkloadList)
		return err
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.NullServerAddr != "" {
		c.wantsNull = true
		if c.NullLifetime <= 0 || c.NullLifetime > 24*time.Hour {
			bad("--lifetime must be between 0 and 24h")
		}
		if c.EntitySize < 0 || c.EntitySize > maxDataSize {
			bad("--entity-size must be between 0 and %d", maxDataSize)
		}
		return errors.Join(errs...)
	}
	var err error
	if c.DiskDir != "" {
		if st, err := os.Stat(c.DiskDir); err != nil || !st.IsDir() {
			bad("--disk-dir %q: not a directory", c.DiskDir)
		}
	}
	if c.CeilingConn != "" {
		if c.ceilingConn, err = parseLoopbackConn(c.CeilingConn); err != nil {
			bad("--ceiling: %w", err)
		}
		if c.Conn == "" {
			bad("--ceiling needs --conn")
		}
	}
	switch {
	case c.DiskDir != "" && c.Conn == "":
		if c.CompareConn != "" {
			bad("--compare needs --conn")
		}
		if c.Label == "" {
			c.Label = "disk"
		}
	case c.Conn == "":
		bad("--conn is required")
	default:
		if c.conn, err = parseLoopbackConn(c.Conn); err != nil {
			bad("--conn: %w", err)
		}
	}
	if c.CompareConn != "" {
		c.hasCompare = true
		if c.compareConn, err = parseLoopbackConn(c.CompareConn); err != nil {
			bad("--compare: %w", err)
		}
	} else if c.ComparePID != 0 || c.CompareLabel != "" {
		bad("--compare-pid and --compare-label need --compare")
	}
	if c.Label == "" {
		c.Label = hostLabel(c.conn.Endpoint, "A")
	}
	if c.CompareLabel == "" {
		c.CompareLabel = hostLabel(c.compareConn.Endpoint, "B")
	}
	if c.hasCompare && c.Label == c.CompareLabel {
		c.Label, c.CompareLabel = c.Label+"#1", c.CompareLabel+"#2"
	}
	if c.PID < 0 || c.ComparePID < 0 || c.AlsoPID < 0 || c.DBPID < 0 || c.CompareDBPID < 0 {
		bad("process ids must be positive")
	}
	if c.AlsoConn != "" {
		if c.alsoConn, err = parseLoopbackConn(c.AlsoConn); err != nil {
			bad("--also: %w", err)
		}
	} else if c.AlsoPID != 0 {
		bad("--also-pid needs --also")
	}
	if c.CompareDBPID != 0 && !c.hasCompare {
		bad("--compare-db-pid needs --compare")
	}
	if c.workloads, err = selectWorkloads(c.WorkloadList); err != nil {
		bad("--workloads: %w", err)
	}
	errs = append(errs, c.validateTable()...)
	for _, w := range c.workloads {
		if c.DiskDir != "" && c.Conn == "" && !w.upload {
			bad("workload %s: --disk-dir alone measures only the blob upload workloads", w.name)
			break
		}
	}
	if c.ListPreload < 1 || c.ListPreload > maxListPreload {
		bad("--list-preload must be between 1 and %d", maxListPreload)
	}
	if c.Concurrency < 1 || c.Concurrency > maxConcurrency {
		bad("--concurrency must be between 1 and %d", maxConcurrency)
	}
	if c.EntitySize < 0 || c.EntitySize > maxDataSize {
		bad("--entity-size must be between 0 and %d", maxDataSize)
	}
	if c.Preload < 0 || c.Preload > maxPreload {
		bad("--preload must be between 0 and %d", maxPreload)
	}
	for _, w := range c.workloads {
		if (w.layout != layoutEmpty && !w.blob || c.PreloadOnly) && c.Preload < 1 {
			bad("workload %s needs --preload of at least 1", w.name)
			break
		}
	}
	if c.Ops < 0 {
		bad("--ops must not be negative")
	}
	if c.Duration < 0 || c.Duration > maxDuration {
		bad("--duration must be between 0 and %v", maxDuration)
	}
	if c.Ops == 0 && c.Duration == 0 {
		bad("give --ops or --duration (or both): a run must be bounded")
	}
	if c.Rounds < 1 || c.Rounds > maxRounds {
		bad("--rounds must be between 1 and %d", maxRounds)
	}
	if c.OpTimeout <= 0 || c.OpTimeout > maxOpTimeout {
		bad("--op-timeout must be between 0 and %v", maxOpTimeout)
	}
	if c.MaxErrors < 1 {
		bad("--max-errors must be at least 1")
	}
	return errors.Join(errs...)
}

// validateTable checks the named-table flags. A named table has one layout, so every selected
// workload must read that layout; workloads that insert new keys are refused because a kept
// table would make a second run collide with the first.
func (c *config) validateTable() []error {
	var errs []error
	if c.Table == "" {
		if c.PreloadOnly || c.SkipPreload {
			errs = append(errs, errors.New("--preload-only and --skip-preload need --table"))
		}
		return errs
	}
	if !validTableName(c.Table) {
		errs = append(errs, fmt.Errorf("--table %q: want 3-63 letters and digits, starting with a letter", c.Table))
	}
	if c.PreloadOnly && c.SkipPreload {
		errs = append(errs, errors.New("--preload-only and --skip-preload exclude each other"))
	}
	if c.PreloadOnly {
		return errs // no workload runs
	}
	want := c.tableLayout()
	for _, w := range c.workloads {
		switch got := c.layoutOf(w); {
		case w.queue:
			errs = append(errs, fmt.Errorf("workload %s is a Queue workload: not with --table", w.name))
		case w.blob:
			errs = append(errs, fmt.Errorf("workload %s is a Blob workload: not with --table", w.name))
		case got == layoutEmpty:
			errs = append(errs, fmt.Errorf("workload %s inserts new entities: not with --table", w.name))
		case got != want:
			errs = append(errs, fmt.Errorf("workload %s pages one partition: with --table it needs --single-partition", w.name))
		}
	}
	return errs
}

// tableLayout is the layout of a --table table.
func (c *config) tableLayout() layout {
	if c.SinglePartition {
		return layoutPage
	}
	return layoutSpread
}

// layoutOf is the data layout workload w reads: its own, except that --single-partition moves
// the spread workloads into the one partition.
func (c *config) layoutOf(w workload) layout {
	if c.SinglePartition && w.layout == layoutSpread {
		return layoutPage
	}
	return w.layout
}

// validTableName applies Azure's table name rule: ^[A-Za-z][A-Za-z0-9]{2,62}$.
func validTableName(s string) bool {
	if len(s) < 3 || len(s) > 63 {
		return false
	}
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func parseLoopbackConn(s string) (ConnInfo, error) {
	ci, err := ParseConnString(s)
	if err != nil {
		return ConnInfo{}, err
	}
	if err := ci.CheckLoopback(); err != nil {
		return ConnInfo{}, err
	}
	return ci, nil
}

// hostLabel names an endpoint by its host:port.
func hostLabel(endpoint, fallback string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fallback
	}
	return u.Host
}
