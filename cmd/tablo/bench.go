package main

import (
	"context"
	"io"

	"github.com/tablo/tablo/internal/load"
)

func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return load.Main(ctx, args, stdout, stderr)
}
