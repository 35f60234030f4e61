// Package app assembles a running Tablo: engine, Table service, HTTP server, and their
// ordered shutdown.
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
	"time"

	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/httpserve"
	"github.com/tablo/tablo/internal/server"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/store/postgres"
	"github.com/tablo/tablo/internal/table"
)

// App is a started Tablo server.
type App struct {
	cfg     config.Config
	log     *slog.Logger
	db      store.Store
	svc     *table.Service
	http    *httpserve.Server
	pprof   *http.Server
	ln      net.Listener
	served  chan error
	closing bool
}

// Start opens the engine and starts listening. The returned App serves until Close.
func Start(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	db, err := OpenStore(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	svc := table.New(db, table.Options{Logger: log, ColumnCacheBytes: cfg.ColumnCacheBytes})
	srv := server.New(server.Options{Service: svc, Accounts: cfg.Accounts, Logger: log})
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.TablePort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		svc.Close()
		db.Close()
		return nil, fmt.Errorf("app: listen %s: %w", addr, err)
	}
	a := &App{
		cfg: cfg, log: log, db: db, svc: svc, ln: ln, served: make(chan error, 1),
		http: srv.NewHTTPServer(),
	}
	go func() { a.served <- a.http.Serve(ln) }()
	if cfg.PprofAddr != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		a.pprof = &http.Server{Addr: cfg.PprofAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := a.pprof.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("pprof", "err", err)
			}
		}()
	}
	engine := []any{"data_dir", cfg.DataDir, "in_memory", cfg.InMemory}
	if cfg.PostgresURL != "" {
		engine = []any{"engine", "postgres"}
	}
	log.Info("tablo listening", append([]any{"table_endpoint", "http://" + ln.Addr().String() + "/devstoreaccount1"}, engine...)...)
	return a, nil
}

// startupWait is how long start-up waits for an unreachable database.
const startupWait = 30 * time.Second

// OpenStore opens the engine cfg selects: PostgreSQL when PostgresURL is set, else Pebble
// on DataDir (or in memory).
func OpenStore(ctx context.Context, cfg config.Config, log *slog.Logger) (store.Store, error) {
	if cfg.PostgresURL != "" {
		// A front end may start before its database (or while it restarts): wait for it,
		// for a while, rather than exit at once.
		deadline := time.Now().Add(startupWait)
		for {
			db, err := postgres.Open(ctx, postgres.Options{
				URL: cfg.PostgresURL, MaxConns: int32(cfg.PostgresPoolSize),
				StatementTimeout: cfg.PostgresStatementTimeout, Logger: log,
			})
			if err == nil || !errors.Is(err, store.ErrUnavailable) || time.Now().After(deadline) {
				return db, err
			}
			log.Warn("waiting for the database", "err", err)
			select {
			case <-ctx.Done():
				return nil, err
			case <-time.After(time.Second):
			}
		}
	}
	return pebblestore.Open(pebblestore.Options{Dir: cfg.DataDir, InMemory: cfg.InMemory, Logger: log, GroupCommitWindow: cfg.GroupCommitWindow})
}

// Ready reports whether the engine can serve: nil, or why not (a database that does not
// answer). Engines with nothing to check are always ready.
func (a *App) Ready(ctx context.Context) error {
	if p, ok := a.db.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}

// Addr is the Table service's listening address.
func (a *App) Addr() net.Addr { return a.ln.Addr() }

// Done is closed-ish: it yields the Serve error if the listener fails on its own.
func (a *App) Done() <-chan error { return a.served }

// Close shuts down in order: stop accepting connections and drain in-flight requests (up to
// the context's deadline), stop pprof, then flush and close the engine. Safe to call twice.
func (a *App) Close(ctx context.Context) error {
	if a.closing {
		return nil
	}
	a.closing = true
	var errs []error
	if err := a.http.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("app: http shutdown: %w", err))
	}
	if a.pprof != nil {
		_ = a.pprof.Close()
	}
	a.svc.Close()
	if err := a.db.Close(); err != nil {
		errs = append(errs, err)
	}
	a.log.Info("tablo stopped")
	return errors.Join(errs...)
}
