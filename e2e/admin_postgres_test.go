package e2e

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// TestAdminOnPostgres: on the PostgreSQL engine the admin listener's /readyz pings the
// database, a full reset empties it through the engine, the snapshot endpoints (a Pebble
// feature) answer 501 with a message saying so instead of failing obscurely, and blobs larger
// than the inline size round-trip.
func TestAdminOnPostgres(t *testing.T) {
	url := pgtest.URL(t) // skips without a test database
	s := startOpsServer(t, t.TempDir(), func(c *config.Config) { c.PostgresURL = url })
	if code, body := httpGet(t, s.admin+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz: %d %s", code, body)
	}
	svc := s.tables(t, devAccount, devKey)
	if _, err := svc.CreateTable(ctx, "gone", nil); err != nil {
		t.Fatal(err)
	}
	ac := s.adminClient()
	if _, err := ac.Reset(ctx, ""); err != nil {
		t.Fatalf("reset: %v", err)
	}
	if n := countTables(t, svc); n != 0 {
		t.Fatalf("%d tables after the reset, want 0", n)
	}
	// The table service works after the reset (its caches were dropped).
	if _, err := svc.CreateTable(ctx, "gone", nil); err != nil {
		t.Fatalf("create after reset: %v", err)
	}
	if _, err := ac.SaveSnapshot(ctx, "base"); err == nil || !strings.Contains(err.Error(), "Pebble") {
		t.Fatalf("snapshot save on PostgreSQL: %v, want a not-supported error naming Pebble", err)
	}
	// Blob data beyond the inline size lives in the engine's extents (chunk rows) here too.
	bc, err := azblob.NewClientWithSharedKeyCredential("http://"+s.app.ServiceAddr("blob").String()+"/"+devAccount+"/", mustBlobCred(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bc.CreateContainer(ctx, "pgblobs", nil); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 1<<20+5)
	for i := range data {
		data[i] = byte(i*7 + i>>10)
	}
	if _, err := bc.UploadBuffer(ctx, "pgblobs", "b", data, nil); err != nil {
		t.Fatalf("blob upload on PostgreSQL: %v", err)
	}
	got := make([]byte, len(data))
	if n, err := bc.DownloadBuffer(ctx, "pgblobs", "b", got, nil); err != nil || n != int64(len(data)) || !bytes.Equal(got, data) {
		t.Fatalf("blob download on PostgreSQL: %d bytes, %v", n, err)
	}
	resp, err := http.Get(s.admin + "/snapshots")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotImplemented {
		t.Fatalf("GET /snapshots on PostgreSQL: %d, want 501", resp.StatusCode)
	}
}

func countTables(t *testing.T, svc *aztables.ServiceClient) int {
	t.Helper()
	n := 0
	pager := svc.NewListTablesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Tables)
	}
	return n
}

func mustBlobCred(t *testing.T) *azblob.SharedKeyCredential {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	return cred
}
