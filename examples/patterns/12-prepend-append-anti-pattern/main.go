// Command prepend-append-anti-pattern drives the same insert load through an append-only key
// design and a spread one against a Table endpoint (a local Tablo by default) and prints what
// each did to the partitions: refusals (ServerBusy), the load per PartitionKey, and, from
// Tablo's partition statistics, the range partitions.
//
// Start Tablo with scaled-down targets so that one machine can exceed them:
//
//	go run ./cmd/tablo --in-memory --pprof 127.0.0.1:6060 --emulate-targets partition=200,server=400,heat=1s,move=500ms,tick=100ms
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"time"

	"github.com/tablo/tablo/examples/internal/plans"
)

func main() {
	conn := flag.String("conn", plans.DevConn, "storage account connection string")
	stats := flag.String("partitions", "http://127.0.0.1:6060/partitions", "Tablo's partition statistics (empty: none)")
	rate := flag.Int("rate", 600, "inserts per second")
	dur := flag.Duration("duration", 3*time.Second, "how long each design is loaded")
	flag.Parse()
	// Retries off: each refusal is counted rather than retried (a real client retries with
	// back-off; the refusals are then latency).
	svc, err := plans.TableService(*conn, plans.NewRecorder(os.Stdout), false)
	if err == nil {
		_, err = Run(context.Background(), svc, *stats, Load{Rate: *rate, Duration: *dur, Writers: 8}, os.Stdout)
	}
	if err != nil {
		log.Fatal(err)
	}
}
