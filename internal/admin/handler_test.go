package admin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// failing is a Controller whose snapshot calls fail with err.
type failing struct{ err error }

func (failing) Ready(context.Context) error                     { return nil }
func (failing) Reset(context.Context, string) error             { return nil }
func (f failing) SaveSnapshot(context.Context, string) error    { return f.err }
func (f failing) RestoreSnapshot(context.Context, string) error { return f.err }
func (f failing) Snapshots(context.Context) ([]string, error)   { return nil, f.err }
func (f failing) DeleteSnapshot(context.Context, string) error  { return f.err }

// TestUnsupportedIsNotAnError: a request for what the engine does not offer (snapshots on
// PostgreSQL) answers 501 and is logged as a warning, not as a server error; a real failure
// is still logged at Error level.
func TestUnsupportedIsNotAnError(t *testing.T) {
	for _, c := range []struct {
		err        error
		status     int
		level, not string
	}{
		{fmt.Errorf("snapshots need Pebble: %w", ErrUnsupported), http.StatusNotImplemented, "level=WARN", "level=ERROR"},
		{errors.New("disk on fire"), http.StatusInternalServerError, "level=ERROR", "level=WARN"},
	} {
		var logs bytes.Buffer
		h := Handler(failing{c.err}, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(&logs, nil)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/snapshots/base", nil))
		if rec.Code != c.status {
			t.Errorf("%v: status %d, want %d", c.err, rec.Code, c.status)
		}
		if out := logs.String(); !strings.Contains(out, c.level) || strings.Contains(out, c.not) {
			t.Errorf("%v: logged %q, want %s and no %s", c.err, out, c.level, c.not)
		}
	}
}
