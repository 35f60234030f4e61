package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sdkCompatDir holds the JavaScript and Python compatibility programs (scripts/sdk-compat).
const sdkCompatDir = "../scripts/sdk-compat"

// systemPython is Debian's interpreter: python3-azure installs azure-data-tables for it only.
const systemPython = "/usr/bin/python3"

// requireSDKsVar, when set (CI sets it), turns a missing SDK prerequisite from a skip into a
// failure, so that CI never passes without running every SDK check.
const requireSDKsVar = "TABLO_REQUIRE_SDKS"

// TestSDKCompat runs the official JavaScript and Python Table SDKs against an in-process
// server. Each program exits non-zero on any mismatch. The JavaScript SDK is installed here
// (npm ci) when missing; node itself and Debian's python3-azure are system packages
// (.ci/run installs them).
func TestSDKCompat(t *testing.T) {
	ts := startServer(t)
	programs := []struct {
		name  string
		ready func(t *testing.T) string // "" when runnable, else why not
		cmd   []string
	}{
		{"javascript", jsReady, []string{"node", "compat.mjs"}},
		{"python", pythonReady, []string{systemPython, "compat.py"}},
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			if why := p.ready(t); why != "" {
				if os.Getenv(requireSDKsVar) != "" {
					t.Fatalf("%s (and %s is set, so this is a failure, not a skip)", why, requireSDKsVar)
				}
				t.Skip(why)
			}
			runCompatProgram(t, ts.connString(), p.cmd)
		})
	}
}

// jsReady finds node and installs @azure/data-tables with npm ci if node_modules lacks it.
// A failing npm ci fails the test: the prerequisite exists but could not be installed.
func jsReady(t *testing.T) string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node not found: apt-get install -y nodejs npm (.ci/run does)"
	}
	if _, err := os.Stat(filepath.Join(sdkCompatDir, "node_modules", "@azure", "data-tables", "package.json")); err == nil {
		return ""
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "npm not found (needed once to install @azure/data-tables): apt-get install -y npm"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = sdkCompatDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in scripts/sdk-compat (installing @azure/data-tables): %v\n%s", err, out)
	}
	return ""
}

func pythonReady(*testing.T) string {
	if err := exec.Command(systemPython, "-c", "import azure.data.tables").Run(); err != nil {
		return "azure-data-tables not importable by " + systemPython + ": apt-get install -y python3-azure (.ci/run does)"
	}
	return ""
}

func runCompatProgram(t *testing.T, connString string, argv []string) {
	runCompatProgramEnv(t, "TABLO_CONNECTION_STRING="+connString, argv)
}

// runCompatProgramEnv runs a compatibility program with one extra environment variable.
func runCompatProgramEnv(t *testing.T, env string, argv []string) {
	runCompatProgramFor(t, 3*time.Minute, env, argv)
}

// runCompatProgramFor is runCompatProgramEnv with a time limit.
func runCompatProgramFor(t *testing.T, limit time.Duration, env string, argv []string) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = sdkCompatDir
	cmd.Env = append(os.Environ(), env)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	for line := range strings.Lines(out.String()) {
		if strings.HasPrefix(line, "PASS ") || strings.HasPrefix(line, "FAIL ") {
			t.Log(strings.TrimRight(line, "\n"))
		}
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out.String())
	}
}
