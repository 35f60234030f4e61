package e2e

import (
	"os/exec"
	"testing"
)

// TestSDKCompatBlob runs the official Python Blob SDK (Debian's python3-azure, which .ci/run
// installs for the Table checks too) against an in-process server.
func TestSDKCompatBlob(t *testing.T) {
	if err := exec.Command(systemPython, "-c", "import azure.storage.blob").Run(); err != nil {
		t.Skip("azure-storage-blob not importable by " + systemPython + ": apt-get install -y python3-azure (.ci/run does)")
	}
	ts := startServer(t)
	conn := "DefaultEndpointsProtocol=http;AccountName=" + devAccount + ";AccountKey=" + devKey + ";BlobEndpoint=" + ts.blobEndpoint() + ";"
	runCompatProgramEnv(t, "TABLO_BLOB_CONNECTION_STRING="+conn, []string{systemPython, "compat_blob.py"})
}
