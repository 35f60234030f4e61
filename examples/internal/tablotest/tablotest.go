// Package tablotest starts an in-process Tablo on a free loopback port for the pattern
// examples' tests.
package tablotest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/examples/internal/plans"
	"github.com/tablo/tablo/internal/app"
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/partition"
)

const (
	account = "devstoreaccount1"
	key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Server is a running in-memory Tablo.
type Server struct {
	// Conn is a connection string for the development account on this server.
	Conn string
	// PartitionsURL serves the partition layer's statistics as JSON (GET).
	PartitionsURL string
}

// StartWith starts Tablo and adds the endpoints of the other services named ("queue",
// "blob") to Conn. A test that needs a service this build lacks is skipped, naming it.
func StartWith(t testing.TB, services ...string) *Server {
	t.Helper()
	srv, a := start(t, "")
	for _, s := range services {
		addr := a.ServiceAddr(s)
		if addr == nil {
			t.Skipf("needs the %s service, which this build of Tablo does not have", s)
		}
		srv.Conn += fmt.Sprintf("%s%sEndpoint=http://%s/%s;", strings.ToUpper(s[:1]), s[1:], addr, account)
	}
	return srv
}

// Start starts Tablo (in memory: the examples test behaviour, not durability) and stops it
// when the test ends.
func Start(t testing.TB) *Server { return StartEmulating(t, "") }

// StartEmulating starts Tablo with the --emulate-targets spec emulate ("" observes only).
func StartEmulating(t testing.TB, emulate string) *Server {
	t.Helper()
	srv, _ := start(t, emulate)
	return srv
}

// start starts every service this build has, each on a free port.
func start(t testing.TB, emulate string) (*Server, *app.App) {
	t.Helper()
	cfg := config.Config{Host: "127.0.0.1", InMemory: true, Accounts: []auth.Account{auth.DevAccount()}}
	var err error
	if cfg.Partition, err = partition.ParseOptions(emulate); err != nil {
		t.Fatal(err)
	}
	a, err := app.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	// The server serves the statistics on its --pprof address; a test serves the same
	// handler on a port of its own.
	admin := httptest.NewServer(a.Partitions().Handler())
	t.Cleanup(admin.Close)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	endpoint := fmt.Sprintf("http://%s/%s", a.Addr(), account)
	return &Server{
		Conn:          fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;", account, key, endpoint),
		PartitionsURL: admin.URL + "/partitions",
	}, a
}

// TableService returns a Table service client that records query plans (printing them to
// the test log) and the recorder. retry false turns the SDK's retries off.
func (s *Server) TableService(t testing.TB, retry bool) (*aztables.ServiceClient, *plans.Recorder) {
	t.Helper()
	rec := plans.NewRecorder(testWriter{t})
	svc, err := plans.TableService(s.Conn, rec, retry)
	if err != nil {
		t.Fatal(err)
	}
	return svc, rec
}

// Writer is an io.Writer into the test log, for an example's narration.
func Writer(t testing.TB) io.Writer { return testWriter{t} }

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
