package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestSecondClaimIsRefusedNamingDirAndPID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	c, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir)
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second claim: %v", err)
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("error does not name the directory and the PID: %v", err)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	c2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	c2.Release()
}

func TestNotADirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(f); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("got %v", err)
	}
}

func TestUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o300); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if _, err := Acquire(dir); err == nil || !strings.Contains(err.Error(), "not readable") {
		t.Fatalf("got %v", err)
	}
}
