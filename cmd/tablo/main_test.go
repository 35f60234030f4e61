package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, &out, &errOut)
	return out.String() + errOut.String(), err
}

// tablo -h, --help and help list every command on one line each, then serve's flags.
func TestHelpListsCommands(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		out, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		for _, c := range commands() {
			line := ""
			for l := range strings.Lines(out) {
				if strings.HasPrefix(strings.TrimSpace(l), c.name+" ") {
					line = l
				}
			}
			if !strings.Contains(line, c.summary) {
				t.Errorf("%v: no one-line entry for %s:\n%s", args, c.name, out)
			}
		}
		if !strings.Contains(out, "--table-port port") || !strings.Contains(out, "default 300µs") {
			t.Errorf("%v: serve's flags missing:\n%s", args, out)
		}
	}
}

func TestHelpForOneCommand(t *testing.T) {
	out, err := runCLI(t, "help", "serve")
	if err != nil || !strings.Contains(out, "--shutdown-timeout duration") || !strings.Contains(out, "TABLO_SHUTDOWN_TIMEOUT") {
		t.Fatalf("help serve: %v\n%s", err, out)
	}
	out, err = runCLI(t, "help", "bench")
	if err != nil || !strings.Contains(out, "-concurrency") {
		t.Fatalf("help bench: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "help", "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("help nope: %v", err)
	}
}

func TestVersionAndUnknownCommand(t *testing.T) {
	out, err := runCLI(t, "version")
	if err != nil || !strings.HasPrefix(out, "tablo ") || !strings.Contains(out, "go1.") {
		t.Fatalf("version: %v %q", err, out)
	}
	if _, err := runCLI(t, "frobnicate"); err == nil || !strings.Contains(err.Error(), `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: %v", err)
	}
}
