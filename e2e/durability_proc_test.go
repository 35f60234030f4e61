package e2e

// The real binary as a child process: build, start on a free loopback port, wait for the
// first successful query, and observe its exit.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// buildTablo compiles cmd/tablo into a temporary directory.
func buildTablo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tablo")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tablo/tablo/cmd/tablo")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// lockedBuffer collects a child's stderr for failure messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tabloProc is one run of the binary.
type tabloProc struct {
	cmd      *exec.Cmd
	endpoint string
	addr     string
	blobAddr string
	// queueEndpoint is the Queue service's URL (on its own free port).
	queueEndpoint string
	stderr        *lockedBuffer
	exited        chan struct{}
	waitErr       error
	// expectErrors: the test provokes server errors (see expectServerErrors).
	expectErrors atomic.Bool
}

// expectServerErrors declares that this test provokes server errors in the process (a 503
// while its database restarts): without it, any Error-level record fails the test.
func (p *tabloProc) expectServerErrors() { p.expectErrors.Store(true) }

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startTablo runs the binary on dataDir (with extra flags) and waits for its first successful
// query; it returns the time from exec to that query.
func startTablo(t *testing.T, bin, dataDir string, extra ...string) (*tabloProc, time.Duration) {
	t.Helper()
	engine := []string{"--data-dir", dataDir}
	if u := postgresFor(t, dataDir); u != "" {
		engine = []string{"--postgres", u}
	}
	return startTabloWith(t, bin, append(engine, extra...)...)
}

// startTabloWith runs the binary with flags (the engine's, --data-dir or --postgres, and
// any others) and waits for its first successful query. Its ports are picked free and then
// handed to the process, so another process may take one in between: a start-up refused
// for a port already in use is retried on new ports.
func startTabloWith(t *testing.T, bin string, flags ...string) (*tabloProc, time.Duration) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		p, took, portTaken := launchTablo(t, bin, flags...)
		if !portTaken {
			return p, took
		}
		if attempt == 5 {
			t.Fatalf("tablo found a port in use at each of %d starts:\n%s", attempt, p.stderr)
		}
		t.Logf("start %d: a port was taken between its pick and the bind; retrying on new ports", attempt)
	}
}

// launchTablo runs the binary on newly picked ports and waits for its first successful
// query; portTaken reports a process that exited at start-up because one of them was taken.
func launchTablo(t *testing.T, bin string, flags ...string) (p *tabloProc, took time.Duration, portTaken bool) {
	t.Helper()
	port := freeLoopbackPort(t)
	p = &tabloProc{
		addr:   fmt.Sprintf("127.0.0.1:%d", port),
		stderr: &lockedBuffer{},
		exited: make(chan struct{}),
	}
	p.endpoint = "http://" + p.addr + "/" + devAccount
	blobPort := freeLoopbackPort(t)
	p.blobAddr = fmt.Sprintf("127.0.0.1:%d", blobPort)
	queuePort := freeLoopbackPort(t)
	p.queueEndpoint = fmt.Sprintf("http://127.0.0.1:%d/%s", queuePort, devAccount)
	p.cmd = exec.Command(bin, append([]string{"--host", "127.0.0.1", "--table-port", strconv.Itoa(port),
		"--queue-port", strconv.Itoa(queuePort), "--blob-port", strconv.Itoa(blobPort), "--log-level", "warn", "--admin-port", "0"}, flags...)...)
	p.cmd.Stderr = p.stderr
	p.cmd.Stdout = p.stderr
	began := time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		// As for in-process servers: an Error-level record (slog names the level ERROR in
		// every format) fails the test.
		if out := p.stderr.String(); !p.expectErrors.Load() && strings.Contains(out, "ERROR") {
			t.Errorf("the server logged errors:\n%s", out)
		}
	})
	svc := p.service(t)
	for {
		qctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		top := int32(1)
		_, err := svc.NewListTablesPager(&aztables.ListTablesOptions{Top: &top}).NextPage(qctx)
		cancel()
		if err == nil {
			return p, time.Since(began), false
		}
		select {
		case <-p.exited:
			if strings.Contains(p.stderr.String(), "is already in use") {
				return p, 0, true
			}
			t.Fatalf("tablo exited during start-up: %v\n%s", p.waitErr, p.stderr)
		default:
		}
		if time.Since(began) > startupDeadline {
			t.Fatalf("tablo not ready after %v: %v\n%s", startupDeadline, err, p.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (p *tabloProc) service(t testing.TB) *aztables.ServiceClient {
	t.Helper()
	cs := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;", devAccount, devKey, p.endpoint)
	c, err := aztables.NewServiceClientFromConnectionString(cs, clientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitExit waits for the process to end and returns its exit error (nil for status 0).
func (p *tabloProc) waitExit(t *testing.T, limit time.Duration) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(limit):
		t.Fatalf("tablo did not exit within %v\n%s", limit, p.stderr)
		return nil
	}
}
