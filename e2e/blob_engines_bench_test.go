package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// benchRounds is how many times each cell runs on each engine.
const benchRounds = 3

// TestBlobEngineBench measures Blob uploads and downloads on the Pebble and PostgreSQL engines
// side by side in one run (cells alternate between the engines), and logs PostgreSQL's
// throughput as a ratio of Pebble's. TABLO_BLOB_ENGINE_BENCH=<seconds per cell>; needs
// TABLO_TEST_POSTGRES_URL.
func TestBlobEngineBench(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("TABLO_BLOB_ENGINE_BENCH"))
	if secs <= 0 {
		t.Skip("set TABLO_BLOB_ENGINE_BENCH=<seconds per cell> to run")
	}
	d := time.Duration(secs) * time.Second
	base := config.Config{Host: "127.0.0.1", Accounts: []auth.Account{auth.DevAccount()}}
	pebbleCfg, pgCfg := base, base
	pebbleCfg.DataDir = t.TempDir()
	pgCfg.DataDir = t.TempDir()
	pgCfg.PostgresURL = pgtest.URL(t)
	ctx := context.Background()
	cred, _ := azblob.NewSharedKeyCredential(devAccount, devKey)
	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: time.Hour}}}
	engines := []string{"pebble", "postgres"}
	clients := map[string]*azblob.Client{}
	for i, cfg := range []config.Config{pebbleCfg, pgCfg} {
		ts := startServerConfig(t, cfg)
		c, _ := azblob.NewClientWithSharedKeyCredential(ts.blobEndpoint()+"/", cred, opts)
		if _, err := c.CreateContainer(ctx, "bench", nil); err != nil {
			t.Fatal(err)
		}
		clients[engines[i]] = c
	}
	type cell struct {
		name    string
		size    int64
		clients int
		multi   bool // the SDK's parallel block upload (4 MiB blocks, concurrency 8)
	}
	cells := []cell{
		{"1 MiB Put Blob", 1 << 20, 1, false},
		{"1 MiB Put Blob", 1 << 20, 8, false},
		{"64 MiB Put Blob", 64 << 20, 1, false},
		{"64 MiB in 4 MiB blocks", 64 << 20, 1, true},
	}
	for _, c := range cells {
		data := randomBytes(int(c.size), 5)
		up := func(cl *azblob.Client) func(w, i int) error {
			return func(w, i int) error {
				name := fmt.Sprintf("b-%d-%v-%d", c.size, c.multi, w)
				if c.multi {
					_, err := cl.UploadBuffer(ctx, "bench", name, data, &azblob.UploadBufferOptions{BlockSize: 4 << 20, Concurrency: 8})
					return err
				}
				_, err := cl.ServiceClient().NewContainerClient("bench").NewBlockBlobClient(name).Upload(ctx, streamOf(data), &blockblob.UploadOptions{})
				return err
			}
		}
		down := func(cl *azblob.Client) func(w, i int) error {
			return func(w, i int) error {
				r, err := cl.DownloadStream(ctx, "bench", fmt.Sprintf("b-%d-%v-%d", c.size, c.multi, w), nil)
				if err != nil {
					return err
				}
				_, err = io.Copy(io.Discard, r.Body)
				r.Body.Close()
				return err
			}
		}
		// Rounds alternate the engines so that the machine's noise falls on both alike.
		var bytes, secs [2][2]float64 // [engine][up, down]
		for range benchRounds {
			for e, name := range engines {
				ru, err := runBench(c.clients, d, c.size, up(clients[name]))
				if err != nil {
					t.Fatal(name, err)
				}
				rd, err := runBench(c.clients, d, c.size, down(clients[name]))
				if err != nil {
					t.Fatal(name, err)
				}
				for i, r := range []benchResult{ru, rd} {
					bytes[e][i] += float64(r.bytes)
					secs[e][i] += r.dur.Seconds()
				}
			}
		}
		for i, dir := range []string{"upload  ", "download"} {
			p, q := bytes[0][i]/secs[0][i]/1e6, bytes[1][i]/secs[1][i]/1e6
			t.Logf("%s %-24s x%d: pebble %7.1f MB/s, postgres %7.1f MB/s, ratio %.2f", dir, c.name, c.clients, p, q, q/p)
		}
	}
}
