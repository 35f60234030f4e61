package e2e

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// TestMigrateToPostgres: data written through the SDK to Tablo on a data directory is served
// from PostgreSQL after `tablo migrate`, which prints progress and a verification count.
func TestMigrateToPostgres(t *testing.T) {
	if onPostgres() {
		t.Skip("engine-independent: runs in the default pass")
	}
	url := pgtest.URL(t)
	bin := buildTablo(t)
	dir := t.TempDir()
	p, _ := startTabloWith(t, bin, "--data-dir", dir)
	if _, err := p.service(t).CreateTable(ctx, "moved", nil); err != nil {
		t.Fatal(err)
	}
	tc := p.service(t).NewClient("moved")
	for _, rk := range []string{"a", "b", "c"} {
		if _, err := tc.AddEntity(ctx, mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "V": rk}), nil); err != nil {
			t.Fatal(err)
		}
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.waitExit(t, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "migrate", "--from", dir, "--to", url).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "verified:") {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	q, _ := startTabloWith(t, bin, "--postgres", url)
	pager := q.service(t).NewClient("moved").NewListEntitiesPager(nil)
	n := 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Entities)
	}
	if n != 3 {
		t.Fatalf("%d entities after the migration, want 3\n%s", n, out)
	}
}
