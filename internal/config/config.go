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
	// PostgresURL, when set, selects the PostgreSQL-protocol engine (DataDir and InMemory
	// are then unused); PostgresPoolSize (0 = engine default) and PostgresStatementTimeout
	// (0 = engine default) tune it.
	PostgresURL              string
	PostgresPoolSize         int
	PostgresStatementTimeout time.Duration
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
	pgURL := fs.String("postgres", getenv("TABLO_POSTGRES_URL", ""), "store data in this PostgreSQL (or CockroachDB, YugabyteDB) database, shared by any number of Tablo front ends: a postgres:// URL or key=value DSN (TABLO_POSTGRES_URL)")
	pgPool := fs.String("postgres-pool-size", getenv("TABLO_POSTGRES_POOL_SIZE", "0"), "connections to the database; 0 = 4 per CPU, at least 8 (TABLO_POSTGRES_POOL_SIZE)")
	pgTimeout := fs.String("postgres-statement-timeout", getenv("TABLO_POSTGRES_STATEMENT_TIMEOUT", "10s"), "longest a database statement may run; requests past it answer OperationTimedOut (TABLO_POSTGRES_STATEMENT_TIMEOUT)")
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
	if mb, err := strconv.ParseInt(*colCache, 10, 64); err != nil || mb < 0 || mb > 1<<20 {
		errs = append(errs, fmt.Errorf("config: --column-cache-mb %q is not a size in MiB", *colCache))
	} else {
		c.ColumnCacheBytes = mb << 20
	}
	c.PostgresURL = *pgURL
	if n, err := strconv.Atoi(*pgPool); err != nil || n < 0 || n > 10000 {
		errs = append(errs, fmt.Errorf("config: --postgres-pool-size %q is not a connection count", *pgPool))
	} else {
		c.PostgresPoolSize = n
	}
	if d, err := time.ParseDuration(*pgTimeout); err != nil || d < time.Millisecond {
		errs = append(errs, fmt.Errorf("config: --postgres-statement-timeout %q is not a duration of at least 1ms", *pgTimeout))
	} else {
		c.PostgresStatementTimeout = d
	}
	if *accounts == "" {
		c.Accounts = []auth.Account{auth.DevAccount()}
	} else if c.Accounts, err = auth.ParseAccounts(*accounts); err != nil {
		errs = append(errs, fmt.Errorf("config: --accounts: %w", err))
	}
	if err := c.LogLevel.UnmarshalText([]byte(strings.ToUpper(*logLevel))); err != nil {
		errs = append(errs, fmt.Errorf("config: --log-level %q: want debug, info, warn or error", *logLevel))
	}
	if c.PostgresURL != "" && c.InMemory {
		errs = append(errs, errors.New("config: --postgres and --in-memory exclude each other"))
	}
	if !c.InMemory && c.DataDir == "" {
		errs = append(errs, errors.New("config: --data-dir must not be empty"))
	}
	return c, errors.Join(errs...)
}
