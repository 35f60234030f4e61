package migrate

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

var ctx = context.Background()

// fill writes n keys (some with empty values) into a fresh Pebble directory.
func fill(t *testing.T, dir string, n int) {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(ctx, nil, func(tx store.Txn) error {
		for i := range n {
			v := []byte(strings.Repeat("v", i%7))
			if err := tx.Set(fmt.Appendf(nil, "k\x00%05d\xff", i), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func dump(t *testing.T, dir string) string {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b bytes.Buffer
	if err := db.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) { fmt.Fprintf(&b, "%q=%q\n", k, v); return true, nil }); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRoundTrip: Pebble → PostgreSQL → Pebble gives back exactly the original key space,
// with progress output and a verification line; a non-empty destination is refused.
func TestRoundTrip(t *testing.T) {
	url := pgtest.URL(t)
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	fill(t, a, 2500)
	var out bytes.Buffer
	res, err := Run(ctx, Options{From: a, To: url, Progress: &out})
	if err != nil || res.Keys != 2500 {
		t.Fatalf("to PostgreSQL: %+v, %v\n%s", res, err, out.String())
	}
	if !strings.Contains(out.String(), "verified: 2500 keys") {
		t.Fatalf("no verification line:\n%s", out.String())
	}
	if _, err := Run(ctx, Options{From: a, To: url}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("copy into a non-empty destination: %v", err)
	}
	if res, err := Run(ctx, Options{From: url, To: b}); err != nil || res.Keys != 2500 {
		t.Fatalf("back to Pebble: %+v, %v", res, err)
	}
	if dump(t, a) != dump(t, b) {
		t.Fatal("round trip changed the data")
	}
}

func TestRefusesMissingSource(t *testing.T) {
	if _, err := Run(ctx, Options{From: filepath.Join(t.TempDir(), "none"), To: t.TempDir()}); err == nil {
		t.Fatal("a missing source was accepted")
	}
}
