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

// TestSDKCompat runs the official JavaScript and Python Table SDKs against an in-process
// server. Each program exits non-zero on any mismatch; .ci/run installs their prerequisites.
func TestSDKCompat(t *testing.T) {
	ts := startServer(t)
	programs := []struct {
		name  string
		ready func() string // "" when runnable, else why not
		cmd   []string
	}{
		{"javascript", jsReady, []string{"node", "compat.mjs"}},
		{"python", pythonReady, []string{systemPython, "compat.py"}},
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			if why := p.ready(); why != "" {
				t.Skip(why)
			}
			runCompatProgram(t, ts.connString(), p.cmd)
		})
	}
}

func jsReady() string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node not found: apt-get install -y nodejs npm, then npm ci in scripts/sdk-compat (.ci/run does both)"
	}
	if _, err := os.Stat(filepath.Join(sdkCompatDir, "node_modules", "@azure", "data-tables", "package.json")); err != nil {
		return "@azure/data-tables not installed: run npm ci in scripts/sdk-compat (.ci/run does)"
	}
	return ""
}

func pythonReady() string {
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
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
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
