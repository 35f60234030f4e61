package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/tablo/tablo/internal/migrate"
)

// migrateCmd runs `tablo migrate --from SRC --to DST`: each a data directory or a
// PostgreSQL URL. Stop every Tablo serving the source first.
func migrateCmd(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tablo migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "source: a data directory or a postgres:// URL (stop the Tablo serving it first)")
	to := fs.String("to", "", "destination, empty: a data directory or a postgres:// URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("migrate: unexpected arguments %q", fs.Args())
	}
	_, err := migrate.Run(ctx, migrate.Options{From: *from, To: *to, Progress: stdout})
	return err
}
