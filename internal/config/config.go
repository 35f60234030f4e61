// Package config loads Tablo's configuration from command-line arguments and environment
// variables (flags win), with defaults and validation that reports every problem at once.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/partition"
)

// Config is the server's configuration.
type Config struct {
	Host      string
	TablePort int
	DataDir   string
	InMemory  bool
	Accounts  []auth.Account
	LogLevel  slog.Level
	// PprofAddr, when set, serves net/http/pprof there (opt-in).
	PprofAddr string
	// GroupCommitWindow is how long a WAL sync may wait for more writers (0 = engine default).
	GroupCommitWindow time.Duration
	// ColumnCacheBytes is the memory budget of the filtered-scan column cache (0 = off).
	ColumnCacheBytes int64
	// Partition configures the partition layer (always on; Emulate opts in to Azure's
	// scalability targets). Faults, when non-nil, injects seeded faults.
	Partition partition.Options
	Faults    *partition.FaultSet
	// RequestDateWindow is how far a Shared Key request's date may lie from the server's
	// clock (0 = Azure's 15 minutes).
	RequestDateWindow time.Duration
}

// Load parses args (without the program name and subcommand) and env (os.Getenv-like).
// Each flag has an environment variable; an explicit flag wins.
func Load(args []string, env func(string) string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet("tablo serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	getenv := func(name, def string) string {
		if v := env(name); v != "" {
			return v
		}
		return def
	}
	host := fs.String("host", getenv("TABLO_HOST", "127.0.0.1"), "address to listen on (TABLO_HOST)")
	port := fs.String("table-port", getenv("TABLO_TABLE_PORT", "10002"), "Table service port (TABLO_TABLE_PORT)")
	dataDir := fs.String("data-dir", getenv("TABLO_DATA_DIR", "./tablo-data"), "data directory (TABLO_DATA_DIR)")
	inMemory := fs.Bool("in-memory", getenv("TABLO_IN_MEMORY", "") == "true" || getenv("TABLO_IN_MEMORY", "") == "1", "keep data in memory only; nothing survives a restart (TABLO_IN_MEMORY)")
	accounts := fs.String("accounts", getenv("TABLO_ACCOUNTS", ""), "accounts as name:base64key[:base64key2][,...] (TABLO_ACCOUNTS; default the development account devstoreaccount1)")
	logLevel := fs.String("log-level", getenv("TABLO_LOG_LEVEL", "info"), "debug, info, warn or error (TABLO_LOG_LEVEL)")
	window := fs.String("group-commit-window", getenv("TABLO_GROUP_COMMIT_WINDOW", "0"), "how long a WAL fsync may wait for more concurrent writes to share it, when more writers are active than twice the CPUs; 0 = default (300µs), negative = never wait (TABLO_GROUP_COMMIT_WINDOW)")
	colCache := fs.String("column-cache-mb", getenv("TABLO_COLUMN_CACHE_MB", "64"), "memory for the column cache that serves filtered table scans, in MiB; 0 turns it off (TABLO_COLUMN_CACHE_MB)")
	emulate := fs.String("emulate-targets", getenv("TABLO_EMULATE_TARGETS", ""), "answer ServerBusy beyond Azure's scalability targets and while a range partition moves: on, or settings like partition=2000,account=20000,heat=3m,move=5s (TABLO_EMULATE_TARGETS; default off)")
	faults := fs.String("faults", getenv("TABLO_FAULTS", ""), "inject seeded faults, e.g. 'seed=7; fault=busy op=write p=0.1' (TABLO_FAULTS; see docs/architecture.md)")
	dateWindow := fs.String("request-date-window", getenv("TABLO_REQUEST_DATE_WINDOW", "15m"), "how far a Shared Key request's x-ms-date (or Date) may lie from the server's clock before it is refused, as Azure refuses it after 15m; widen it if test clocks drift (TABLO_REQUEST_DATE_WINDOW)")
	pprof := fs.String("pprof", getenv("TABLO_PPROF", ""), "serve net/http/pprof on this address, e.g. 127.0.0.1:6060 (TABLO_PPROF)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("config: unexpected arguments %q", fs.Args())
	}
	var errs []error
	c := Config{Host: *host, DataDir: *dataDir, InMemory: *inMemory, PprofAddr: *pprof}
	p, err := strconv.Atoi(*port)
	if err != nil || p < 0 || p > 65535 {
		errs = append(errs, fmt.Errorf("config: --table-port %q is not a port number", *port))
	}
	c.TablePort = p
	if c.GroupCommitWindow, err = time.ParseDuration(*window); err != nil {
		errs = append(errs, fmt.Errorf("config: --group-commit-window %q is not a duration", *window))
	}
	if d, err := time.ParseDuration(*dateWindow); err != nil || d <= 0 {
		errs = append(errs, fmt.Errorf("config: --request-date-window %q is not a positive duration", *dateWindow))
	} else {
		c.RequestDateWindow = d
	}
	if mb, err := strconv.ParseInt(*colCache, 10, 64); err != nil || mb < 0 || mb > 1<<20 {
		errs = append(errs, fmt.Errorf("config: --column-cache-mb %q is not a size in MiB", *colCache))
	} else {
		c.ColumnCacheBytes = mb << 20
	}
	if c.Partition, err = partition.ParseOptions(*emulate); err != nil {
		errs = append(errs, fmt.Errorf("config: --emulate-targets: %w", err))
	}
	if c.Faults, err = partition.ParseFaults(*faults); err != nil {
		errs = append(errs, fmt.Errorf("config: --faults: %w", err))
	}
	if *accounts == "" {
		c.Accounts = []auth.Account{auth.DevAccount()}
	} else if c.Accounts, err = auth.ParseAccounts(*accounts); err != nil {
		errs = append(errs, fmt.Errorf("config: --accounts: %w", err))
	}
	if err := c.LogLevel.UnmarshalText([]byte(strings.ToUpper(*logLevel))); err != nil {
		errs = append(errs, fmt.Errorf("config: --log-level %q: want debug, info, warn or error", *logLevel))
	}
	if !c.InMemory && c.DataDir == "" {
		errs = append(errs, errors.New("config: --data-dir must not be empty"))
	}
	return c, errors.Join(errs...)
}
