package e2e

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestSDKCompatBlob runs the official Python and JavaScript Blob SDKs and az CLI (az storage
// container|blob) against an in-process server (scripts/sdk-compat). Each program exits
// non-zero on any mismatch; with TABLO_REQUIRE_SDKS set (CI sets it) a missing one fails.
func TestSDKCompatBlob(t *testing.T) {
	ts := startServer(t)
	conn := "DefaultEndpointsProtocol=http;AccountName=" + devAccount + ";AccountKey=" + devKey + ";BlobEndpoint=" + ts.blobEndpoint() + ";"
	programs := []struct {
		name    string
		ready   func(t *testing.T) string
		cmd     []string
		timeout time.Duration
	}{
		{"python", pythonBlobReady, []string{systemPython, "compat_blob.py"}, 3 * time.Minute},
		{"javascript", jsBlobReady, []string{"node", "compat-blob.mjs"}, 3 * time.Minute},
		// Each az command starts a Python interpreter that loads the CLI (seconds on a busy
		// machine), and the script runs a few dozen of them.
		{"az", azReady, []string{"bash", "compat-blob-az.sh"}, 10 * time.Minute},
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
			runCompatProgramFor(t, p.timeout, "TABLO_BLOB_CONNECTION_STRING="+conn, p.cmd)
		})
	}
}

func pythonBlobReady(*testing.T) string {
	if err := exec.Command(systemPython, "-c", "import azure.storage.blob").Run(); err != nil {
		return "azure-storage-blob not importable by " + systemPython + ": apt-get install -y python3-azure (.ci/run does)"
	}
	return ""
}

func jsBlobReady(t *testing.T) string { return jsPackageReady(t, "storage-blob") }
