package load

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
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
	Conn, CompareConn     string // connection strings; CompareConn empty without --compare
	Label, CompareLabel   string
	PID, ComparePID       int
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
	fs.BoolVar(&c.List, "list", false, "list the workloads and exit")
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
	if c.List {
		return nil
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
	if c.Conn == "" {
		bad("--conn is required")
	} else if c.conn, err = parseLoopbackConn(c.Conn); err != nil {
		bad("--conn: %w", err)
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
	if c.PID < 0 || c.ComparePID < 0 {
		bad("--pid and --compare-pid must be positive")
	}
	if c.workloads, err = selectWorkloads(c.WorkloadList); err != nil {
		bad("--workloads: %w", err)
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
		if w.layout != layoutEmpty && c.Preload < 1 {
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
