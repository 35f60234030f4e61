// Command intra-partition-index runs the intra-partition secondary index pattern against a
// Table endpoint (a local Tablo by default) and prints each query's plan.
package main

import (
	"context"
	"flag"
	"log"
	"os"

	"github.com/tablo/tablo/examples/internal/plans"
)

func main() {
	conn := flag.String("conn", plans.DevConn, "storage account connection string")
	flag.Parse()
	svc, err := plans.TableService(*conn, plans.NewRecorder(os.Stdout), true)
	if err == nil {
		_, err = Run(context.Background(), svc, os.Stdout)
	}
	if err != nil {
		log.Fatal(err)
	}
}
