package config

import (
	"bytes"
	"errors"
	"flag"
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
		c.LogLevel != slog.LevelInfo || len(c.Accounts) != 1 || c.Accounts[0].Name != "devstoreaccount1" ||
		c.ShutdownTimeout != 10*time.Second || c.GroupCommitWindow != 300*time.Microsecond || c.LogFormat != "auto" {
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
	if c.RequestDateWindow != 15*time.Minute {
		t.Fatalf("default request date window: %v", c.RequestDateWindow)
	}
	c, err = Load(nil, env(map[string]string{"TABLO_REQUEST_DATE_WINDOW": "2h"}), io.Discard)
	if err != nil || c.RequestDateWindow != 2*time.Hour {
		t.Fatalf("request date window from env: %v %v", c.RequestDateWindow, err)
	}
	c, err = Load([]string{"--request-date-window", "1h"}, env(map[string]string{"TABLO_REQUEST_DATE_WINDOW": "2h"}), io.Discard)
	if err != nil || c.RequestDateWindow != time.Hour {
		t.Fatalf("request date window flag: %v %v", c.RequestDateWindow, err)
	}
	c, err = Load([]string{"--accounts", "acct1:" + "AAAA" + ":" + "BBBB" + ",acct2:CCCC"}, env(nil), io.Discard)
	if err != nil || len(c.Accounts) != 2 || len(c.Accounts[0].Keys) != 2 {
		t.Fatalf("accounts: %+v %v", c.Accounts, err)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	_, err := Load([]string{"--table-port", "x", "--log-level", "loud", "--accounts", "bad", "--group-commit-window", "soon", "--column-cache-mb", "-1", "--request-date-window", "0"}, env(nil), io.Discard)
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{"--table-port", "--log-level", "--accounts", "--group-commit-window", "--column-cache-mb", "--request-date-window"} {
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

func TestServicesAndPorts(t *testing.T) {
	c, err := Load(nil, env(nil), io.Discard)
	if err != nil || c.QueuePort != 10001 || c.BlobPort != 10000 || !c.Starts("table") || !c.Starts("queue") || !c.Starts("blob") {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	for _, name := range Available {
		if !c.Starts(name) || !(Config{}).Starts(name) {
			t.Fatalf("%s not started by default", name)
		}
	}
	c, err = Load([]string{"--services", "table", "--queue-port", "2"}, env(map[string]string{"TABLO_SERVICES": "queue", "TABLO_QUEUE_PORT": "1"}), io.Discard)
	if err != nil || !c.Starts("table") || c.QueuePort != 2 || len(c.Services) != 1 {
		t.Fatalf("flags: %+v %v", c, err)
	}
	c, err = Load(nil, env(map[string]string{"TABLO_SERVICES": " Table ", "TABLO_BLOB_PORT": "1"}), io.Discard)
	if err != nil || !c.Starts("table") || c.BlobPort != 1 {
		t.Fatalf("env: %+v %v", c, err)
	}
	c, err = Load([]string{"--services", "queue"}, env(nil), io.Discard)
	if err != nil || c.Starts("table") || !c.Starts("queue") {
		t.Fatalf("queue only: %+v %v", c, err)
	}
	c, err = Load([]string{"--services", "blob,table"}, env(nil), io.Discard)
	if err != nil || !c.Starts("table") || c.Starts("queue") || !c.Starts("blob") {
		t.Fatalf("blob and table: %+v %v", c, err)
	}
	for _, bad := range []string{"table,table", "files", ""} {
		if _, err := Load([]string{"--services", bad}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--services") {
			t.Errorf("--services %q: %v", bad, err)
		}
	}
	if _, err := Load([]string{"--queue-port", "x", "--blob-port", "70000"}, env(nil), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "--queue-port") || !strings.Contains(err.Error(), "--blob-port") {
		t.Fatalf("bad ports: %v", err)
	}
}

func TestBooleanSpellings(t *testing.T) {
	for _, v := range []string{"1", "true", "TRUE", "yes", "Yes", "on", "ON"} {
		c, err := Load(nil, env(map[string]string{"TABLO_IN_MEMORY": v}), io.Discard)
		if err != nil || !c.InMemory {
			t.Errorf("TABLO_IN_MEMORY=%s: in-memory %v, err %v", v, c.InMemory, err)
		}
	}
	for _, v := range []string{"0", "false", "False", "no", "NO", "off", "Off"} {
		c, err := Load([]string{"--in-memory=" + v}, env(map[string]string{"TABLO_IN_MEMORY": "yes"}), io.Discard)
		if err != nil || c.InMemory {
			t.Errorf("--in-memory=%s: in-memory %v, err %v", v, c.InMemory, err)
		}
	}
	c, err := Load([]string{"--in-memory"}, env(nil), io.Discard)
	if err != nil || !c.InMemory {
		t.Errorf("--in-memory alone: %v %v", c.InMemory, err)
	}
}

// A bad environment value is a start-up error that names the variable and the accepted values.
func TestBadEnvironmentValuesAreErrors(t *testing.T) {
	cases := map[string]string{
		"TABLO_IN_MEMORY":        "y",
		"TABLO_TABLE_PORT":       "70000",
		"TABLO_SHUTDOWN_TIMEOUT": "10",
		"TABLO_LOG_LEVEL":        "loud",
		"TABLO_LOG_FORMAT":       "xml",
		"TABLO_COLUMN_CACHE_MB":  "lots",
	}
	for name, v := range cases {
		_, err := Load(nil, env(map[string]string{name: v}), io.Discard)
		if err == nil {
			t.Errorf("%s=%s accepted", name, v)
			continue
		}
		if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "want") {
			t.Errorf("%s=%s: error %q does not name the variable and the accepted values", name, v, err)
		}
	}
	_, err := Load(nil, env(map[string]string{"TABLO_IN_MEMORY": "y"}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "1, 0, true, false, yes, no, on or off") {
		t.Errorf("boolean error %v does not list the spellings", err)
	}
}

func TestEveryFlagHasItsVariable(t *testing.T) {
	for _, name := range Names() {
		// A value that is valid for every kind of flag would be hard; check the variable is read
		// by making it invalid where a string would not be.
		want := EnvVar(name)
		if !strings.HasPrefix(want, "TABLO_") || strings.Contains(want, "-") {
			t.Errorf("%s: variable %s", name, want)
		}
	}
	if EnvVar("table-port") != "TABLO_TABLE_PORT" {
		t.Fatal(EnvVar("table-port"))
	}
}

func TestHelpShowsTypesAndRealDefaults(t *testing.T) {
	var out bytes.Buffer
	_, err := Load([]string{"-h"}, env(nil), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("want ErrHelp, got %v", err)
	}
	help := out.String()
	for _, want := range []string{
		"--group-commit-window duration", "default 300µs",
		"--table-port port", "default 10002", "env TABLO_TABLE_PORT",
		"--shutdown-timeout duration", "default 10s",
		"--column-cache-mb MiB", "default 64",
		"--in-memory ", "default false", "env TABLO_IN_MEMORY",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	for _, name := range Names() {
		if !strings.Contains(help, "--"+name+" ") || !strings.Contains(help, EnvVar(name)) {
			t.Errorf("help lacks --%s or its variable", name)
		}
	}
}

func TestUnexpectedArgument(t *testing.T) {
	_, err := Load([]string{"extra"}, env(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "extra") {
		t.Fatalf("want an error naming the argument, got %v", err)
	}
}

func TestPartitionFlags(t *testing.T) {
	c, err := Load(nil, env(nil), io.Discard)
	if err != nil || c.Partition.Emulate || c.Faults != nil && c.Faults.String() != "seed=0" {
		t.Fatalf("partition defaults: %+v %v %v", c.Partition, c.Faults, err)
	}
	c, err = Load([]string{"--faults", "seed=2; fault=busy p=0.5"}, env(map[string]string{"TABLO_EMULATE_TARGETS": "partition=100,heat=2s"}), io.Discard)
	if err != nil || !c.Partition.Emulate || c.Partition.PartitionTarget != 100 || c.Partition.Heat != 2*time.Second || c.Faults.Seed != 2 {
		t.Fatalf("partition flags: %+v %+v %v", c.Partition, c.Faults, err)
	}
	_, err = Load([]string{"--emulate-targets", "partition=x", "--faults", "fault=busy"}, env(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--emulate-targets") || !strings.Contains(err.Error(), "--faults") {
		t.Fatalf("want both errors: %v", err)
	}
}
