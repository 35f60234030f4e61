// Package stress is `tablo stress`: the partition stress test of Azure's table design guide
// as a command. It creates a test table, loads it with entities keyed the way the design
// under test keys them, drives a mix of reads, queries and writes at a target rate or flat
// out with the retry policy of the user's choice, and reports per-partition throughput
// against the 2,000 entities/s partition target, the ServerBusy answers and time-outs seen,
// the retries, latency percentiles, the range partitions queries touched (Tablo names them
// in x-tablo-query-plan) and a plain-language verdict.
package stress

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tablo/tablo/internal/load"
)

// Operation kinds of the mix.
const (
	opInsert = "insert"
	opGet    = "get"
	opUpdate = "update"
	opQuery  = "query"
	opBatch  = "batch"
)

var opNames = []string{opInsert, opGet, opUpdate, opQuery, opBatch}

const (
	batchSize      = 10  // entities per batch operation
	queryTop       = 100 // entities per range query
	knownKeys      = 4096
	maxPartitions  = 100_000 // partitions counted by name; beyond, counted as "others"
	maxDuration    = time.Hour
	defaultTarget  = 2000
	progressPeriod = 500 * time.Millisecond
	keyLag         = 200 * time.Millisecond // see noteKeyOrder
	timelineSecs   = 2 * 3600               // seconds of the timeline (the duration, and retries after it)
)

// Config is a parsed `tablo stress` command line.
type Config struct {
	Conn        load.ConnInfo
	Table       string
	Keep        bool
	PK          *KeyGen
	Template    map[string]any
	EntitySize  int
	Preload     int
	Mix         map[string]int
	Rate        float64
	Duration    time.Duration
	Concurrency int
	Retry       RetryPolicy
	Target      int
	JSON        string
	Seed        uint64
	OpTimeout   time.Duration
}

// ParseFlags reads the command line.
func ParseFlags(args []string, env func(string) string, stderr io.Writer) (*Config, error) {
	fs := flag.NewFlagSet("tablo stress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	conn := fs.String("conn", env("TABLO_STRESS_CONN"), "connection string of the endpoint (any endpoint: Tablo, Azure, another emulator) (TABLO_STRESS_CONN)")
	table := fs.String("table", "", "test table to create (default stress<random>); it must not exist")
	keep := fs.Bool("keep", false, "keep the test table afterwards")
	pk := fs.String("pk", "fixed", "PartitionKey design: fixed[:VALUE], sequential (append-only), reverse (prepend-only), guid, hashed:N, list:A,B,...")
	template := fs.String("template", "", "a sample entity as JSON (its properties are copied into every entity; keys are generated)")
	size := fs.Int("entity-size", 256, "characters of the Data property when no --template is given")
	preload := fs.Int("preload", 1000, "entities loaded before the measured phase")
	mix := fs.String("mix", "insert=40,get=40,update=10,query=5,batch=5", "operation mix as weights: insert, get, update, query (a row range of one partition), batch (10 inserts)")
	rate := fs.Float64("rate", 0, "target operations per second over all workers (0 = flat out)")
	duration := fs.Duration("duration", 20*time.Second, "how long to drive the load (at most 1h)")
	conc := fs.Int("concurrency", 8, "concurrent workers")
	retry := fs.String("retry", "exponential", "retry policy: none, fixed or exponential (the guide's formula with ±20% randomness)")
	retries := fs.Int("retry-max", 5, "retries per operation")
	backoff := fs.Duration("backoff", time.Second, "default back-off z (fixed: the wait)")
	backoffMin := fs.Duration("backoff-min", 100*time.Millisecond, "minimum back-off zmin (exponential)")
	backoffMax := fs.Duration("backoff-max", 10*time.Second, "maximum back-off zmax (exponential)")
	target := fs.Int("target", defaultTarget, "partition scalability target in entities/s, for the report")
	jsonOut := fs.String("json", "", "also write the results as JSON to this file (- = stdout, replacing the text report)")
	seed := fs.Uint64("seed", 1, "random seed")
	opTimeout := fs.Duration("op-timeout", 30*time.Second, "timeout of one attempt")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("stress: unexpected arguments %q", fs.Args())
	}
	var errs []error
	c := &Config{Table: *table, Keep: *keep, EntitySize: *size, Preload: *preload, Rate: *rate,
		Duration: *duration, Concurrency: *conc, Target: *target, JSON: *jsonOut, Seed: *seed, OpTimeout: *opTimeout}
	var err error
	if *conn == "" {
		errs = append(errs, errors.New("stress: --conn is required"))
	} else if c.Conn, err = load.ParseConnString(*conn); err != nil {
		errs = append(errs, fmt.Errorf("stress: --conn: %w", err))
	}
	if c.PK, err = ParseKeyGen(*pk); err != nil {
		errs = append(errs, fmt.Errorf("stress: --%w", err))
	}
	if *template != "" {
		if err := json.Unmarshal([]byte(*template), &c.Template); err != nil {
			errs = append(errs, fmt.Errorf("stress: --template: %w", err))
		}
		delete(c.Template, "PartitionKey")
		delete(c.Template, "RowKey")
	}
	if c.Mix, err = parseMix(*mix); err != nil {
		errs = append(errs, err)
	}
	if c.Retry, err = ParseRetry(*retry, *retries, *backoff, *backoffMin, *backoffMax); err != nil {
		errs = append(errs, fmt.Errorf("stress: --%w", err))
	}
	if c.Duration <= 0 || c.Duration > maxDuration {
		errs = append(errs, fmt.Errorf("stress: --duration %s: want more than 0 and at most 1h", c.Duration))
	}
	if c.Concurrency < 1 || c.Concurrency > 1024 {
		errs = append(errs, errors.New("stress: --concurrency: want 1 to 1024"))
	}
	if c.Preload < 0 || c.EntitySize < 0 || c.EntitySize > 32768 || c.Rate < 0 || c.Target < 1 {
		errs = append(errs, errors.New("stress: --preload, --entity-size (at most 32768), --rate and --target must not be negative"))
	}
	if c.Table != "" && !validTableName(c.Table) {
		errs = append(errs, fmt.Errorf("stress: --table %q is not a valid table name", c.Table))
	}
	return c, errors.Join(errs...)
}

func validTableName(s string) bool {
	if len(s) < 3 || len(s) > 63 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func parseMix(s string) (map[string]int, error) {
	m := map[string]int{}
	total := 0
	for f := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 || !slices.Contains(opNames, k) {
			return nil, fmt.Errorf("stress: --mix %q: want weights like insert=40,get=40,update=10,query=5,batch=5", s)
		}
		m[k] += n
		total += n
	}
	if total == 0 {
		return nil, fmt.Errorf("stress: --mix %q: all weights are zero", s)
	}
	return m, nil
}

// Main runs `tablo stress`.
func Main(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	cfg, err := ParseFlags(args, env, stderr)
	if err != nil {
		return err
	}
	rep, err := Run(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	if cfg.JSON != "" {
		w := stdout
		if cfg.JSON != "-" {
			f, err := os.Create(cfg.JSON)
			if err != nil {
				return err
			}
			defer f.Close()
			w = f
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
		if cfg.JSON == "-" {
			return nil
		}
	}
	rep.WriteText(stdout)
	return nil
}
