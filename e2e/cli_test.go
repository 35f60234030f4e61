package e2e

// The binary's start-up summary, its early and clear refusals, and its shutdown on signals.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// runToExit runs the binary to completion and returns its exit code and combined output.
func runToExit(t *testing.T, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("%s: %v\n%s", bin, err, out)
	return 0, ""
}

// TestStartupSummary: whatever the log level, stdout names each service's URL, the engine,
// the accounts (never a key of theirs) and a connection string that works as printed.
func TestStartupSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary")
	}
	bin := buildTablo(t)
	cases := []struct {
		name   string
		args   []string
		engine string
		url    string // prefix
	}{
		{"in-memory", []string{"--in-memory"}, "in memory", "http://127.0.0.1:"},
		{"wildcard", []string{"--in-memory", "--host", "0.0.0.0"}, "in memory", "http://127.0.0.1:"},
		{"data-dir", []string{"--data-dir", filepath.Join(t.TempDir(), "d")}, "data in " + t.TempDir()[:5], "http://127.0.0.1:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const secret = "c2VjcmV0LWtleS1ub3QtdG8tYmUtcHJpbnRlZA==" // base64 of a made-up key
			args := append(freePorts("--log-level", "error",
				"--accounts", "devstoreaccount1:"+devKey+",other:"+secret), tc.args...)
			cmd := exec.Command(bin, args...)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr lockedBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			var lines []string
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines = append(lines, sc.Text())
				if strings.HasPrefix(sc.Text(), "DefaultEndpointsProtocol=") {
					break
				}
			}
			summary := strings.Join(lines, "\n")
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			for _, want := range []string{"Table    " + tc.url, tc.engine, "accounts devstoreaccount1, other", "TableEndpoint=" + tc.url} {
				if !strings.Contains(summary, want) {
					t.Errorf("summary lacks %q:\n%s\nstderr: %s", want, summary, stderr.String())
				}
			}
			if strings.Contains(summary, secret) {
				t.Errorf("summary prints a key:\n%s", summary)
			}
			if tc.name == "wildcard" && !strings.Contains(summary, "listening on 0.0.0.0:") {
				t.Errorf("wildcard listener not said:\n%s", summary)
			}
			cs := lines[len(lines)-1]
			svc, err := aztables.NewServiceClientFromConnectionString(cs, clientOptions())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.CreateTable(context.Background(), "printed", nil); err != nil {
				t.Fatalf("the printed connection string does not work: %v\n%s", err, cs)
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit after SIGINT: %v (want 0)\n%s", err, stderr.String())
			}
		})
	}
}

// TestStartupRefusals: a port in use, a data directory in use and a bad variable each stop
// start-up with a message naming the culprit, and a port in use leaves no data directory.
func TestStartupRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary")
	}
	bin := buildTablo(t)

	t.Run("port in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		dir := filepath.Join(t.TempDir(), "never-created")
		code, out := runToExit(t, bin, nil, freePorts("--table-port", port, "--data-dir", dir)...)
		if code == 0 || !strings.Contains(out, "Table service: port "+port) || !strings.Contains(out, "--table-port") {
			t.Errorf("exit %d, output %q: want a refusal naming the service, port and flag", code, out)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("data directory created before the port was checked: %v", err)
		}
	})

	t.Run("data directory in use", func(t *testing.T) {
		if onPostgres() {
			t.Skip("the data directory is Pebble's: on PostgreSQL the first server claims none")
		}
		dir := t.TempDir()
		p, _ := startTablo(t, bin, dir)
		code, out := runToExit(t, bin, nil, freePorts("--data-dir", dir)...)
		want := fmt.Sprintf("data directory %s is in use by another Tablo (process %d", dir, p.cmd.Process.Pid)
		if code == 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, output %q: want %q", code, out, want)
		}
	})

	t.Run("bad variable", func(t *testing.T) {
		code, out := runToExit(t, bin, []string{"TABLO_IN_MEMORY=yes please"}, freePorts()...)
		if code == 0 || !strings.Contains(out, "TABLO_IN_MEMORY") || !strings.Contains(out, "yes, no, on or off") {
			t.Errorf("exit %d, output %q: want a refusal naming the variable and the accepted values", code, out)
		}
	})

	t.Run("not a directory", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out := runToExit(t, bin, nil, freePorts("--data-dir", f)...)
		if code == 0 || !strings.Contains(out, f+" is not a directory") {
			t.Errorf("exit %d, output %q", code, out)
		}
	})
}

// stallClient opens a connection that sends half a request line and then nothing.
func stallClient(t *testing.T, addr string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// The server's "100 Continue" proves it has read the head and waits for the body, so the
	// connection counts as in use when the signal comes (a connection the server has not read
	// from yet is closed at once as unused, which would make the shutdown tests race).
	head := "POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
		"Content-Length: 100\r\nExpect: 100-continue\r\n\r\n"
	if _, err := c.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, "100 Continue") {
		t.Fatalf("want 100 Continue from the stalled request: %q %v", line, err)
	}
}

// waitListenerClosed waits until addr refuses connections (the first signal was handled).
func waitListenerClosed(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still open 20 s after the signal")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestShutdownWithStalledClient: a client that never finishes its request delays the exit
// only until --shutdown-timeout, after which the process exits 0.
func TestShutdownWithStalledClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary")
	}
	if onPostgres() {
		t.Skip("engine-independent (HTTP shutdown): runs in the default pass")
	}
	bin := buildTablo(t)
	p, _ := startTablo(t, bin, t.TempDir(), "--shutdown-timeout", "200ms", "--log-level", "info")
	stallClient(t, p.addr)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := p.waitExit(t, 30*time.Second); err != nil {
		t.Fatalf("exit after SIGINT with a stalled client: %v (want status 0)\n%s", err, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "closed 1 connections still open") {
		t.Errorf("the forced close is not logged:\n%s", p.stderr)
	}
}

// TestSecondSignalExitsAtOnce: with a stalled client holding a long graceful shutdown, a
// second SIGINT ends the process at once, and every acknowledged write survives.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary")
	}
	bin := buildTablo(t)
	dir := t.TempDir()
	p, _ := startTablo(t, bin, dir, "--shutdown-timeout", "1h")
	const tableName = "secondsignal"
	if _, err := p.service(t).CreateTable(context.Background(), tableName, nil); err != nil {
		t.Fatal(err)
	}
	client := p.service(t).NewClient(tableName)
	var mu sync.Mutex
	acked := map[string]props{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				rk := fmt.Sprintf("w%d-%s", w, rowKey(i))
				ps := props{"N": {"Edm.Int32", strconv.Itoa(i)}}
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				_, err := client.AddEntity(ctx, marshalEntity("p", rk, ps), nil)
				cancel()
				if err != nil {
					return // the server went away
				}
				mu.Lock()
				acked[rk] = ps
				mu.Unlock()
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	stallClient(t, p.addr)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitListenerClosed(t, p.addr)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := p.waitExit(t, 30*time.Second) // a hang detector: without the second signal it waits 1 h
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit after the second signal: %v (want status 130)\n%s", err, p.stderr)
	}
	close(stop)
	wg.Wait()

	p, _ = startTablo(t, bin, dir)
	got := listPartition(t, p, tableName, "p")
	for rk, ps := range acked {
		if !got[rk].exists || !maps.Equal(got[rk].props, ps) {
			t.Errorf("acknowledged %s after restart: %s", rk, describe(got[rk]))
		}
	}
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before the signals")
	}
	t.Logf("%d acknowledged inserts intact after two signals and a restart", len(acked))
}
