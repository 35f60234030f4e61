package e2e

// Graceful shutdown of the real binary: SIGTERM with requests in flight.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// slowRequest is a raw request whose body is withheld until after SIGTERM, so that it is in
// flight while the server shuts down. It asks Expect: 100-continue, so the server's
// "100 Continue" proves it has read the request head and is waiting for the body.
type slowRequest struct {
	conn net.Conn
	br   *bufio.Reader
	req  *http.Request
	body []byte
}

func startSlowInsert(t *testing.T, p *tabloProc, table, pk, rk string) *slowRequest {
	t.Helper()
	body := marshalEntity(pk, rk, props{"Slow": {"Edm.String", rk}, "Big": {"Edm.Int64", "-9223372036854775808"}})
	req, err := http.NewRequest(http.MethodPost, p.endpoint+"/"+table, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	req.Header.Set("DataServiceVersion", "3.0")
	req.Header.Set("Prefer", "return-no-content")
	req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	req.Header.Set("Expect", "100-continue")
	signLite(req)
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var head bytes.Buffer
	fmt.Fprintf(&head, "POST %s HTTP/1.1\r\nHost: %s\r\n", req.URL.RequestURI(), p.addr)
	if err := req.Header.Write(&head); err != nil {
		t.Fatal(err)
	}
	head.WriteString("\r\n")
	if _, err := conn.Write(head.Bytes()); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue before the body: %v %v", resp, err)
	}
	return &slowRequest{conn: conn, br: br, req: req, body: body}
}

// finish sends the body and returns the response status.
func (s *slowRequest) finish() (int, error) {
	_ = s.conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := s.conn.Write(s.body); err != nil {
		return 0, fmt.Errorf("write body: %w", err)
	}
	resp, err := http.ReadResponse(s.br, s.req)
	if err != nil {
		return 0, fmt.Errorf("read response: %w", err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, nil
}

// TestGracefulShutdown sends SIGTERM while SDK writes and withheld-body requests are in
// flight: the in-flight requests must complete, the process must exit 0, and every
// acknowledged write must be there after a restart.
func TestGracefulShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped in -short mode")
	}
	bin := buildTablo(t)
	dataDir := t.TempDir()
	p, _ := startTablo(t, bin, dataDir)
	const tableName = "graceful"
	if _, err := p.service(t).CreateTable(context.Background(), tableName, nil); err != nil {
		t.Fatal(err)
	}
	client := p.service(t).NewClient(tableName)

	var terminated atomic.Bool
	type written struct {
		pk, rk string
		ps     props
	}
	var mu sync.Mutex
	var acked []written
	var wg sync.WaitGroup
	// Each writer reports its first acknowledged write: SIGTERM comes only when all six are
	// writing (no sleep standing in for that).
	started := make(chan struct{}, 6)
	for w := range 6 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; ; i++ {
				pk, rk := fmt.Sprintf("g%d", w), rowKey(i)
				ps := randomProps(r, int64(i))
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				_, err := client.AddEntity(ctx, marshalEntity(pk, rk, ps), nil)
				cancel()
				if err != nil {
					if !terminated.Load() {
						t.Errorf("insert %s/%s before SIGTERM: %v", pk, rk, err)
					}
					return
				}
				mu.Lock()
				acked = append(acked, written{pk, rk, ps})
				mu.Unlock()
				if i == 0 {
					started <- struct{}{}
				}
			}
		})
	}
	slow := []*slowRequest{
		startSlowInsert(t, p, tableName, "slow", "a"),
		startSlowInsert(t, p, tableName, "slow", "b ü'%"),
	}
	for range 6 {
		select {
		case <-started:
		case <-time.After(30 * time.Second):
			t.Fatal("writers made no progress in 30 s")
		}
	}
	mu.Lock()
	before := len(acked)
	mu.Unlock()
	terminated.Store(true)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Wait until the listener is closed, so the slow requests are in flight during shutdown.
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", p.addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still open 10 s after SIGTERM")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i, s := range slow {
		status, err := s.finish()
		if err != nil || status != http.StatusNoContent {
			t.Errorf("in-flight request %d: status %d, err %v; want 204", i, status, err)
		}
	}
	wg.Wait()
	// Writes acknowledged after SIGTERM was sent were in flight during the shutdown.
	t.Logf("%d inserts acknowledged before SIGTERM, %d after it was sent", before, len(acked)-before)
	if err := p.waitExit(t, 30*time.Second); err != nil {
		t.Errorf("exit after SIGTERM: %v (want status 0)\n%s", err, p.stderr)
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		t.Logf("exit status %d", ee.ExitCode())
	}

	p, _ = startTablo(t, bin, dataDir)
	found := map[string]map[string]state{}
	for _, w := range acked {
		if found[w.pk] == nil {
			found[w.pk] = listPartition(t, p, tableName, w.pk)
		}
		got := found[w.pk][w.rk]
		if !got.exists || !maps.Equal(got.props, w.ps) {
			t.Errorf("acknowledged %s/%s after restart: %s, want %s", w.pk, w.rk, describe(got), describe(state{exists: true, props: w.ps}))
		}
	}
	slowGot := listPartition(t, p, tableName, "slow")
	for _, rk := range []string{"a", "b ü'%"} {
		if !slowGot[rk].exists {
			t.Errorf("in-flight insert slow/%s missing after restart", rk)
		}
	}
	t.Logf("%d acknowledged inserts and 2 in-flight inserts intact after SIGTERM and restart", len(acked))
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.waitExit(t, 30*time.Second); err != nil {
		t.Errorf("second exit after SIGTERM: %v\n%s", err, p.stderr)
	}
}
