package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/load"
)

// TestBenchBlobWorkloads runs `tablo bench`'s Blob workloads (but the 256 MiB ones) through
// azblob against a running Tablo with the disk ceiling beside it: every operation succeeds,
// downloads return whole blobs, and a listing sees every preloaded blob. The measurements
// themselves are scripts/bench-azurite.sh's job.
func TestBenchBlobWorkloads(t *testing.T) {
	ts := startServer(t)
	conn := "AccountName=" + devAccount + ";AccountKey=" + devKey +
		";TableEndpoint=http://127.0.0.1:1/" + devAccount + ";BlobEndpoint=" + ts.blobEndpoint()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := load.Main(ctx, []string{"--conn", conn, "--label", "tablo", "--disk-dir", t.TempDir(),
		"--workloads", "blob-upload-1k,blob-download-1k,blob-upload-1m,blob-download-1m,blob-list",
		"--ops", "4", "--duration", "1m", "--concurrency", "2", "--list-preload", "5001", "--json", "-"}, &out, &errOut)
	if err != nil {
		t.Fatalf("bench: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var r load.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		seen[r.Target]++
		if r.Ops != 4 || r.Errors != 0 || r.FailedToRun != "" {
			t.Errorf("%s on %s: %+v", r.Workload, r.Target, r)
		}
		if r.Workload == "blob-list" && r.Entities != 4*5001 {
			t.Errorf("blob-list listed %d blobs, want 4 listings of 5001", r.Entities)
		}
		if strings.HasPrefix(r.Workload, "blob-upload") && r.MBPerSec <= 0 {
			t.Errorf("%s on %s: no MB/s", r.Workload, r.Target)
		}
	}
	if seen["tablo"] != 5 || seen["disk"] != 2 {
		t.Fatalf("results per target %v, want 5 for tablo and 2 (the uploads) for disk", seen)
	}
}
