package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tablo/tablo/internal/config"
)

// defaultAdminPort is where the admin listener (/healthz, /readyz, /metrics) is expected
// when TABLO_ADMIN_PORT is not set.
const defaultAdminPort = 10010

// healthcheck asks a running Tablo's admin listener for /healthz and succeeds on 200. It is
// the container's HEALTHCHECK (the image has no shell or curl).
func healthcheck(ctx context.Context, args []string, env func(string) string, stdout, _ io.Writer) error {
	port := defaultAdminPort
	if v := env("TABLO_ADMIN_PORT"); v != "" {
		if err := config.Port(&port, port).Set(v); err != nil {
			return fmt.Errorf("environment variable TABLO_ADMIN_PORT=%q: %w", v, err)
		}
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	switch {
	case len(args) == 2 && args[0] == "--url":
		url = args[1]
	case len(args) != 0:
		return fmt.Errorf("usage: tablo healthcheck [--url URL]")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}
