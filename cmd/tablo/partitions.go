package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tablo/tablo/internal/admin"
	"github.com/tablo/tablo/internal/partition"
)

// partitionsCmd prints a running server's partition layer (its admin API's /partitions).
func partitionsCmd(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tablo partitions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := env("TABLO_ADMIN_ADDR")
	if def == "" {
		def = strings.TrimPrefix(admin.DefaultURL(env), "http://")
	}
	addr := fs.String("addr", def, "address of the server's admin listener, host:port (TABLO_ADMIN_ADDR; default from TABLO_ADMIN_HOST/TABLO_ADMIN_PORT)")
	watch := fs.Duration("watch", 0, "redraw at this interval until interrupted (live mode)")
	asJSON := fs.Bool("json", false, "print the JSON as served")
	top := fs.Int("top", 10, "hottest partitions to list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" {
		return fmt.Errorf("partitions: --addr is required (the server's admin address)")
	}
	url := "http://" + strings.TrimPrefix(*addr, "http://") + fmt.Sprintf("/partitions?top=%d", *top)
	for {
		body, err := fetch(ctx, url)
		if err != nil {
			return err
		}
		if *asJSON {
			_, _ = stdout.Write(body)
		} else {
			var s partition.Snapshot
			if err := json.Unmarshal(body, &s); err != nil {
				return fmt.Errorf("partitions: %s: %w", url, err)
			}
			if *watch > 0 {
				fmt.Fprint(stdout, "\033[H\033[2J")
			}
			partition.WriteText(stdout, &s)
		}
		if *watch <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(*watch):
		}
	}
}

func fetch(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("partitions: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("partitions: %s: %s", url, resp.Status)
	}
	return body, err
}
