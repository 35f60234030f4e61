package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestDurationsInMilliseconds(t *testing.T) {
	var buf bytes.Buffer
	New(&buf, JSON, slog.LevelInfo).Info("x", "took", 1500*time.Microsecond)
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["took_ms"] != 1.5 {
		t.Fatalf("took_ms = %v in %s", m["took_ms"], buf.String())
	}
	if _, ok := m["took"]; ok {
		t.Fatal("raw duration still logged")
	}
}

func TestFormatChoice(t *testing.T) {
	var buf bytes.Buffer
	New(&buf, Auto, slog.LevelInfo).Info("hello")
	if !strings.HasPrefix(buf.String(), "{") {
		t.Fatalf("auto on a non-terminal should be JSON: %s", buf.String())
	}
	buf.Reset()
	New(&buf, Text, slog.LevelInfo).Info("hello")
	if !strings.Contains(buf.String(), "msg=hello") {
		t.Fatalf("text: %s", buf.String())
	}
}
