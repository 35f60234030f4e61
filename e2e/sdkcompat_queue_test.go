package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSDKCompatQueue runs the official JavaScript and Python Queue SDKs, and az CLI when
// installed, against an in-process server (scripts/sdk-compat).
func TestSDKCompatQueue(t *testing.T) {
	ts := startServer(t)
	programs := []struct {
		name  string
		ready func() string
		cmd   []string
	}{
		{"javascript", jsQueueReady, []string{"node", "compat-queue.mjs"}},
		{"python", pythonQueueReady, []string{systemPython, "compat_queue.py"}},
		{"az", azReady, []string{"bash", "compat-queue-az.sh"}},
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			if why := p.ready(); why != "" {
				t.Skip(why)
			}
			runCompatProgram(t, ts.queueConnString(), p.cmd)
		})
	}
}

func jsQueueReady() string {
	if why := jsReady(); why != "" {
		return why
	}
	if _, err := os.Stat(filepath.Join(sdkCompatDir, "node_modules", "@azure", "storage-queue", "package.json")); err != nil {
		return "@azure/storage-queue not installed: run npm ci in scripts/sdk-compat (.ci/run does)"
	}
	return ""
}

func pythonQueueReady() string {
	if err := exec.Command(systemPython, "-c", "import azure.storage.queue").Run(); err != nil {
		return "azure-storage-queue not importable by " + systemPython + ": apt-get install -y python3-azure (.ci/run does)"
	}
	return ""
}

func azReady() string {
	if _, err := exec.LookPath("az"); err != nil {
		return "az CLI not installed (apt-get install -y azure-cli)"
	}
	return ""
}
