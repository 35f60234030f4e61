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
	// QueuePort and BlobPort are the other services' ports (0: any free port).
	QueuePort int
	BlobPort  int
	// Services lists the services to start, in Services' spelling ("table", "queue");
	// empty means every service this build has (Available).
	Services []string
	DataDir  string
	InMemory bool
	Accounts []auth.Account
	LogLevel slog.Level
	// PprofAddr, when set, serves net/http/pprof there (opt-in).
	PprofAddr string
	// GroupCommitWindow is how long a WAL sync may wait for more writers (0 = engine default).
	GroupCommitWindow time.Duration
	// ColumnCacheBytes is the memory budget of the filtered-scan column cache (0 = off).
	ColumnCacheBytes int64
}

// Available lists the services this build can start, in start-up order. Blob has its
// port setting already; it joins this list when the service exists.
var Available = []string{"table", "queue"}

// Known lists every service name --services accepts in some build.
var known = []string{"table", "queue", "blob"}

// Starts reports whether the configuration starts service name.
func (c Config) Starts(name string) bool {
	if len(c.Services) == 0 {
		for _, s := range Available {
			if s == name {
				return true
			}
		}
		return false
	}
	for _, s := range c.Services {
		if s == name {
			return true
		}
	}
	return false
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
	queuePort := fs.String("queue-port", getenv("TABLO_QUEUE_PORT", "10001"), "Queue service port (TABLO_QUEUE_PORT)")
	blobPort := fs.String("blob-port", getenv("TABLO_BLOB_PORT", "10000"), "Blob service port, used once the Blob service exists (TABLO_BLOB_PORT)")
	services := fs.String("services", getenv("TABLO_SERVICES", strings.Join(Available, ",")), "comma-separated services to start: "+strings.Join(Available, ", ")+" (TABLO_SERVICES)")
	dataDir := fs.String("data-dir", getenv("TABLO_DATA_DIR", "./tablo-data"), "data directory (TABLO_DATA_DIR)")
	inMemory := fs.Bool("in-memory", getenv("TABLO_IN_MEMORY", "") == "true" || getenv("TABLO_IN_MEMORY", "") == "1", "keep data in memory only; nothing survives a restart (TABLO_IN_MEMORY)")
	accounts := fs.String("accounts", getenv("TABLO_ACCOUNTS", ""), "accounts as name:base64key[:base64key2][,...] (TABLO_ACCOUNTS; default the development account devstoreaccount1)")
	logLevel := fs.String("log-level", getenv("TABLO_LOG_LEVEL", "info"), "debug, info, warn or error (TABLO_LOG_LEVEL)")
	window := fs.String("group-commit-window", getenv("TABLO_GROUP_COMMIT_WINDOW", "0"), "how long a WAL fsync may wait for more concurrent writes to share it, when more writers are active than twice the CPUs; 0 = default (300µs), negative = never wait (TABLO_GROUP_COMMIT_WINDOW)")
	colCache := fs.String("column-cache-mb", getenv("TABLO_COLUMN_CACHE_MB", "64"), "memory for the column cache that serves filtered table scans, in MiB; 0 turns it off (TABLO_COLUMN_CACHE_MB)")
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
	for _, pp := range []struct {
		flag string
		v    string
		dst  *int
	}{{"--queue-port", *queuePort, &c.QueuePort}, {"--blob-port", *blobPort, &c.BlobPort}} {
		n, err := strconv.Atoi(pp.v)
		if err != nil || n < 0 || n > 65535 {
			errs = append(errs, fmt.Errorf("config: %s %q is not a port number", pp.flag, pp.v))
		}
		*pp.dst = n
	}
	if c.Services, err = parseServices(*services); err != nil {
		errs = append(errs, err)
	}
	if c.GroupCommitWindow, err = time.ParseDuration(*window); err != nil {
		errs = append(errs, fmt.Errorf("config: --group-commit-window %q is not a duration", *window))
	}
	if mb, err := strconv.ParseInt(*colCache, 10, 64); err != nil || mb < 0 || mb > 1<<20 {
		errs = append(errs, fmt.Errorf("config: --column-cache-mb %q is not a size in MiB", *colCache))
	} else {
		c.ColumnCacheBytes = mb << 20
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

// parseServices reads a --services list: known names, no repeats, at least one.
func parseServices(v string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(v, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		switch {
		case !contains(known, name):
			return nil, fmt.Errorf("config: --services: unknown service %q (want %s)", name, strings.Join(Available, ", "))
		case !contains(Available, name):
			return nil, fmt.Errorf("config: --services: the %s service is not available in this build", name)
		case contains(out, name):
			return nil, fmt.Errorf("config: --services: %s named twice", name)
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, errors.New("config: --services names no service")
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
