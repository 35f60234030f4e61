// Command inter-partition-index keeps a secondary index in other partitions
// consistent through a queue (the eventually consistent transactions pattern), against a local
// Tablo (Table and Queue services) by default.
package main

import (
	"context"
	"flag"
	"log"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablo/tablo/examples/internal/plans"
)

func main() {
	conn := flag.String("conn", plans.DevConn, "storage account connection string (Table and Queue endpoints)")
	flag.Parse()
	tables, err := plans.TableService(*conn, plans.NewRecorder(os.Stdout), true)
	if err != nil {
		log.Fatal(err)
	}
	queues, err := azqueue.NewServiceClientFromConnectionString(*conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := Run(context.Background(), tables, queues, os.Stdout); err != nil {
		log.Fatal(err)
	}
}
