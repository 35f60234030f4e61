// Command log-data-anti-pattern stores the same application log under two table designs
// against a Table endpoint (a local Tablo by default) and prints what each costs: the writes
// one hot partition refuses, and the partitions a time-range query must scan; then stores it
// the guide's way, in minute blobs of the Blob service, and answers the same query there.
//
// Start Tablo with scaled-down targets so that one machine can exceed them:
//
//	go run ./cmd/tablo --in-memory --pprof 127.0.0.1:6060 --emulate-targets partition=200,heat=1s,tick=100ms
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/tablo/tablo/examples/internal/plans"
)

func main() {
	conn := flag.String("conn", plans.DevConn, "storage account connection string")
	stats := flag.String("partitions", "http://127.0.0.1:6060/partitions", "Tablo's partition statistics (empty: none)")
	rate := flag.Int("rate", 500, "log messages written per second")
	dur := flag.Duration("duration", 3*time.Second, "how long each design is written")
	useBlobs := flag.Bool("blob", true, "also store the log the guide's way, in the Blob service")
	flag.Parse()
	// Retries off: each refusal is counted rather than retried.
	svc, err := plans.TableService(*conn, plans.NewRecorder(os.Stdout), false)
	if err == nil {
		_, err = Run(context.Background(), svc, *stats, Load{Rate: *rate, Duration: *dur, Writers: 8}, os.Stdout)
	}
	if err == nil && *useBlobs {
		var blobs *azblob.Client
		if blobs, err = azblob.NewClientFromConnectionString(*conn, nil); err == nil {
			_, err = RunBlobs(context.Background(), blobs, int(float64(*rate)*dur.Seconds()), os.Stdout)
		}
	}
	if err != nil {
		log.Fatal(err)
	}
}
