// Package admin is Tablo's admin listener (health, readiness, Prometheus metrics and the
// test-loop helpers: reset and named snapshots) and the client the `tablo reset` and
// `tablo snapshot` commands use to call it.
//
// Endpoints (all answer JSON except /metrics and the probes' plain text):
//
//	GET    /healthz                    200 while the process runs
//	GET    /readyz                     200 when the engine is open and accepts a durable write, else 503
//	GET    /metrics                    Prometheus text format
//	POST   /reset[?account=NAME]       delete all data (of one account)
//	GET    /snapshots                  {"snapshots":["a","b"]}
//	POST   /snapshots/NAME             save the current state as NAME (409 if it exists)
//	POST   /snapshots/NAME/restore     replace the current state with NAME (404 if none)
//	DELETE /snapshots/NAME             delete NAME
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Controller is what the admin endpoints act on (the running server).
type Controller interface {
	// Ready reports whether the engine is open and writable.
	Ready(ctx context.Context) error
	// Reset deletes every account's data, or one account's when account is not "".
	Reset(ctx context.Context, account string) error
	SaveSnapshot(ctx context.Context, name string) error
	RestoreSnapshot(ctx context.Context, name string) error
	Snapshots(ctx context.Context) ([]string, error)
	DeleteSnapshot(ctx context.Context, name string) error
}

// Errors a Controller returns (wrapped) to choose the HTTP status.
var (
	ErrNotFound    = errors.New("not found")
	ErrExists      = errors.New("already exists")
	ErrInvalid     = errors.New("invalid request")
	ErrUnsupported = errors.New("not supported")
)

// Handler returns the admin listener's handler.
func Handler(c Controller, metrics prometheus.Gatherer, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if err := c.Ready(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("not ready: " + err.Error() + "\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}))
	act := func(name string, fn func(r *http.Request) (any, error)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			out, err := fn(r)
			ms := float64(time.Since(start).Microseconds()) / 1000
			if err != nil {
				status := statusOf(err)
				switch {
				case status == http.StatusNotImplemented:
					// The client asked for what this engine does not offer (snapshots on
					// PostgreSQL): its answer says so; nothing is wrong with the server.
					log.Warn("admin "+name+" not supported", "err", err)
				case status >= 500:
					log.Error("admin "+name+" failed", "err", err)
				}
				writeJSON(w, status, map[string]any{"error": err.Error()})
				return
			}
			log.Info("admin "+name, "path", r.URL.Path, "account", r.URL.Query().Get("account"), "duration_ms", ms)
			if out == nil {
				out = map[string]any{"ok": true, "duration_ms": ms}
			}
			writeJSON(w, http.StatusOK, out)
		}
	}
	mux.HandleFunc("POST /reset", act("reset", func(r *http.Request) (any, error) {
		return nil, c.Reset(r.Context(), r.URL.Query().Get("account"))
	}))
	mux.HandleFunc("GET /snapshots", act("list snapshots", func(r *http.Request) (any, error) {
		names, err := c.Snapshots(r.Context())
		if names == nil {
			names = []string{}
		}
		return map[string]any{"snapshots": names}, err
	}))
	mux.HandleFunc("POST /snapshots/{name}", act("save snapshot", func(r *http.Request) (any, error) {
		return nil, c.SaveSnapshot(r.Context(), r.PathValue("name"))
	}))
	mux.HandleFunc("POST /snapshots/{name}/restore", act("restore snapshot", func(r *http.Request) (any, error) {
		return nil, c.RestoreSnapshot(r.Context(), r.PathValue("name"))
	}))
	mux.HandleFunc("DELETE /snapshots/{name}", act("delete snapshot", func(r *http.Request) (any, error) {
		return nil, c.DeleteSnapshot(r.Context(), r.PathValue("name"))
	}))
	return mux
}

func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrExists):
		return http.StatusConflict
	case errors.Is(err, ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, ErrUnsupported):
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
