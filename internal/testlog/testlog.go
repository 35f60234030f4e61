// Package testlog collects a server's JSON log records for tests to read back.
package testlog

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"
)

// Buffer is an io.Writer for a JSON slog handler, safe for the server's goroutines.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Records returns the log records written so far, one map per line; a line that is not
// JSON fails t.
func (l *Buffer) Records(t testing.TB) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(l.b.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %s: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// FailOnErrors fails t for every Error-level record written so far: a server logs each
// recovered panic and 5xx answer at that level, which a test must not meet unexpectedly.
func (l *Buffer) FailOnErrors(t testing.TB) {
	t.Helper()
	for _, m := range l.Records(t) {
		if m["level"] == "ERROR" {
			t.Errorf("server logged an error: %v", m)
		}
	}
}
