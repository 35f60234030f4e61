package app

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// TestStartWaitsForTheDatabase: a front end started before its database is reachable waits
// for it and then serves, rather than exiting.
func TestStartWaitsForTheDatabase(t *testing.T) {
	target, err := url.Parse(pgtest.URL(t))
	if err != nil || target.Host == "" {
		t.Skip("needs a postgres:// URL")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: the database is "down"
	via := *target
	via.Host = addr
	cfg := config.Config{Host: "127.0.0.1", Accounts: []auth.Account{auth.DevAccount()}, PostgresURL: via.String()}
	started := make(chan error, 1)
	var a *App
	go func() {
		var err error
		a, err = Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
		started <- err
	}()
	time.Sleep(1500 * time.Millisecond)
	select {
	case err := <-started:
		t.Fatalf("Start returned while the database was unreachable: %v", err)
	default:
	}
	// The database comes up: forward the address to the real server.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target.Host)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Start did not finish after the database came up")
	}
	if err := a.Ready(context.Background()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
