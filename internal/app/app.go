// Package app assembles a running Tablo: listeners, data directory, engine, services, and
// their ordered start-up and shutdown.
//
// Start-up refuses early and clearly, before anything is created: every listener is bound
// first (a port in use names the port and the service), then the data directory is claimed
// (in use by another Tablo, unreadable), and only then is the engine opened.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tablo/tablo/internal/blob"
	"github.com/tablo/tablo/internal/blobwire"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/console"
	"github.com/tablo/tablo/internal/datadir"
	"github.com/tablo/tablo/internal/httpserve"
	"github.com/tablo/tablo/internal/metrics"
	"github.com/tablo/tablo/internal/migrate"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/queue"
	"github.com/tablo/tablo/internal/queuewire"
	"github.com/tablo/tablo/internal/server"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/store/postgres"
	"github.com/tablo/tablo/internal/table"
)

// App is a started Tablo server.
type App struct {
	cfg       config.Config
	log       *slog.Logger
	claim     *datadir.Claim // nil in memory
	db        store.Store
	pebble    *pebblestore.DB // db when it is Pebble (snapshots, engine metrics), else nil
	svc       *table.Service
	qsv       *queue.Service
	blob      *blob.Service // nil when the Blob service is not started
	parts     *partition.Layer
	listeners []*listener
	pprof     *http.Server
	served    chan error
	closeOnce sync.Once
	closeErr  error
	*ops      // TLS, metrics, admin listener, reset/restore gate (ops.go)
}

// listener is one service's bound socket and its HTTP server.
type listener struct {
	service string // "Table"; the connection string key is service + "Endpoint"
	flag    string // the flag that sets its port, for error messages
	ln      net.Listener
	http    *httpserve.Server
}

// listenSpec is a service to listen for: its name, port and the flag that sets the port.
type listenSpec struct {
	service string
	port    int
	flag    string
}

// services lists what cfg asks to serve (--services), in start-up order; a service not
// started has no port open.
func services(cfg config.Config) []listenSpec {
	var out []listenSpec
	for _, sp := range []listenSpec{
		{"Table", cfg.TablePort, "--table-port"},
		{"Queue", cfg.QueuePort, "--queue-port"},
		{"Blob", cfg.BlobPort, "--blob-port"},
	} {
		if cfg.Starts(strings.ToLower(sp.service)) {
			out = append(out, sp)
		}
	}
	return out
}

// Start binds the listeners, claims the data directory, opens the engine and starts serving.
// The returned App serves until Close.
func Start(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	if cfg.Host == "" {
		cfg.Host = config.DefaultHost
	}
	a := &App{cfg: cfg, log: log, served: make(chan error, 4), ops: newOps()}
	ok := false
	defer func() {
		if !ok {
			a.abort()
		}
	}()
	for _, sp := range services(cfg) {
		ln, err := listen(cfg.Host, sp)
		if err != nil {
			return nil, err
		}
		a.listeners = append(a.listeners, &listener{service: sp.service, flag: sp.flag, ln: ln})
	}
	if err := a.bindAdmin(); err != nil {
		return nil, err
	}
	db, dir, err := a.openEngine(ctx)
	if err != nil {
		return nil, err
	}
	a.db = db
	if err := migrate.Unfinished(ctx, db); err != nil {
		return nil, err
	}
	o := a.ops
	if err := o.loadTLS(cfg, dir); err != nil {
		return nil, err
	}
	a.svc = table.New(db, table.Options{Logger: log, ColumnCacheBytes: cfg.ColumnCacheBytes})
	a.qsv = queue.New(db, queue.Options{Logger: log})
	a.parts = partition.New(cfg.Partition)
	a.parts.SetFaults(cfg.Faults)
	tableSrv := server.New(server.Options{Service: a.svc, Accounts: cfg.Accounts, Logger: log, RequestDateWindow: cfg.RequestDateWindow, Partitions: a.parts,
		Metrics: o.metrics, OAuth: cfg.OAuth == "basic"})
	o.dropCaches = append(o.dropCaches, a.svc.DropCaches, tableSrv.DropCaches, a.qsv.DropCaches)
	o.deleteAccount = append(o.deleteAccount, a.svc.DeleteAccount, a.qsv.DeleteAccount)
	if pdb, ok := db.(*pebblestore.DB); ok {
		a.pebble = pdb
		metrics.RegisterEngine(o.reg, pdb.Stats)
	}
	metrics.RegisterTable(o.reg, a.svc.Stats)
	for _, l := range a.listeners {
		switch l.service {
		case "Table":
			l.http = tableSrv.NewHTTPServer()
		case "Queue":
			qsrv := queuewire.New(queuewire.Options{Service: a.qsv, Accounts: cfg.Accounts, Logger: log, RequestDateWindow: cfg.RequestDateWindow,
				Metrics: o.metrics, OAuth: cfg.OAuth == "basic", Partitions: a.parts})
			o.dropCaches = append(o.dropCaches, qsrv.DropCaches)
			l.http = qsrv.NewHTTPServer()
		case "Blob":
			a.blob = blob.New(db, blob.Options{Logger: log})
			o.deleteAccount = append(o.deleteAccount, a.blob.DeleteAccount)
			bsrv := blobwire.New(blobwire.Options{Service: a.blob, Accounts: cfg.Accounts, Logger: log, RequestDateWindow: cfg.RequestDateWindow,
				Metrics: o.metrics, OAuth: cfg.OAuth == "basic", Partitions: a.parts})
			o.dropCaches = append(o.dropCaches, bsrv.DropCaches)
			l.http = bsrv.NewHTTPServer()
		}
		o.serveStorage(strings.ToLower(l.service), l.http)
		go func() { a.served <- l.http.Serve(l.ln) }()
	}
	a.serveAdmin()
	if cfg.PprofAddr != "" {
		a.startPprof(cfg.PprofAddr)
	}
	ok = true
	a.logStarted()
	return a, nil
}

// openEngine opens the engine cfg selects: PostgreSQL when PostgresURL is set (no data
// directory is claimed: the database is shared), else Pebble in the claimed data directory
// (or in memory). dir is where the TLS material lives: the data directory, or (on the shared
// engine, which claims none) cfg.DataDir.
func (a *App) openEngine(ctx context.Context) (_ store.Store, dir string, _ error) {
	cfg := a.cfg
	if cfg.PostgresURL != "" {
		db, err := openPostgres(ctx, cfg, a.log)
		return db, cfg.DataDir, err
	}
	dir = cfg.DataDir
	if !cfg.InMemory {
		claim, err := datadir.Acquire(cfg.DataDir)
		if err != nil {
			return nil, "", err
		}
		a.claim, dir = claim, claim.Dir()
	}
	db, err := pebblestore.Open(pebblestore.Options{Dir: dir, InMemory: cfg.InMemory, Logger: a.log, GroupCommitWindow: cfg.GroupCommitWindow})
	if err != nil {
		return nil, "", fmt.Errorf("open engine in %s: %w", dir, err)
	}
	return db, dir, nil
}

// startupWait is how long start-up waits for an unreachable database.
const startupWait = 30 * time.Second

// openPostgres opens the PostgreSQL engine. A front end may start before its database (or
// while it restarts): it waits for it, for a while, rather than exit at once.
func openPostgres(ctx context.Context, cfg config.Config, log *slog.Logger) (store.Store, error) {
	deadline := time.Now().Add(startupWait)
	for {
		db, err := postgres.Open(ctx, postgres.Options{
			URL: cfg.PostgresURL, MaxConns: int32(cfg.PostgresPoolSize),
			StatementTimeout: cfg.PostgresStatementTimeout, Logger: log, CheckNesting: cfg.PostgresCheckNesting,
		})
		if err == nil {
			return db, nil
		}
		if !errors.Is(err, store.ErrUnavailable) || time.Now().After(deadline) {
			return nil, err
		}
		log.Warn("waiting for the database", "err", err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Second):
		}
	}
}

// Ready reports whether the engine can serve: nil, or why not (a database that does not
// answer). Engines with nothing to check are always ready.
func (a *App) Ready(ctx context.Context) error {
	if p, ok := a.db.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}

// listen binds one service's port, turning "address already in use" into a message that
// names the port, the service and the flag.
func listen(host string, sp listenSpec) (net.Listener, error) {
	addr := net.JoinHostPort(host, strconv.Itoa(sp.port))
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s service: port %d on %s is already in use (another Tablo or an Azure Storage emulator?); stop it or choose another port with %s",
			sp.service, sp.port, host, sp.flag)
	}
	return nil, fmt.Errorf("%s service: cannot listen on %s: %w", sp.service, addr, err)
}

// Engine is the Pebble engine the App opened (for diagnostics and tests); nil on the
// PostgreSQL engine.
func (a *App) Engine() *pebblestore.DB { return a.pebble }

// Partitions is the partition layer: its Handler is the admin API of partitions and faults.
func (a *App) Partitions() *partition.Layer { return a.parts }

func (a *App) startPprof(addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	// The partition layer's JSON API, also on the admin listener.
	mux.Handle("/partitions", a.parts.Handler())
	mux.Handle("/faults", a.parts.Handler())
	a.pprof = &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := a.pprof.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("pprof", "err", err)
		}
	}()
}

// console builds the web console for the admin listener at addr. Beyond loopback it asks
// for sign-in, and logs a start-up token that signs in.
func (a *App) console(addr net.Addr) *console.Console {
	cfg, log := a.cfg, a.log
	host, _, _ := net.SplitHostPort(addr.String())
	exposed := !isLoopbackHost(host)
	engine := "pebble"
	switch {
	case cfg.PostgresURL != "":
		engine = "postgres (shared)"
	case cfg.InMemory:
		engine = "pebble (in memory)"
	}
	o := console.Options{
		Accounts: cfg.Accounts, TableURL: clientURL(a.ServiceAddr("table")), QueueURL: clientURL(a.ServiceAddr("queue")),
		BlobURL: clientURL(a.ServiceAddr("blob")), Partitions: a.parts.Handler(), Version: cfg.Version, Engine: engine, Started: time.Now(),
		RequireLogin: exposed,
	}
	if exposed {
		o.Token = console.NewToken()
		log.Warn("web console reachable beyond loopback: sign in with an account key or this token", "addr", addr.String(), "token", o.Token)
	}
	return console.New(o)
}

// clientURL is how a client on this machine reaches a listener: at its own address, or on
// loopback when it listens on every interface ("" when the service is not started).
func clientURL(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// abort undoes a Start that failed part way.
func (a *App) abort() {
	for _, l := range a.listeners {
		_ = l.ln.Close()
	}
	if a.adminLn != nil {
		_ = a.adminLn.Close()
	}
	if a.qsv != nil {
		a.qsv.Close()
	}
	if a.svc != nil {
		a.svc.Close()
	}
	if a.blob != nil {
		a.blob.Close()
	}
	if a.db != nil {
		_ = a.db.Close()
	}
	if a.claim != nil {
		_ = a.claim.Release()
	}
}

// Addr is the Table service's listening address (nil when it is not started).
func (a *App) Addr() net.Addr { return a.ServiceAddr("table") }

// ServiceAddr is the listening address of a started service ("table", "queue", "blob"), or nil.
func (a *App) ServiceAddr(service string) net.Addr {
	for _, l := range a.listeners {
		if strings.EqualFold(l.service, service) {
			return l.ln.Addr()
		}
	}
	return nil
}

// Done yields the Serve error if a listener fails on its own.
func (a *App) Done() <-chan error { return a.served }

// Close shuts down in order: stop accepting and let requests in flight finish until ctx
// ends, then close the connections still open, stop pprof, flush and close the engine and
// release the data directory. Connections closed at the deadline are logged, not an error:
// every acknowledged write is already durable. Safe to call twice.
func (a *App) Close(ctx context.Context) error {
	a.closeOnce.Do(func() { a.closeErr = a.close(ctx) })
	return a.closeErr
}

func (a *App) close(ctx context.Context) error {
	start := time.Now()
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, l := range a.listeners {
		wg.Go(func() {
			err := l.http.Shutdown(ctx)
			if errors.Is(err, httpserve.ErrForcedClose) {
				a.log.Warn("shutdown timeout: closed connections still open", "service", l.service, "detail", err.Error())
				return
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("app: %s shutdown: %w", l.service, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := a.closeAdmin(ctx); err != nil {
		errs = append(errs, err)
	}
	if a.pprof != nil {
		_ = a.pprof.Close()
	}
	a.qsv.Close()
	a.svc.Close()
	if a.blob != nil {
		a.blob.Close()
	}
	if err := a.db.Close(); err != nil {
		errs = append(errs, err)
	}
	if a.claim != nil {
		if err := a.claim.Release(); err != nil {
			errs = append(errs, err)
		}
	}
	a.log.Info("tablo stopped", "took", time.Since(start))
	return errors.Join(errs...)
}
