package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
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

func TestBufferedFlushes(t *testing.T) {
	var out syncBuf
	b := NewBuffered(&out, 10*time.Millisecond)
	_, _ = b.Write([]byte("a\n"))
	for deadline := time.Now().Add(10 * time.Second); out.String() != "a\n"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not flushed by the ticker")
		}
	}
	_, _ = b.Write([]byte("b\n"))
	if err := b.Close(); err != nil || out.String() != "a\nb\n" {
		t.Fatalf("after Close: %q %v", out.String(), err)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
