package load

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tail := " 0 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0"
	tests := []struct {
		name    string
		line    string
		want    ProcStat
		wantErr bool
	}{
		{
			name: "node",
			line: "10414 (node) S 1 10406 6997 0 -1 4194304 28027 0 1 0 110 24 0 0 20 0 11 0 37936 1000 200\n",
			want: ProcStat{PID: 10414, Comm: "node", State: 'S', UTime: 110, STime: 24},
		},
		{
			name: "comm with spaces and parentheses",
			line: "7 (a) b (c)) R 1 2 3 4 5 6 7 8 9 10 4242 17" + tail,
			want: ProcStat{PID: 7, Comm: "a) b (c)", State: 'R', UTime: 4242, STime: 17},
		},
		{name: "too few fields", line: "7 (x) S 1 2 3", wantErr: true},
		{name: "no comm", line: "7 x S 1 2 3 4 5 6 7 8 9 10 11 12", wantErr: true},
		{name: "bad pid", line: "abc (x) S 1 2 3 4 5 6 7 8 9 10 11 12", wantErr: true},
		{name: "negative utime", line: "7 (x) S 1 2 3 4 5 6 7 8 9 10 -11 12", wantErr: true},
		{name: "long state", line: "7 (x) SS 1 2 3 4 5 6 7 8 9 10 11 12", wantErr: true},
		{name: "empty", line: "", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProcStat([]byte(tc.line))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want error, got %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestProcStatCPU(t *testing.T) {
	p := ProcStat{UTime: 150, STime: 50}
	if got := p.CPU(); got != 2*time.Second {
		t.Fatalf("CPU() = %v, want 2s", got)
	}
}

func TestReadProcessCPUSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	if _, err := ReadProcessCPU(0); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadProcessCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}

// FuzzParseProcStat checks that arbitrary input never panics, and that any line built from a
// comm (without newlines) and two counters parses back to them.
func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("10414 (node) S 1 10406 6997 0 -1 4194304 28027 0 1 0 110 24 0 0 20"), "node", uint64(1), uint64(2))
	f.Add([]byte("1 ((x)) R"), "a) (b", uint64(0), uint64(1<<63))
	f.Fuzz(func(t *testing.T, raw []byte, comm string, ut, st uint64) {
		_, _ = ParseProcStat(raw)
		if strings.ContainsAny(comm, "\n") || len(comm) > 64 {
			return
		}
		line := fmt.Sprintf("123 (%s) S 1 2 3 4 5 6 7 8 9 10 %d %d 0 0 20 0 1 0 5\n", comm, ut, st)
		got, err := ParseProcStat([]byte(line))
		if err != nil {
			t.Fatalf("ParseProcStat(%q): %v", line, err)
		}
		if got.PID != 123 || got.Comm != comm || got.UTime != ut || got.STime != st || got.State != 'S' {
			t.Fatalf("ParseProcStat(%q) = %+v", line, got)
		}
	})
}
