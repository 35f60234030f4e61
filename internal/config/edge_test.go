package config

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
)

// TestNumericFlagEdges: every bounded number is accepted exactly at its bounds and refused
// one past them, with the flag named in the error.
func TestNumericFlagEdges(t *testing.T) {
	for _, c := range []struct {
		flag, value string
		check       func(Config) bool
	}{
		{"table-port", "0", func(c Config) bool { return c.TablePort == 0 }},
		{"table-port", "65535", func(c Config) bool { return c.TablePort == 65535 }},
		{"column-cache-mb", "0", func(c Config) bool { return c.ColumnCacheBytes == 0 }},
		{"column-cache-mb", "1048576", func(c Config) bool { return c.ColumnCacheBytes == 1<<40 }},
		{"postgres-pool-size", "0", func(c Config) bool { return c.PostgresPoolSize == 0 }},
		{"postgres-pool-size", "10000", func(c Config) bool { return c.PostgresPoolSize == 10000 }},
		{"admin-port", "-1", func(c Config) bool { return c.AdminAddr == "" }},
		{"admin-port", "65535", func(c Config) bool { return c.AdminAddr == "127.0.0.1:65535" }},
		{"request-date-window", "1ns", func(c Config) bool { return c.RequestDateWindow == time.Nanosecond }},
	} {
		cfg, err := Load([]string{"--" + c.flag, c.value}, env(nil), io.Discard)
		if err != nil || !c.check(cfg) {
			t.Errorf("--%s %s: %v", c.flag, c.value, err)
		}
	}
	for _, c := range []struct{ flag, value string }{
		{"table-port", "-1"}, {"table-port", "65536"},
		{"column-cache-mb", "-1"}, {"column-cache-mb", "1048577"},
		{"postgres-pool-size", "-1"}, {"postgres-pool-size", "10001"},
		{"admin-port", "-2"}, {"admin-port", "65536"},
		{"request-date-window", "0s"}, {"request-date-window", "-1ns"},
	} {
		_, err := Load([]string{"--" + c.flag, c.value}, env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--"+c.flag) {
			t.Errorf("--%s %s: %v, want an error naming the flag", c.flag, c.value, err)
		}
	}
}

// TestFlagWithoutValueAtTheEnd: a valued flag that ends the command line is an error, not a
// read past the arguments; the flags before it still count.
func TestFlagWithoutValueAtTheEnd(t *testing.T) {
	for _, args := range [][]string{{"--table-port"}, {"--in-memory", "--log-level"}} {
		_, err := Load(args, env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "needs a value") {
			t.Errorf("%q: %v, want \"needs a value\"", args, err)
		}
	}
}

// TestValuesReportWhatWasSet: each Value's String gives back what Set stored (the usage text
// prints defaults with it), and a zero Value, as the standard flag package makes to find a
// flag's zero default, prints the zero value instead of panicking.
func TestValuesReportWhatWasSet(t *testing.T) {
	var (
		b    bool
		s    string
		port int
		d    time.Duration
		mib  int64
		enum string
		lvl  slog.Level
		accs []auth.Account
		pool int
	)
	for _, c := range []struct {
		v         Value
		set, want string
	}{
		{Bool(&b, false), "yes", "true"},
		{Bool(&b, true), "off", "false"},
		{String(&s, "x"), "127.0.0.2", "127.0.0.2"},
		{Port(&port, 1), "65535", "65535"},
		{Duration(&d, 0), "1500ms", "1.5s"},
		{PositiveDuration(&d, time.Second), "2m", "2m0s"},
		{MiB(&mib, 1), "3", "3"},
		{Enum(&enum, "off", "off", "basic"), " BASIC", "basic"},
		{LogLevel(&lvl, slog.LevelInfo), "Warning", "warn"},
		{Accounts(&accs), "acct1:AAAA,acct2:CCCC", "acct1,acct2"}, // names, never keys
		{Parsed(&pool, "0", "connections", parsePoolSize), "12", "12"},
	} {
		if err := c.v.Set(c.set); err != nil || c.v.String() != c.want {
			t.Errorf("%T Set(%q): String %q, err %v, want %q", c.v, c.set, c.v.String(), err, c.want)
		}
	}
	if got := Bool(&b, true).String(); got != "true" {
		t.Errorf("Bool default true prints %q", got)
	}
	for _, c := range []struct {
		v    Value
		want string
	}{{boolValue{}, "false"}, {stringValue{}, ""}, {portValue{}, "0"}, {durationValue{}, "0s"}, {mibValue{}, "0"},
		{enumValue{}, ""}, {levelValue{}, "info"}, {accountsValue{}, ""}, {parsedValue[int]{}, ""}} {
		if got := c.v.String(); got != c.want {
			t.Errorf("zero %T prints %q, want %q", c.v, got, c.want)
		}
	}
	var out strings.Builder
	WriteUsage(&out)
	for _, want := range []string{"(default 127.0.0.1; env TABLO_HOST)", "(default false; env TABLO_IN_MEMORY)", "(default 10002; env TABLO_TABLE_PORT)", `(default ""; env TABLO_POSTGRES_URL)`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, out.String())
		}
	}
}
