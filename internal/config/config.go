// Package config loads Tablo's server configuration from command-line flags and environment
// variables (an explicit flag wins over its variable), and reports every problem at once.
//
// Every flag is one line of the table in flags(): its name, a typed value bound to a Config
// field with its default, and its help text. The environment variable is derived from the
// name (--table-port is TABLO_TABLE_PORT), so adding a flag adds its variable and its help.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/partition"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// Config is the server's configuration.
type Config struct {
	Host      string
	TablePort int
	// QueuePort and BlobPort are the other services' ports (0 picks a free one).
	QueuePort int
	BlobPort  int
	// Services lists the services to start ("table", "queue", "blob"); empty means every service
	// this build has (Available).
	Services []string
	DataDir  string
	InMemory bool
	Accounts []auth.Account
	LogLevel slog.Level
	// LogFormat is "auto" (text on a terminal, JSON otherwise), "text" or "json".
	LogFormat string
	// ShutdownTimeout bounds how long a graceful shutdown waits for requests in flight.
	ShutdownTimeout time.Duration
	// PprofAddr, when set, serves net/http/pprof there (opt-in).
	PprofAddr string
	// Version is the server's version, as the console shows it (set by the command).
	Version string
	// GroupCommitWindow is how long a WAL sync may wait for more writers (negative = never).
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
	// PostgresURL, when set, selects the PostgreSQL-protocol engine (DataDir and InMemory
	// are then unused); PostgresPoolSize (0 = engine default) and PostgresStatementTimeout
	// (0 = engine default) tune it.
	PostgresURL              string
	PostgresPoolSize         int
	PostgresStatementTimeout time.Duration
	// PostgresCheckNesting (no flag; tests) makes the engine log an Error whenever a
	// goroutine holding a pooled connection asks for another: a deadlock once the pool is
	// full (postgres.Options.CheckNesting).
	PostgresCheckNesting bool

	// Operations: TLS, OAuth and the admin listener (see ops.go).
	Ops
}

// Defaults for the zero values a Config built in code may leave.
const (
	DefaultHost            = "127.0.0.1"
	DefaultTablePort       = 10002
	DefaultQueuePort       = 10001
	DefaultBlobPort        = 10000
	DefaultShutdownTimeout = 10 * time.Second
)

// Flag is one server flag: --Name on the command line, EnvVar(Name) in the environment.
type Flag struct {
	Name  string
	Value Value
	Usage string
}

// flags is the table of server flags, bound to c's fields; each Value sets its default.
func (c *Config) flags() []Flag {
	return append([]Flag{
		{"host", String(&c.Host, DefaultHost), "address to listen on; 0.0.0.0 or :: listens on every interface"},
		{"table-port", Port(&c.TablePort, DefaultTablePort), "Table service port (0 picks a free one)"},
		{"queue-port", Port(&c.QueuePort, DefaultQueuePort), "Queue service port (0 picks a free one)"},
		{"blob-port", Port(&c.BlobPort, DefaultBlobPort), "Blob service port (0 picks a free one)"},
		{"services", Parsed(&c.Services, strings.Join(Available, ","), "list", parseServices), "comma-separated services to start: " + strings.Join(Available, ", ") + "; a service not started has its port closed"},
		{"data-dir", String(&c.DataDir, "./tablo-data"), "directory of the durable engine's data"},
		{"in-memory", Bool(&c.InMemory, false), "keep data in memory only; nothing survives a restart"},
		{"accounts", Accounts(&c.Accounts), "accounts as name:base64key[:base64key2][,...] (default: the development account devstoreaccount1 with its well-known key)"},
		{"log-level", LogLevel(&c.LogLevel, slog.LevelInfo), "debug, info, warn or error"},
		{"log-format", Enum(&c.LogFormat, "auto", "auto", "text", "json"), "auto (text on a terminal, JSON otherwise), text or json"},
		{"shutdown-timeout", Duration(&c.ShutdownTimeout, DefaultShutdownTimeout), "on SIGINT/SIGTERM, how long requests in flight may finish before connections are closed"},
		{"group-commit-window", Duration(&c.GroupCommitWindow, pebblestore.DefaultGroupCommitWindow), "how long a WAL fsync may wait for more concurrent writes to share it, when more writers are active than twice the CPUs; negative = never wait"},
		{"column-cache-mb", MiB(&c.ColumnCacheBytes, 64), "memory for the column cache that serves filtered table scans, in MiB; 0 turns it off"},
		{"emulate-targets", Parsed(&c.Partition, "", "settings", partition.ParseOptions), "answer ServerBusy beyond Azure's scalability targets and while a range partition moves: on, or settings like partition=2000,account=20000,heat=3m,move=5s (off when empty)"},
		{"faults", Parsed(&c.Faults, "", "spec", partition.ParseFaults), "inject seeded faults, e.g. 'seed=7; fault=busy op=write p=0.1' (see docs/architecture.md; off when empty)"},
		{"request-date-window", PositiveDuration(&c.RequestDateWindow, 15*time.Minute), "how far a Shared Key request's x-ms-date (or Date) may lie from the server's clock before it is refused, as Azure refuses it after 15m; widen it if test clocks drift"},
		{"postgres", String(&c.PostgresURL, ""), "keep the data in this PostgreSQL (or CockroachDB, YugabyteDB) database, shared by any number of Tablo front ends: a postgres:// URL or key=value DSN (off when empty)"},
		{"postgres-pool-size", Parsed(&c.PostgresPoolSize, "0", "connections", parsePoolSize), "connections to the database; 0 = 8 per CPU, at least 16"},
		{"postgres-statement-timeout", PositiveDuration(&c.PostgresStatementTimeout, 10*time.Second), "longest a database statement may run; requests past it answer OperationTimedOut"},
		{"pprof", String(&c.PprofAddr, ""), "serve net/http/pprof on this address, e.g. 127.0.0.1:6060 (off when empty)"},
	}, c.opsFlags()...)
}

// envExceptions are the variables not named by the rule: TABLO_POSTGRES_URL says what the
// value is, where TABLO_POSTGRES would not.
var envExceptions = map[string]string{"postgres": "TABLO_POSTGRES_URL"}

// parsePoolSize reads --postgres-pool-size.
func parsePoolSize(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 10000 {
		return 0, errors.New("want a connection count from 0 to 10000")
	}
	return n, nil
}

// Available lists the services this build can start, in start-up order.
var Available = []string{"table", "queue", "blob"}

// known lists every service name --services accepts in some build.
var known = []string{"table", "queue", "blob"}

// Starts reports whether the configuration starts service name.
func (c Config) Starts(name string) bool {
	if len(c.Services) == 0 {
		return slices.Contains(Available, name)
	}
	return slices.Contains(c.Services, name)
}

// parseServices reads a --services list: known names, no repeats, at least one.
func parseServices(v string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(v, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		switch {
		case !slices.Contains(known, name):
			return nil, fmt.Errorf("unknown service %q (want %s)", name, strings.Join(Available, ", "))
		case !slices.Contains(Available, name):
			return nil, fmt.Errorf("the %s service is not available in this build", name)
		case slices.Contains(out, name):
			return nil, fmt.Errorf("%s named twice", name)
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, errors.New("no service named")
	}
	return out, nil
}

// EnvVar is the environment variable of the flag named name: TABLO_ and the name in upper
// case with dashes as underscores.
func EnvVar(name string) string {
	if v, ok := envExceptions[name]; ok {
		return v
	}
	return "TABLO_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Load parses args (without the program name and subcommand) and env (os.Getenv-like). It
// returns flag.ErrHelp after writing the usage to stderr for -h.
func Load(args []string, env func(string) string, stderr io.Writer) (Config, error) {
	var c Config
	flags := c.flags()
	var errs []error
	// Environment first, so that explicit flags (parsed after) win.
	for _, f := range flags {
		v := env(EnvVar(f.Name))
		if v == "" {
			continue
		}
		if err := f.Value.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("environment variable %s=%q: %w", EnvVar(f.Name), v, err))
		}
	}
	if err := ParseArgs(flags, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			WriteUsage(stderr)
			return Config{}, err
		}
		errs = append(errs, err)
	}
	if len(c.Accounts) == 0 {
		c.Accounts = []auth.Account{auth.DevAccount()}
	}
	if c.PostgresURL != "" && c.InMemory {
		errs = append(errs, errors.New("--postgres and --in-memory exclude each other"))
	}
	if !c.InMemory && c.DataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty (or use --in-memory)"))
	}
	errs = append(errs, c.finishOps()...)
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

// ParseArgs sets flags from args: --name value, --name=value, a lone --name for a boolean
// (one dash works too). It reports every bad flag, not just the first, and returns
// flag.ErrHelp for -h, -help or --help.
func ParseArgs(flags []Flag, args []string) error {
	byName := make(map[string]*Flag, len(flags))
	for i := range flags {
		byName[flags[i].Name] = &flags[i]
	}
	var errs []error
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			errs = append(errs, fmt.Errorf("unexpected argument %q (flags start with --)", a))
			continue
		}
		name := strings.TrimLeft(a, "-")
		value, hasValue := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, value, hasValue = k, v, true
		}
		if name == "h" || name == "help" {
			return flag.ErrHelp
		}
		f := byName[name]
		if f == nil {
			errs = append(errs, fmt.Errorf("unknown flag --%s (tablo help serve lists them)", name))
			continue
		}
		if !hasValue {
			if f.Value.Type() == "" { // a boolean: present means true
				value = "true"
			} else if i+1 < len(args) {
				i++
				value = args[i]
			} else {
				errs = append(errs, fmt.Errorf("flag --%s needs a value", name))
				continue
			}
		}
		if err := f.Value.Set(value); err != nil {
			errs = append(errs, fmt.Errorf("--%s %q: %w", name, value, err))
		}
	}
	return errors.Join(errs...)
}

// WriteUsage writes the serve flags, their types, defaults and variables.
func WriteUsage(w io.Writer) {
	var c Config
	flags := c.flags()
	rows := make([][2]string, 0, len(flags))
	width := 0
	for _, f := range flags {
		left := "--" + f.Name
		if t := f.Value.Type(); t != "" {
			left += " " + t
		}
		width = max(width, len(left))
		rows = append(rows, [2]string{left, f.Usage})
	}
	for i, f := range flags {
		def := f.Value.String()
		if def == "" {
			def = `""`
		}
		if f.Name == "accounts" {
			def = "" // described in the usage
		}
		suffix := "env " + EnvVar(f.Name)
		if def != "" {
			suffix = "default " + def + "; " + suffix
		}
		fmt.Fprintf(w, "  %-*s  %s (%s)\n", width, rows[i][0], rows[i][1], suffix)
	}
}

// Names lists the flag names, in table order (for tests and documentation).
func Names() []string {
	var c Config
	var names []string
	for _, f := range c.flags() {
		names = append(names, f.Name)
	}
	return slices.Clip(names)
}
