package config

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, err := Load(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "127.0.0.1" || c.TablePort != 10002 || c.DataDir != "./tablo-data" || c.InMemory ||
		c.LogLevel != slog.LevelInfo || len(c.Accounts) != 1 || c.Accounts[0].Name != "devstoreaccount1" {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestEnvAndFlagsFlagsWin(t *testing.T) {
	e := env(map[string]string{"TABLO_HOST": "0.0.0.0", "TABLO_TABLE_PORT": "1234", "TABLO_DATA_DIR": "/d", "TABLO_LOG_LEVEL": "debug", "TABLO_IN_MEMORY": "true"})
	c, err := Load([]string{"--table-port", "4321"}, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "0.0.0.0" || c.TablePort != 4321 || c.DataDir != "/d" || c.LogLevel != slog.LevelDebug || !c.InMemory {
		t.Fatalf("%+v", c)
	}
	c, err = Load([]string{"--group-commit-window", "1ms"}, env(map[string]string{"TABLO_GROUP_COMMIT_WINDOW": "5ms"}), io.Discard)
	if err != nil || c.GroupCommitWindow != time.Millisecond {
		t.Fatalf("group commit window: %v %v", c.GroupCommitWindow, err)
	}
	c, err = Load(nil, env(map[string]string{"TABLO_GROUP_COMMIT_WINDOW": "5ms"}), io.Discard)
	if err != nil || c.GroupCommitWindow != 5*time.Millisecond {
		t.Fatalf("group commit window from env: %v %v", c.GroupCommitWindow, err)
	}
	if c.ColumnCacheBytes != 64<<20 {
		t.Fatalf("default column cache: %d", c.ColumnCacheBytes)
	}
	c, err = Load(nil, env(map[string]string{"TABLO_COLUMN_CACHE_MB": "0"}), io.Discard)
	if err != nil || c.ColumnCacheBytes != 0 {
		t.Fatalf("column cache off from env: %v %v", c.ColumnCacheBytes, err)
	}
	c, err = Load([]string{"--accounts", "acct1:" + "AAAA" + ":" + "BBBB" + ",acct2:CCCC"}, env(nil), io.Discard)
	if err != nil || len(c.Accounts) != 2 || len(c.Accounts[0].Keys) != 2 {
		t.Fatalf("accounts: %+v %v", c.Accounts, err)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	_, err := Load([]string{"--table-port", "x", "--log-level", "loud", "--accounts", "bad", "--group-commit-window", "soon", "--column-cache-mb", "-1"}, env(nil), io.Discard)
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{"--table-port", "--log-level", "--accounts", "--group-commit-window", "--column-cache-mb"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestPostgresFlags(t *testing.T) {
	c, err := Load(nil, env(map[string]string{"TABLO_POSTGRES_URL": "postgres://h/db", "TABLO_POSTGRES_POOL_SIZE": "12"}), io.Discard)
	if err != nil || c.PostgresURL != "postgres://h/db" || c.PostgresPoolSize != 12 || c.PostgresStatementTimeout != 10*time.Second {
		t.Fatalf("from env: %+v %v", c, err)
	}
	c, err = Load([]string{"--postgres", "host=x", "--postgres-statement-timeout", "3s"}, env(map[string]string{"TABLO_POSTGRES_URL": "postgres://h/db"}), io.Discard)
	if err != nil || c.PostgresURL != "host=x" || c.PostgresStatementTimeout != 3*time.Second {
		t.Fatalf("flags: %+v %v", c, err)
	}
	_, err = Load([]string{"--postgres", "postgres://h/db", "--in-memory", "--postgres-pool-size", "many", "--postgres-statement-timeout", "0"}, env(nil), io.Discard)
	for _, want := range []string{"--in-memory", "--postgres-pool-size", "--postgres-statement-timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}
