// Package app assembles a running Tablo: engine, services, one HTTP listener per started
// service, and their ordered shutdown.
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
	"github.com/tablo/tablo/internal/queue"
	"github.com/tablo/tablo/internal/queuewire"
	"github.com/tablo/tablo/internal/server"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/table"
)

// App is a started Tablo server.
type App struct {
	cfg config.Config
	log *slog.Logger
	db  *pebblestore.DB
	svc *table.Service
	qsv *queue.Service
	// listeners holds one listener per started service, in start-up order.
	listeners []*listener
	pprof     *http.Server
	served    chan error
	closing   bool
}

// listener is one started service's endpoint.
type listener struct {
	service string
	ln      net.Listener
	http    *httpserve.Server
}

// Start opens the engine and starts listening. The returned App serves until Close.
func Start(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	db, err := pebblestore.Open(pebblestore.Options{Dir: cfg.DataDir, InMemory: cfg.InMemory, Logger: log, GroupCommitWindow: cfg.GroupCommitWindow})
	if err != nil {
		return nil, err
	}
	svc := table.New(db, table.Options{Logger: log, ColumnCacheBytes: cfg.ColumnCacheBytes})
	qsv := queue.New(db, queue.Options{Logger: log})
	a := &App{cfg: cfg, log: log, db: db, svc: svc, qsv: qsv, served: make(chan error, 4)}
	// Each started service gets its listener; one that is not started has no port open.
	type starter struct {
		name string
		port int
		srv  func() *httpserve.Server
	}
	starters := []starter{
		{"table", cfg.TablePort, func() *httpserve.Server {
			return server.New(server.Options{Service: svc, Accounts: cfg.Accounts, Logger: log}).NewHTTPServer()
		}},
		{"queue", cfg.QueuePort, func() *httpserve.Server {
			return queuewire.New(queuewire.Options{Service: qsv, Accounts: cfg.Accounts, Logger: log}).NewHTTPServer()
		}},
	}
	for _, st := range starters {
		if !cfg.Starts(st.name) {
			continue
		}
		addr := net.JoinHostPort(cfg.Host, strconv.Itoa(st.port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range a.listeners {
				_ = l.ln.Close() // not yet served
			}
			qsv.Close()
			svc.Close()
			db.Close()
			return nil, fmt.Errorf("app: %s service: listen %s: %w", st.name, addr, err)
		}
		a.listeners = append(a.listeners, &listener{service: st.name, ln: ln, http: st.srv()})
	}
	for _, l := range a.listeners {
		go func() { a.served <- l.http.Serve(l.ln) }()
	}
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
	attrs := []any{}
	for _, l := range a.listeners {
		attrs = append(attrs, l.service+"_endpoint", "http://"+l.ln.Addr().String()+"/devstoreaccount1")
	}
	attrs = append(attrs, "data_dir", cfg.DataDir, "in_memory", cfg.InMemory)
	log.Info("tablo listening", attrs...)
	return a, nil
}

// Addr is the Table service's listening address (nil when it is not started).
func (a *App) Addr() net.Addr { return a.ServiceAddr("table") }

// ServiceAddr is the listening address of a started service ("table", "queue"), or nil.
func (a *App) ServiceAddr(service string) net.Addr {
	for _, l := range a.listeners {
		if l.service == service {
			return l.ln.Addr()
		}
	}
	return nil
}

// closeListeners stops every service's HTTP server.
func (a *App) closeListeners(ctx context.Context) []error {
	var errs []error
	for _, l := range a.listeners {
		if err := l.http.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("app: %s http shutdown: %w", l.service, err))
		}
	}
	return errs
}

// Done is closed-ish: it yields the Serve error if the listener fails on its own.
func (a *App) Done() <-chan error { return a.served }

// Close shuts down in order: stop accepting connections on every service's listener and
// drain in-flight requests (up to the context's deadline), stop pprof, then flush and close the engine. Safe to call twice.
func (a *App) Close(ctx context.Context) error {
	if a.closing {
		return nil
	}
	a.closing = true
	errs := a.closeListeners(ctx)
	if a.pprof != nil {
		_ = a.pprof.Close()
	}
	a.qsv.Close()
	a.svc.Close()
	if err := a.db.Close(); err != nil {
		errs = append(errs, err)
	}
	a.log.Info("tablo stopped")
	return errors.Join(errs...)
}
