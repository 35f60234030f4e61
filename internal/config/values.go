package config

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/tablo/tablo/internal/auth"
)

// Value is a typed flag value bound to a Config field. Type names the kind of value for the
// help text ("" for a boolean, which needs none); String is the current value, which is the
// default until Set is called.
type Value interface {
	String() string
	Set(string) error
	Type() string
}

// boolValue accepts 1/0, true/false, yes/no and on/off in any case.
type boolValue struct{ p *bool }

// Bool binds a boolean flag to p, with default def.
func Bool(p *bool, def bool) Value { *p = def; return boolValue{p} }

// ParseBool is the boolean syntax of every flag and variable.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean: want 1, 0, true, false, yes, no, on or off (any case)")
}

func (v boolValue) Set(s string) error {
	b, err := ParseBool(s)
	if err != nil {
		return err
	}
	*v.p = b
	return nil
}
func (v boolValue) String() string {
	if v.p == nil {
		return "false"
	}
	return strconv.FormatBool(*v.p)
}
func (boolValue) Type() string     { return "" }
func (boolValue) IsBoolFlag() bool { return true } // --in-memory alone means true

type stringValue struct{ p *string }

// String binds a string flag to p, with default def.
func String(p *string, def string) Value { *p = def; return stringValue{p} }

func (v stringValue) Set(s string) error { *v.p = s; return nil }
func (v stringValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}
func (stringValue) Type() string { return "string" }

type portValue struct{ p *int }

// Port binds a TCP port flag (0-65535) to p, with default def.
func Port(p *int, def int) Value { *p = def; return portValue{p} }

func (v portValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("not a port number: want 0-65535")
	}
	*v.p = n
	return nil
}
func (v portValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.Itoa(*v.p)
}
func (portValue) Type() string { return "port" }

type durationValue struct{ p *time.Duration }

// Duration binds a duration flag (Go syntax: 300us, 1.5s, 2m) to p, with default def.
func Duration(p *time.Duration, def time.Duration) Value { *p = def; return durationValue{p} }

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("not a duration: want a number with a unit, e.g. 300us, 10s, 2m")
	}
	*v.p = d
	return nil
}
func (v durationValue) String() string {
	if v.p == nil {
		return "0s"
	}
	return v.p.String()
}
func (durationValue) Type() string { return "duration" }

type positiveDurationValue struct{ durationValue }

// PositiveDuration binds a duration flag that must be greater than zero.
func PositiveDuration(p *time.Duration, def time.Duration) Value {
	*p = def
	return positiveDurationValue{durationValue{p}}
}

func (v positiveDurationValue) Set(s string) error {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return fmt.Errorf("not a positive duration: want a number with a unit, e.g. 30s, 15m, 2h")
	}
	*v.p = d
	return nil
}

type mibValue struct{ p *int64 }

// MiB binds a size flag given in MiB (0 to 1 TiB) to p, which holds bytes; def is in MiB.
func MiB(p *int64, def int64) Value { *p = def << 20; return mibValue{p} }

func (v mibValue) Set(s string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 || n > 1<<20 {
		return fmt.Errorf("not a size in MiB: want a whole number from 0 to 1048576")
	}
	*v.p = n << 20
	return nil
}
func (v mibValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatInt(*v.p>>20, 10)
}
func (mibValue) Type() string { return "MiB" }

type enumValue struct {
	p       *string
	allowed []string
}

// Enum binds a flag that takes one of allowed (any case) to p, with default def.
func Enum(p *string, def string, allowed ...string) Value {
	*p = def
	return enumValue{p, allowed}
}

func (v enumValue) Set(s string) error {
	for _, a := range v.allowed {
		if strings.EqualFold(strings.TrimSpace(s), a) {
			*v.p = a
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(v.allowed, ", "))
}
func (v enumValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}
func (v enumValue) Type() string { return strings.Join(v.allowed, "|") }

type levelValue struct{ p *slog.Level }

// LogLevel binds a log level flag (debug, info, warn, error) to p, with default def.
func LogLevel(p *slog.Level, def slog.Level) Value { *p = def; return levelValue{p} }

func (v levelValue) Set(s string) error {
	var l slog.Level
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	case "warn", "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		return fmt.Errorf("want debug, info, warn or error")
	}
	*v.p = l
	return nil
}
func (v levelValue) String() string {
	if v.p == nil {
		return "info"
	}
	return strings.ToLower(v.p.String())
}
func (levelValue) Type() string { return "level" }

type accountsValue struct{ p *[]auth.Account }

// Accounts binds the --accounts list to p; the default (nil) is filled in by Load.
func Accounts(p *[]auth.Account) Value { *p = nil; return accountsValue{p} }

func (v accountsValue) Set(s string) error {
	a, err := auth.ParseAccounts(s)
	if err != nil {
		return err
	}
	*v.p = a
	return nil
}

// String names the accounts, never their keys (it is printed in the help text).
func (v accountsValue) String() string {
	if v.p == nil {
		return ""
	}
	names := make([]string, len(*v.p))
	for i, a := range *v.p {
		names[i] = a.Name
	}
	return strings.Join(names, ",")
}
func (accountsValue) Type() string { return "list" }

// parsedValue is a flag whose text a package-specific parser turns into a value.
type parsedValue[T any] struct {
	p     *T
	raw   *string
	parse func(string) (T, error)
	typ   string
}

// Parsed binds a flag parsed by parse to p; def (text) is parsed for the default. typ names
// the kind of value in the help text.
func Parsed[T any](p *T, def, typ string, parse func(string) (T, error)) Value {
	if v, err := parse(def); err == nil {
		*p = v
	}
	raw := def
	return parsedValue[T]{p: p, raw: &raw, parse: parse, typ: typ}
}

func (v parsedValue[T]) Set(s string) error {
	x, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p, *v.raw = x, s
	return nil
}
func (v parsedValue[T]) String() string {
	if v.raw == nil {
		return ""
	}
	return *v.raw
}
func (v parsedValue[T]) Type() string { return v.typ }
