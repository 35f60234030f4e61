package main

import (
	"context"
	"io"

	"github.com/tablo/tablo/internal/load"
	"github.com/tablo/tablo/internal/stress"
)

func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return load.Main(ctx, args, stdout, stderr)
}

func stressCmd(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	return stress.Main(ctx, args, env, stdout, stderr)
}
