package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/admin"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/httpserve"
	"github.com/tablo/tablo/internal/metrics"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/tlsconfig"
)

// ops is the operational side of the App: TLS shared by every listener, the metrics
// registry, the admin listener, and the gate that makes resets and snapshot restores atomic
// for clients.
type ops struct {
	tls     *tls.Config // nil: plain HTTP
	caPath  string      // the self-signed CA clients must trust ("" unless --tls-self-signed)
	reg     *prometheus.Registry
	metrics *metrics.Metrics
	// gate is held shared by every storage request and exclusively by a reset or restore,
	// which replace the store's contents and drop every cache above it: a request sees the
	// old state or the new one, never a mix (nor caches of one over the store of the other).
	gate     sync.RWMutex
	admin    *http.Server
	adminLn  net.Listener
	adminErr chan error
	// dropCaches are called, under the gate, after the store's contents change underneath
	// the services.
	dropCaches []func()
	// deleteAccount are called, under the gate, by a reset of one account: each service
	// deletes that account's data (a reset of all is one engine-wide range deletion).
	deleteAccount []func(ctx context.Context, account string) error
	// beforeRestore, when set (tests), runs after the caches are dropped and before the
	// engine restores: requests made then must wait for the restore.
	beforeRestore func()
}

// newOps makes the metrics registry.
func newOps() *ops {
	o := &ops{reg: prometheus.NewRegistry()}
	o.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	o.metrics = metrics.New(o.reg)
	return o
}

// loadTLS builds the TLS configuration every storage listener serves with (none unless
// configured); a self-signed CA and certificate live in dataDir/tls.
func (o *ops) loadTLS(cfg config.Config, dataDir string) error {
	switch {
	case cfg.CertFile != "":
		c, err := tlsconfig.FromFiles(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return err
		}
		o.tls = c
	case cfg.TLSSelfSigned:
		var hosts []string
		if h := cfg.Host; h != "" && h != "0.0.0.0" && h != "::" {
			hosts = append(hosts, h)
		}
		if h, err := os.Hostname(); err == nil && h != "" {
			hosts = append(hosts, h)
		}
		c, ca, err := tlsconfig.SelfSigned(filepath.Join(dataDir, "tls"), hosts, time.Now())
		if err != nil {
			return err
		}
		o.tls, o.caPath = c, ca
	}
	return nil
}

// serveStorage prepares a storage service's HTTP server: TLS when configured, the gate, and
// its open-connections gauge. Every storage listener goes through here.
func (o *ops) serveStorage(service string, s *httpserve.Server) {
	s.TLS = o.tls
	h := s.HTTP.Handler
	s.HTTP.Handler = func(fc *fasthttp.RequestCtx) {
		o.gate.RLock()
		defer o.gate.RUnlock()
		h(fc)
	}
	o.metrics.Connections(service, s.OpenConns)
}

// bindAdmin binds the admin listener's port if one is configured (with the storage
// listeners, before anything is created).
func (a *App) bindAdmin() error {
	if a.cfg.AdminAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", a.cfg.AdminAddr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("admin listener: %s is already in use (another Tablo?); choose another port with --admin-port, or -1 for none", a.cfg.AdminAddr)
	}
	if err != nil {
		return fmt.Errorf("admin listener: cannot listen on %s: %w", a.cfg.AdminAddr, err)
	}
	a.adminLn = ln
	return nil
}

// serveAdmin serves the admin endpoints on the bound admin listener.
func (a *App) serveAdmin() {
	if a.adminLn == nil {
		return
	}
	ln := a.adminLn
	mux := http.NewServeMux()
	ah := admin.Handler(controller{a}, a.reg, a.log)
	for _, p := range []string{"/healthz", "/readyz", "/metrics", "/reset", "/snapshots", "/snapshots/"} {
		mux.Handle(p, ah)
	}
	// The partition layer's API (tablo partitions) is admin too.
	mux.Handle("/partitions", a.parts.Handler())
	mux.Handle("/faults", a.parts.Handler())
	// Everything else is the web console.
	mux.Handle("/", a.console(ln.Addr()))
	a.admin = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	a.adminErr = make(chan error, 1)
	go func() { a.adminErr <- a.admin.Serve(ln) }()
	a.log.Debug("admin listening", "url", "http://"+ln.Addr().String(), "endpoints", "/healthz /readyz /metrics /reset /snapshots /partitions /faults")
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		a.log.Warn("the admin listener is reachable from other machines and has no authentication: anyone who reaches it can reset or restore the data", "addr", ln.Addr().String())
	}
}

// AdminAddr is the admin listener's address (nil when there is none).
func (a *App) AdminAddr() net.Addr {
	if a.adminLn == nil {
		return nil
	}
	return a.adminLn.Addr()
}

// CAPath is the self-signed CA certificate clients must trust ("" without
// --tls-self-signed).
func (a *App) CAPath() string { return a.caPath }

// Registry is the Prometheus registry every component registers on.
func (a *App) Registry() *prometheus.Registry { return a.reg }

// closeAdmin stops the admin listener.
func (a *App) closeAdmin(ctx context.Context) error {
	if a.admin == nil {
		return nil
	}
	if err := a.admin.Shutdown(ctx); err != nil {
		return fmt.Errorf("app: admin shutdown: %w", err)
	}
	return nil
}

// controller implements admin.Controller on the App.
type controller struct{ a *App }

func (c controller) Ready(ctx context.Context) error { return c.a.Ready(ctx) }

// errSnapshotsUnsupported answers the snapshot endpoints on an engine without snapshots.
var errSnapshotsUnsupported = fmt.Errorf("snapshots are a feature of the Pebble engine; on --postgres use the database's own backups: %w", admin.ErrUnsupported)

// snapshotter is the Pebble engine, or errSnapshotsUnsupported.
func (c controller) snapshotter() (*pebblestore.DB, error) {
	if c.a.pebble == nil {
		return nil, errSnapshotsUnsupported
	}
	return c.a.pebble, nil
}

// deleteAll empties the engine (every account, every service) in one transaction.
func (c controller) deleteAll(ctx context.Context) error {
	if c.a.pebble != nil {
		return c.a.pebble.DeleteAll(ctx)
	}
	return c.a.db.Update(ctx, nil, func(tx store.Txn) error {
		return tx.DeleteRange([]byte{}, []byte{0xff, 0xff, 0xff, 0xff})
	})
}

// exclusive runs fn with every storage request kept out, then drops the caches above the
// store.
func (c controller) exclusive(fn func() error) error {
	c.a.gate.Lock()
	defer c.a.gate.Unlock()
	err := fn()
	for _, drop := range c.a.dropCaches {
		drop()
	}
	return err
}

func (c controller) Reset(ctx context.Context, account string) error {
	if account == "" {
		return c.exclusive(func() error { return c.deleteAll(ctx) })
	}
	known := false
	for _, acc := range c.a.cfg.Accounts {
		known = known || acc.Name == account
	}
	if !known {
		return fmt.Errorf("account %q: %w", account, admin.ErrNotFound)
	}
	return c.exclusive(func() error {
		for _, del := range c.a.deleteAccount {
			if err := del(ctx, account); err != nil {
				return err
			}
		}
		return nil
	})
}

func (c controller) SaveSnapshot(ctx context.Context, name string) error {
	// No gate: a checkpoint is one consistent point of the engine, and every request's
	// writes are one atomic commit, so it holds each request's writes entirely or not at all.
	db, err := c.snapshotter()
	if err != nil {
		return err
	}
	return snapshotErr(db.SaveSnapshot(ctx, name))
}

func (c controller) RestoreSnapshot(ctx context.Context, name string) error {
	db, err := c.snapshotter()
	if err != nil {
		return err
	}
	if !pebblestore.ValidSnapshotName(name) {
		return snapshotErr(fmt.Errorf("%q: %w", name, pebblestore.ErrSnapshotName))
	}
	if names, err := db.Snapshots(); err == nil && !contains(names, name) {
		return fmt.Errorf("snapshot %q: %w", name, admin.ErrNotFound)
	}
	// The caches go first: a column-cache build in progress holds an engine snapshot, which
	// the restore would wait for.
	c.a.gate.Lock()
	defer c.a.gate.Unlock()
	for _, drop := range c.a.dropCaches {
		drop()
	}
	if c.a.beforeRestore != nil {
		c.a.beforeRestore()
	}
	return snapshotErr(db.RestoreSnapshot(ctx, name))
}

func (c controller) Snapshots(ctx context.Context) ([]string, error) {
	db, err := c.snapshotter()
	if err != nil {
		return nil, err
	}
	return db.Snapshots()
}

func (c controller) DeleteSnapshot(ctx context.Context, name string) error {
	db, err := c.snapshotter()
	if err != nil {
		return err
	}
	return snapshotErr(db.DeleteSnapshot(name))
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// snapshotErr maps the engine's snapshot errors to the admin API's.
func snapshotErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pebblestore.ErrSnapshotNotFound):
		return fmt.Errorf("%w: %w", admin.ErrNotFound, err)
	case errors.Is(err, pebblestore.ErrSnapshotExists):
		return fmt.Errorf("%w: %w", admin.ErrExists, err)
	case errors.Is(err, pebblestore.ErrSnapshotName):
		return fmt.Errorf("%w: %w", admin.ErrInvalid, err)
	}
	return err
}
