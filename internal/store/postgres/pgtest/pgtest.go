// Package pgtest gives a test its own empty schema in the PostgreSQL server named by
// TABLO_TEST_POSTGRES_URL, so that tests sharing one server never see each other's data.
// Without that variable the test is skipped with a message saying how to run it, unless
// TABLO_REQUIRE_POSTGRES is set (CI), when it fails instead.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env names the server; RequireEnv turns a missing server into a failure.
const (
	Env        = "TABLO_TEST_POSTGRES_URL"
	RequireEnv = "TABLO_REQUIRE_POSTGRES"
)

// Base returns the server's URL, or skips (fails under RequireEnv) when there is none.
func Base(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	if base == "" {
		msg := "needs PostgreSQL: apt-get install -y postgresql, then export " + Env + "=$(scripts/pg-throwaway) and run the tests again"
		if os.Getenv(RequireEnv) != "" {
			t.Fatal(msg + " (" + RequireEnv + " is set: these tests must not skip)")
		}
		t.Skip(msg)
	}
	return base
}

// URL creates a fresh schema for this test (dropped at cleanup) and returns a URL whose
// connections use it.
func URL(t testing.TB) string {
	t.Helper()
	base := Base(t)
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	schema := "tablo_test_" + hex.EncodeToString(rnd[:])
	exec(t, base, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { exec(t, base, "DROP SCHEMA "+schema+" CASCADE") })
	return WithParam(base, "search_path", schema)
}

// WithParam adds a connection parameter to a postgres:// URL or a key=value DSN.
func WithParam(base, name, value string) string {
	if strings.Contains(base, "://") {
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		return base + sep + name + "=" + value
	}
	return base + " " + name + "=" + value
}

func exec(t testing.TB, url, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}
