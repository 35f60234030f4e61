// Command compound-key runs the compound key pattern against a
// Table endpoint (a local Tablo by default) and prints each query's plan.
package main

import (
	"context"
	"io"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/examples/internal/plans"
)

func main() {
	plans.Main(func(ctx context.Context, svc *aztables.ServiceClient, out io.Writer) error {
		_, err := Run(ctx, svc, out)
		return err
	})
}
