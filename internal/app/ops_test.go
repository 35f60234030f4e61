package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
)

const devKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

func startTest(t *testing.T) (*App, *aztables.ServiceClient) {
	t.Helper()
	cfg := config.Config{Host: "127.0.0.1", DataDir: t.TempDir(), Accounts: []auth.Account{auth.DevAccount()},
		Ops: config.Ops{AdminAddr: "127.0.0.1:0"}}
	a, err := Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	cs := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;TableEndpoint=http://%s/devstoreaccount1;", devKey, a.Addr())
	svc, err := aztables.NewServiceClientFromConnectionString(cs, &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	return a, svc
}

// A request that arrives while a restore is under way waits for it (the gate): had it run
// between the cache drop and the engine swap, it would have cached the old state's catalog
// over the restored store, and "added" would resolve to a table the restored state lacks.
func TestRequestDuringRestoreWaitsForIt(t *testing.T) {
	ctx := context.Background()
	a, svc := startTest(t)
	if _, err := svc.CreateTable(ctx, "base", nil); err != nil {
		t.Fatal(err)
	}
	c := controller{a}
	if err := c.SaveSnapshot(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, "added", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.NewClient("added").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatal(err)
	}
	during := make(chan error, 1)
	a.beforeRestore = func() {
		go func() {
			_, err := svc.NewClient("added").GetEntity(ctx, "p", "r", nil)
			during <- err
		}()
		time.Sleep(100 * time.Millisecond) // the request has long arrived
	}
	if err := c.RestoreSnapshot(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{<-during, get(ctx, svc)} {
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.ErrorCode != "TableNotFound" {
			t.Fatalf("want TableNotFound (the restored state), got %v", err)
		}
	}
}

func get(ctx context.Context, svc *aztables.ServiceClient) error {
	_, err := svc.NewClient("added").GetEntity(ctx, "p", "r", nil)
	return err
}

// The readiness probe fails once the engine is closed; the liveness probe does not.
func TestReadyzFollowsTheEngine(t *testing.T) {
	a, _ := startTest(t)
	probe := func(path string) int {
		resp, err := http.Get("http://" + a.AdminAddr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if probe("/readyz") != 200 || probe("/healthz") != 200 {
		t.Fatal("not ready at start")
	}
	a.svc.Close()
	if err := a.db.Close(); err != nil {
		t.Fatal(err)
	}
	if probe("/readyz") != 503 || probe("/healthz") != 200 {
		t.Fatal("probes with the engine closed")
	}
}
