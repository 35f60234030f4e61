// Package logging builds Tablo's slog logger: text on a terminal, JSON otherwise, and every
// duration in milliseconds with the unit in its key (took=1.5s becomes took_ms=1500).
package logging

import (
	"io"
	"log/slog"
	"os"
	"time"
)

// Format is how log records are written.
type Format string

const (
	Auto Format = "auto" // Text on a terminal, JSON otherwise
	Text Format = "text"
	JSON Format = "json"
)

// New returns a logger writing to w at level in format f.
func New(w io.Writer, f Format, level slog.Leveler) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: replaceAttr}
	if f == Text || (f == Auto && IsTerminal(w)) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// replaceAttr writes durations as fractional milliseconds under key+"_ms".
func replaceAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.Float64(a.Key+"_ms", Millis(a.Value.Duration()))
	}
	return a
}

// Millis is d in milliseconds, rounded to the microsecond.
func Millis(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)) / float64(time.Millisecond)
}

// IsTerminal reports whether w is a character device (a TTY).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
