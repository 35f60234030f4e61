package queuewire

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/metrics"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/queue"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// benchServer is a Queue server wired as the app wires it (metrics, partition layer) over
// an in-memory engine, driven without a network: what a request costs Tablo itself, without
// the socket, the WAL fsync or the scheduler.
type benchServer struct {
	s    *Server
	acct auth.Account
	date string
	fc   fasthttp.RequestCtx
	req  fasthttp.Request
	addr net.Addr
	mac  hash.Hash
}

func newBenchServer(b *testing.B) *benchServer {
	b.Helper()
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	svc := queue.New(db, queue.Options{ReapInterval: -1})
	b.Cleanup(func() { svc.Close(); db.Close() })
	bs := &benchServer{acct: auth.DevAccount(), addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}}
	bs.s = New(Options{Service: svc, Accounts: []auth.Account{bs.acct},
		Metrics: metrics.New(prometheus.NewRegistry()), Partitions: partition.New(partition.Options{})})
	bs.date = time.Now().UTC().Format(http.TimeFormat)
	bs.mac = hmac.New(sha256.New, bs.acct.Keys[0])
	if _, err := svc.CreateQueue(b.Context(), bs.acct.Name, "bench", nil); err != nil {
		b.Fatal(err)
	}
	return bs
}

// do serves one request shaped as azqueue v1.0.1 sends it (wire samples: the same headers in
// the same order), signed with the account's key, and returns the status and body. The
// target's path starts with the account; its query has at most one parameter.
func (bs *benchServer) do(b *testing.B, method, target string, body []byte) (int, []byte) {
	// Signed here by the documented string-to-sign of these requests (two x-ms-* headers,
	// at most one query parameter), not by package auth: the harness's cost must not move
	// with the code under test.
	path, query, _ := strings.Cut(target, "?")
	sts := method + "\n\n\n"
	if body != nil {
		sts += itoa(len(body))
	}
	sts += "\n\n"
	if body != nil {
		sts += "application/xml"
	}
	sts += "\n\n\n\n\n\n\n" + "x-ms-date:" + bs.date + "\nx-ms-version:2018-03-28\n/" + bs.acct.Name + path // path style: the account, then the path with the account
	if query != "" {
		name, value, _ := strings.Cut(query, "=")
		sts += "\n" + name + ":" + value
	}
	bs.mac.Reset()
	bs.mac.Write([]byte(sts))
	sig := "SharedKey " + bs.acct.Name + ":" + base64.StdEncoding.EncodeToString(bs.mac.Sum(nil))
	var raw bytes.Buffer
	raw.WriteString(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:10001\r\n")
	raw.WriteString("User-Agent: azsdk-go-azqueue/v1.0.1 (go1.26.8; linux)\r\nAccept: application/xml\r\n")
	if body != nil {
		raw.WriteString("Content-Length: " + itoa(len(body)) + "\r\nContent-Type: application/xml\r\n")
	}
	raw.WriteString("Authorization: " + sig + "\r\nX-Ms-Date: " + bs.date + "\r\nx-ms-version: 2018-03-28\r\nAccept-Encoding: gzip\r\n\r\n")
	raw.Write(body)
	bs.req.Reset()
	if err := bs.req.Read(bufio.NewReader(&raw)); err != nil {
		b.Fatal(err)
	}
	bs.fc.Init(&bs.req, bs.addr, nil)
	bs.s.Handle(&bs.fc)
	return bs.fc.Response.StatusCode(), bs.fc.Response.Body()
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

var (
	msgIDRe   = regexp.MustCompile(`<MessageId>([^<]+)</MessageId>`)
	receiptRe = regexp.MustCompile(`<PopReceipt>([^<]+)</PopReceipt>`)
)

const benchPut = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" + `<QueueMessage><MessageText>payload-payload-payload</MessageText></QueueMessage>`

// BenchmarkHandlerPut is one Put Message through the handler:
//
//	go test ./internal/queuewire -run - -bench Handler -benchmem
func BenchmarkHandlerPut(b *testing.B) {
	bs := newBenchServer(b)
	body := []byte(benchPut)
	b.ReportAllocs()
	defer bs.report(b, cpuTime())
	for range b.N {
		if st, out := bs.do(b, "POST", "/devstoreaccount1/bench/messages", body); st != http.StatusCreated {
			b.Fatal(st, string(out))
		}
	}
}

// BenchmarkHandlerGetDelete is one Get Messages and the Delete Message of what it took
// (the bench's get-delete op), on a queue filled beforehand.
func BenchmarkHandlerGetDelete(b *testing.B) {
	bs := newBenchServer(b)
	for range b.N {
		if _, err := bs.s.svc.PutMessage(b.Context(), bs.acct.Name, "bench", "payload-payload-payload", 0, queue.DefaultTTL); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer bs.report(b, cpuTime())
	for range b.N {
		st, out := bs.do(b, "GET", "/devstoreaccount1/bench/messages?numofmessages=1", nil)
		id, rc := msgIDRe.FindSubmatch(out), receiptRe.FindSubmatch(out)
		if st != http.StatusOK || id == nil || rc == nil {
			b.Fatal(st, string(out))
		}
		if st, out := bs.do(b, "DELETE", "/devstoreaccount1/bench/messages/"+string(id[1])+"?popreceipt="+string(rc[1]), nil); st != http.StatusNoContent {
			b.Fatal(st, string(out))
		}
	}
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report reports the process's CPU time per operation since start (cpu-ns/op), which
// waiting for a CPU on a shared machine does not inflate.
func (bs *benchServer) report(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
