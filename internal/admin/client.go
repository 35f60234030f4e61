package admin

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls a running server's admin listener.
type Client struct {
	// BaseURL is the admin listener's URL, e.g. http://127.0.0.1:10010.
	BaseURL string
	HTTP    *http.Client
}

// Reset deletes all data, or one account's.
func (c *Client) Reset(ctx context.Context, account string) (time.Duration, error) {
	p := "/reset"
	if account != "" {
		p += "?account=" + url.QueryEscape(account)
	}
	return c.do(ctx, http.MethodPost, p, nil)
}

// SaveSnapshot, RestoreSnapshot and DeleteSnapshot act on snapshot name.
func (c *Client) SaveSnapshot(ctx context.Context, name string) (time.Duration, error) {
	return c.do(ctx, http.MethodPost, "/snapshots/"+url.PathEscape(name), nil)
}

func (c *Client) RestoreSnapshot(ctx context.Context, name string) (time.Duration, error) {
	return c.do(ctx, http.MethodPost, "/snapshots/"+url.PathEscape(name)+"/restore", nil)
}

func (c *Client) DeleteSnapshot(ctx context.Context, name string) (time.Duration, error) {
	return c.do(ctx, http.MethodDelete, "/snapshots/"+url.PathEscape(name), nil)
}

// Snapshots lists the saved snapshots.
func (c *Client) Snapshots(ctx context.Context) ([]string, error) {
	var out struct {
		Snapshots []string `json:"snapshots"`
	}
	_, err := c.do(ctx, http.MethodGet, "/snapshots", &out)
	return out.Snapshots, err
}

func (c *Client) do(ctx context.Context, method, path string, out any) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, nil)
	if err != nil {
		return 0, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("admin listener at %s: %w (is the server running with its admin port enabled?)", c.BaseURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return 0, errors.New(e.Error)
		}
		return 0, fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		return 0, json.Unmarshal(body, out)
	}
	var ok struct {
		DurationMS float64 `json:"duration_ms"`
	}
	_ = json.Unmarshal(body, &ok)
	return time.Duration(ok.DurationMS * float64(time.Millisecond)), nil
}

// DefaultURL is the admin listener's URL from the environment: TABLO_ADMIN_URL, or
// TABLO_ADMIN_HOST and TABLO_ADMIN_PORT as the server reads them (default
// http://127.0.0.1:10010).
func DefaultURL(env func(string) string) string {
	if u := env("TABLO_ADMIN_URL"); u != "" {
		return u
	}
	host, port := env("TABLO_ADMIN_HOST"), env("TABLO_ADMIN_PORT")
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "10010"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Usage lines of the commands Run serves.
const (
	ResetUsage    = "tablo reset [--account NAME] [--admin URL]     delete all data (or one account's) of a running server"
	SnapshotUsage = "tablo snapshot save|restore|delete NAME | list [--admin URL]   named snapshots of a running server"
)

// Run runs `tablo reset` or `tablo snapshot` (cmd) against a running server's admin
// listener.
func Run(ctx context.Context, cmd string, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tablo "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("admin", DefaultURL(env), "admin listener URL (TABLO_ADMIN_URL)")
	var account *string
	if cmd == "reset" {
		account = fs.String("account", "", "only this account's data")
	}
	fs.Usage = func() {
		if cmd == "reset" {
			fmt.Fprintln(stderr, "usage:", ResetUsage)
		} else {
			fmt.Fprintln(stderr, "usage:", SnapshotUsage)
		}
		fs.PrintDefaults()
	}
	// Flags may come before or after the positional arguments.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	c := &Client{BaseURL: *base, HTTP: &http.Client{Timeout: 5 * time.Minute}}
	if cmd == "reset" {
		if len(pos) != 0 {
			fs.Usage()
			return fmt.Errorf("reset: unexpected arguments %q", pos)
		}
		d, err := c.Reset(ctx, *account)
		if err != nil {
			return err
		}
		what := "all accounts"
		if *account != "" {
			what = "account " + *account
		}
		fmt.Fprintf(stdout, "reset %s in %.1f ms\n", what, float64(d.Microseconds())/1000)
		return nil
	}
	if len(pos) == 1 && pos[0] == "list" {
		names, err := c.Snapshots(ctx)
		for _, n := range names {
			fmt.Fprintln(stdout, n)
		}
		return err
	}
	if len(pos) != 2 {
		fs.Usage()
		return errors.New("snapshot: want save, restore or delete NAME, or list")
	}
	var f func(context.Context, string) (time.Duration, error)
	switch pos[0] {
	case "save":
		f = c.SaveSnapshot
	case "restore":
		f = c.RestoreSnapshot
	case "delete":
		f = c.DeleteSnapshot
	default:
		fs.Usage()
		return fmt.Errorf("snapshot: unknown action %q", pos[0])
	}
	d, err := f(ctx, pos[1])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "snapshot %s %s in %.1f ms\n", pos[1], map[string]string{"save": "saved", "restore": "restored", "delete": "deleted"}[pos[0]], float64(d.Microseconds())/1000)
	return nil
}
