package load

import (
	"bytes"
	"strings"
	"testing"
)

func f64(v float64) *float64 { return &v }

func TestWriteReport(t *testing.T) {
	results := []Result{
		{Kind: "result", Target: "tablo", Workload: "get", Concurrency: 1, OpsPerSec: 500, EntsPerSec: 500, P50Ms: 1, P99Ms: 2, OpsPerCPUSec: f64(4000), EntsPerCPUSec: f64(4000)},
		{Kind: "result", Target: "azurite", Workload: "get", Concurrency: 1, OpsPerSec: 250, EntsPerSec: 250, P50Ms: 2, P99Ms: 5, Errors: 3, OpsPerCPUSec: f64(1000), EntsPerCPUSec: f64(1000)},
		{Kind: "result", Target: "null", Workload: "get", Concurrency: 1, OpsPerSec: 1000, EntsPerSec: 1000, P50Ms: 0.5, P99Ms: 1},
		{Kind: "result", Target: "null", Workload: "insert-one-pk", Concurrency: 16, OpsPerSec: 2000, EntsPerSec: 2000},
		{Kind: "result", Target: "tablo", Workload: "insert-one-pk", Concurrency: 16, FailedToRun: "boom"},
	}
	var b bytes.Buffer
	if err := WriteReport(&b, results, ReportOptions{Ceiling: "null", RatioA: "tablo", RatioB: "azurite"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| workload | conc | null | tablo | azurite | tablo/azurite |",
		"| insert-one-pk | 16 | 2000 | - | - | - |", // workload order beats input order
		"| get | 1 | 1000 | 500 (0.50) | 250 (0.25) | 2.00 |",
		"| get | 1 | 0.50 / 1.00 | 1.00 / 2.00 | 2.00 / 5.00, 3 errors |",
		"| get | 1 | 4000 (4000) | 1000 (1000) | 4.00 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "| insert-one-pk | 16 |") > strings.Index(out, "| get | 1 |") {
		t.Errorf("rows not in workload order:\n%s", out)
	}
}

// TestReportDatabaseShareAndPairs: a result measured with --db-pid shows the database's share
// of the server CPU, and every --ratio pair gets its columns.
func TestReportDatabaseShareAndPairs(t *testing.T) {
	results := []Result{
		{Kind: "result", Target: "pg", Workload: "get", Concurrency: 4, OpsPerSec: 600, EntsPerSec: 600, OpsPerCPUSec: f64(3000), EntsPerCPUSec: f64(3000), ServerCPU: f64(2), DBCPU: f64(0.8)},
		{Kind: "result", Target: "pebble", Workload: "get", Concurrency: 4, OpsPerSec: 1000, EntsPerSec: 1000, OpsPerCPUSec: f64(6000), EntsPerCPUSec: f64(6000), ServerCPU: f64(1)},
		{Kind: "result", Target: "azurite", Workload: "get", Concurrency: 4, OpsPerSec: 200, EntsPerSec: 200, OpsPerCPUSec: f64(1000), EntsPerCPUSec: f64(1000), ServerCPU: f64(1)},
	}
	var b bytes.Buffer
	opt := ReportOptions{RatioA: "pg", RatioB: "pebble", More: [][2]string{{"pg", "azurite"}}}
	if err := WriteReport(&b, results, opt); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| workload | conc | pg | pebble | azurite | pg/pebble | pg/azurite |",
		"| get | 4 | 600 | 1000 | 200 | 0.60 | 3.00 |",
		"| get | 4 | 3000 (3000), db 40% | 6000 (6000) | 1000 (1000) | 0.50 | 3.00 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestReadResultsSkipsOtherKinds(t *testing.T) {
	in := `{"kind":"result","target":"a","workload":"get","concurrency":1,"ops":5}

{"kind":"ratio","workload":"get","a":"a","b":"b"}
`
	rs, err := ReadResults(strings.NewReader(in))
	if err != nil || len(rs) != 1 || rs[0].Ops != 5 {
		t.Fatalf("ReadResults = %+v, %v", rs, err)
	}
	if _, err := ReadResults(strings.NewReader("{not json}\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("bad line: error %v, want one naming line 1", err)
	}
	if err := WriteReport(&bytes.Buffer{}, nil, ReportOptions{}); err == nil {
		t.Fatal("empty report: want error")
	}
}

func TestParseBenchFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr []string
	}{
		{name: "minimal", args: []string{"--conn", devConn}},
		{name: "null server", args: []string{"--null-server", "127.0.0.1:0"}},
		{name: "list", args: []string{"--list"}},
		{name: "missing conn", args: nil, wantErr: []string{"--conn is required"}},
		{
			name:    "remote endpoint refused",
			args:    []string{"--conn", "AccountName=a;AccountKey=" + devKey},
			wantErr: []string{"not a loopback"},
		},
		{
			name: "every problem at once",
			args: []string{"--conn", devConn, "--ops", "0", "--duration", "0", "--concurrency", "0",
				"--workloads", "get,nope", "--entity-size", "40000", "--compare-pid", "3"},
			wantErr: []string{"must be bounded", "--concurrency", "unknown workload", "--entity-size", "need --compare"},
		},
		{name: "preload needed", args: []string{"--conn", devConn, "--workloads", "get", "--preload", "0"}, wantErr: []string{"needs --preload"}},
		{name: "stray argument", args: []string{"--conn", devConn, "extra"}, wantErr: []string{"unexpected argument"}},
		{name: "table preload only", args: []string{"--conn", devConn, "--table", "Scale1", "--preload-only"}},
		{
			name: "table one partition",
			args: []string{"--conn", devConn, "--table", "Scale1", "--single-partition", "--skip-preload",
				"--workloads", "page-partition,filter-scan,get,upsert-merge,mixed"},
		},
		{name: "table spread", args: []string{"--conn", devConn, "--table", "abc", "--workloads", "get,filter-scan,mixed"}},
		{name: "preload-only needs table", args: []string{"--conn", devConn, "--preload-only"}, wantErr: []string{"need --table"}},
		{name: "skip-preload needs table", args: []string{"--conn", devConn, "--skip-preload"}, wantErr: []string{"need --table"}},
		{
			name:    "bad table name and both modes",
			args:    []string{"--conn", devConn, "--table", "9x", "--preload-only", "--skip-preload"},
			wantErr: []string{"--table \"9x\"", "exclude each other"},
		},
		{
			name:    "table refuses inserts and mixed layouts",
			args:    []string{"--conn", devConn, "--table", "Scale1", "--workloads", "batch-insert,page-partition,get"},
			wantErr: []string{"batch-insert inserts new entities", "page-partition pages one partition"},
		},
		{
			name:    "preload-only needs entities",
			args:    []string{"--conn", devConn, "--table", "Scale1", "--preload-only", "--preload", "0"},
			wantErr: []string{"needs --preload"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseBenchFlags(tc.args, &bytes.Buffer{})
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want errors %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestValidTableName(t *testing.T) {
	for name, want := range map[string]bool{
		"abc": true, "A12": true, "Scale1000000": true, strings.Repeat("a", 63): true,
		"ab": false, "1ab": false, "a-b": false, "a_b": false, "ab\u00e9": false, strings.Repeat("a", 64): false, "": false,
	} {
		if got := validTableName(name); got != want {
			t.Errorf("validTableName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestKeyFuncLayouts(t *testing.T) {
	if pk, rk := keyFunc(layoutPage)(12345); pk != pagePartition || rk != "r00012345" {
		t.Errorf("page layout: %q %q", pk, rk)
	}
	if pk, rk := keyFunc(layoutSpread)(12345); pk != "p00123" || rk != "r00012345" {
		t.Errorf("spread layout: %q %q", pk, rk)
	}
}

func TestUniquePayload(t *testing.T) {
	a, b := uniquePayload(1000, 1), uniquePayload(1000, 2)
	if len(a) != 1000 || len(b) != 1000 || a == b || a != uniquePayload(1000, 1) {
		t.Fatalf("want distinct, deterministic 1000-char payloads")
	}
	for _, c := range []byte(a + b) {
		if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", rune(c)) {
			t.Fatalf("payload byte %q needs JSON escaping", c)
		}
	}
	if uniquePayload(0, 5) != "" {
		t.Fatal("size 0: want empty")
	}
}

func TestCompareLabelsDistinct(t *testing.T) {
	c, err := parseBenchFlags([]string{"--conn", devConn, "--compare", devConn}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Label == c.CompareLabel {
		t.Fatalf("labels both %q", c.Label)
	}
}
