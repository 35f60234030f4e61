// Command large-entities stores an employee's photo in a blob and its name in the employee
// entity, the guide's large entities pattern, against a local Tablo (Table and Blob services)
// by default.
package main

import (
	"context"
	"flag"
	"log"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/tablo/tablo/examples/internal/plans"
)

func main() {
	conn := flag.String("conn", plans.DevConn, "storage account connection string (Table and Blob endpoints)")
	flag.Parse()
	tables, err := plans.TableService(*conn, plans.NewRecorder(os.Stdout), true)
	if err != nil {
		log.Fatal(err)
	}
	blobs, err := azblob.NewClientFromConnectionString(*conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := Run(context.Background(), tables, blobs, os.Stdout); err != nil {
		log.Fatal(err)
	}
}
