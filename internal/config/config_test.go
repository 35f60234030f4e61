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
