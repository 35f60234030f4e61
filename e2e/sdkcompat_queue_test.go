package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSDKCompatQueue runs the official JavaScript and Python Queue SDKs, and az CLI when
// installed, against an in-process server (scripts/sdk-compat).
func TestSDKCompatQueue(t *testing.T) {
	ts := startServer(t)
	programs := []struct {
		name  string
		ready func(t *testing.T) string
		cmd   []string
	}{
		{"javascript", jsQueueReady, []string{"node", "compat-queue.mjs"}},
		{"python", pythonQueueReady, []string{systemPython, "compat_queue.py"}},
		{"az", azReady, []string{"bash", "compat-queue-az.sh"}},
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			if why := p.ready(t); why != "" {
				t.Skip(why)
			}
			runCompatProgram(t, ts.queueConnString(), p.cmd)
		})
	}
}

func jsQueueReady(t *testing.T) string { return jsPackageReady(t, "storage-queue") }

// jsPackageReady is jsReady for another @azure package of package.json: when node_modules
// predates it, npm ci installs again.
func jsPackageReady(t *testing.T, pkgName string) string {
	if why := jsReady(t); why != "" {
		return why
	}
	pkg := filepath.Join(sdkCompatDir, "node_modules", "@azure", pkgName, "package.json")
	if _, err := os.Stat(pkg); err == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = sdkCompatDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "npm ci in scripts/sdk-compat failed: " + err.Error() + "\n" + string(out)
	}
	if _, err := os.Stat(pkg); err != nil {
		return "@azure/" + pkgName + " not installed: run npm ci in scripts/sdk-compat (.ci/run does)"
	}
	return ""
}

func pythonQueueReady(*testing.T) string {
	if err := exec.Command(systemPython, "-c", "import azure.storage.queue").Run(); err != nil {
		return "azure-storage-queue not importable by " + systemPython + ": apt-get install -y python3-azure (.ci/run does)"
	}
	return ""
}

func azReady(*testing.T) string {
	if _, err := exec.LookPath("az"); err != nil {
		return "az CLI not installed (apt-get install -y azure-cli)"
	}
	return ""
}
