// Command tablo serves Azure Storage's REST APIs (Table today) on an embedded durable
// engine, for tests and development against the official Azure SDKs.
//
//	tablo [serve] [flags]   start the server (default)
//	tablo bench [flags]     drive an endpoint with the official Go SDK and report throughput
//	tablo stress [flags]    the partition stress test of a PartitionKey design
//	tablo partitions        print a running server's partitions, range partitions and servers
//	tablo migrate --from SRC --to DST   copy all data between a data directory and PostgreSQL
//	tablo version           print the version
//	tablo reset             delete all data (or one account's) of a running server
//	tablo snapshot          save, restore, list or delete named snapshots of a running server
//	tablo help [command]    list the commands, or one command's flags
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/tablo/tablo/internal/admin"
	"github.com/tablo/tablo/internal/app"
	"github.com/tablo/tablo/internal/buildinfo"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/load"
	"github.com/tablo/tablo/internal/logging"
	"github.com/tablo/tablo/internal/stress"
)

// exitSecondSignal is the status when a second SIGINT/SIGTERM cuts a graceful shutdown short
// (128 + SIGINT, as shells report an interrupted program).
const exitSecondSignal = 130

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel() // the first signal: shut down gracefully (serve) or print results so far (bench)
		s := <-sigs
		fmt.Fprintf(os.Stderr, "tablo: second %v: exiting now\n", s)
		os.Exit(exitSecondSignal)
	}()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "tablo:", err)
		os.Exit(1)
	}
}

// command is one subcommand. Adding one is one entry in commands().
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error
	// usage writes the command's flags (nil: it has none).
	usage func(ctx context.Context, w io.Writer)
}

func commands() []command {
	return []command{
		{"serve", "start the server (the default command)", serve, func(_ context.Context, w io.Writer) {
			fmt.Fprintln(w, "usage: tablo [serve] [flags]\n\nEvery flag can also be set by its environment variable; a flag given on the command line wins.\nBooleans accept 1/0, true/false, yes/no, on/off in any case. Flags:")
			config.WriteUsage(w)
		}},
		{"bench", "drive an endpoint with the official Go SDK and report throughput", bench, func(ctx context.Context, w io.Writer) {
			_ = load.Main(ctx, []string{"-h"}, w, w)
		}},
		{"stress", "the partition stress test of a PartitionKey design, against any endpoint", stressCmd, func(ctx context.Context, w io.Writer) {
			_ = stress.Main(ctx, []string{"-h"}, func(string) string { return "" }, w, w)
		}},
		{"partitions", "print a running server's partitions, range partitions and servers", partitionsCmd, func(ctx context.Context, w io.Writer) {
			_ = partitionsCmd(ctx, []string{"-h"}, func(string) string { return "" }, w, w)
		}},
		{"migrate", "copy every account's data between a data directory and a PostgreSQL database, verified", migrateCmd, func(ctx context.Context, w io.Writer) {
			_ = migrateCmd(ctx, []string{"-h"}, func(string) string { return "" }, w, w)
		}},
		{"version", "print the version, commit and Go toolchain", version, nil},
		{"reset", "delete all data (or one account's) of a running server, through its admin listener", adminCmd("reset"), adminUsage("reset")},
		{"snapshot", "save, restore, list or delete named snapshots of a running server's data", adminCmd("snapshot"), adminUsage("snapshot")},
		{"healthcheck", "exit 0 if the Tablo on this machine answers GET /healthz on its admin port (for container health checks)", healthcheck, func(_ context.Context, w io.Writer) {
			fmt.Fprintln(w, "usage: tablo healthcheck [--url URL]\n\nGETs http://127.0.0.1:$TABLO_ADMIN_PORT/healthz (default port 10010), or URL; exits 0 on 200 OK.")
		}},
		{"help", "list the commands, or show one command's flags: tablo help [command]", help, nil},
	}
}

// adminCmd runs `tablo reset` or `tablo snapshot` against a running server's admin listener.
func adminCmd(name string) func(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	return func(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
		return admin.Run(ctx, name, args, env, stdout, stderr)
	}
}

func adminUsage(name string) func(ctx context.Context, w io.Writer) {
	return func(ctx context.Context, w io.Writer) {
		_ = admin.Run(ctx, name, []string{"-h"}, func(string) string { return "" }, w, w)
	}
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			return help(ctx, nil, env, stdout, stderr)
		case "-version", "--version":
			return version(ctx, nil, env, stdout, stderr)
		}
	}
	name := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	c, ok := lookup(name)
	if !ok {
		return fmt.Errorf("unknown command %q; `tablo help` lists the commands", name)
	}
	return c.run(ctx, args, env, stdout, stderr)
}

func help(ctx context.Context, args []string, _ func(string) string, stdout, _ io.Writer) error {
	if len(args) > 0 {
		c, ok := lookup(args[0])
		if !ok {
			return fmt.Errorf("unknown command %q; `tablo help` lists the commands", args[0])
		}
		if c.usage == nil {
			fmt.Fprintf(stdout, "usage: tablo %s\n\n%s\n", c.name, c.summary)
			return nil
		}
		c.usage(ctx, stdout)
		return nil
	}
	fmt.Fprintln(stdout, "Tablo serves Azure Storage's REST APIs for tests and development with the official SDKs.")
	fmt.Fprintln(stdout, "\nusage: tablo [command] [flags]\n\ncommands:")
	cmds := commands()
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		fmt.Fprintf(stdout, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(stdout, "\n`tablo help COMMAND` or `tablo COMMAND -h` shows a command's flags. serve's flags:")
	config.WriteUsage(stdout)
	return nil
}

func version(_ context.Context, _ []string, _ func(string) string, stdout, _ io.Writer) error {
	fmt.Fprintln(stdout, "tablo", buildinfo.Read())
	return nil
}

// defaultGCPercent replaces Go's default of 100 when GOGC is not set. Pebble keeps its
// block cache outside the Go heap, so the heap is only a few MB and a 100% target makes the
// collector run about once per query page; 400 costs ~16 MB more memory and measured 1.2-1.7x
// the entities per CPU-second on loads, paging, scans and gets (docs/scale.md).
const defaultGCPercent = 400

// serve runs the server until ctx ends (the first SIGINT/SIGTERM), then shuts down within
// --shutdown-timeout. The start-up summary goes to stdout whatever the log level; logs go
// to stderr.
func serve(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	cfg, err := config.Load(args, env, stdout)
	if err != nil {
		return err
	}
	cfg.Version = fmt.Sprint(buildinfo.Read())
	if env("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	format := logging.Format(cfg.LogFormat)
	if format == logging.Auto {
		format = logging.JSON
		if logging.IsTerminal(stderr) {
			format = logging.Text
		}
	}
	// Log lines are written in batches (every 100 ms at most): one write per request cost
	// measurable throughput on point operations.
	lw := logging.NewBuffered(stderr, 100*time.Millisecond)
	defer lw.Close()
	log := logging.New(lw, format, cfg.LogLevel)
	a, err := app.Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	a.WriteStartup(stdout, buildinfo.Read().String())
	var served error
	select {
	case <-ctx.Done():
		log.Info("shutting down: no new connections; requests in flight may finish", "timeout", cfg.ShutdownTimeout)
	case served = <-a.Done():
		log.Error("server stopped", "err", served)
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	return errors.Join(served, a.Close(shutdownCtx))
}

func bench(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	return load.Main(ctx, args, stdout, stderr)
}

func stressCmd(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	return stress.Main(ctx, args, env, stdout, stderr)
}
