package postgres_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/postgres"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// nestLog counts the nesting check's reports.
type nestLog struct {
	mu  sync.Mutex
	ops []string
}

func (l *nestLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *nestLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != postgres.NestingMessage {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "op" {
			l.mu.Lock()
			l.ops = append(l.ops, a.Value.String())
			l.mu.Unlock()
		}
		return true
	})
	return nil
}
func (l *nestLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *nestLog) WithGroup(string) slog.Handler      { return l }

func (l *nestLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.Join(l.ops, ",")
	l.ops = nil
	return s
}

// The nesting check (Options.CheckNesting) reports each way a goroutine holding a pooled
// connection asks for another (inside an Update, with a snapshot open, in a scan's
// callback, writing or reading an extent meanwhile), and nothing for the same calls made
// one after the other or for a Txn's own reads. The pool is large enough that every call
// still succeeds: the check reports what a full pool would deadlock on.
func TestNestingCheckReports(t *testing.T) {
	log := &nestLog{}
	db, err := postgres.Open(ctx, postgres.Options{URL: pgtest.URL(t), CheckNesting: true, Logger: slog.New(log),
		StatementTimeout: 2 * time.Second, ReclaimInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	must := func(err error) {
		t.Helper()
		if err != nil && err != store.ErrNotFound {
			t.Fatal(err)
		}
	}
	want := func(what, ops string) {
		t.Helper()
		if got := log.take(); got != ops {
			t.Errorf("%s: reported %q, want %q", what, got, ops)
		}
	}
	ext := db.Extents()
	w, err := ext.NewExtent(ctx)
	must(err)
	_, err = w.Write(bytes.Repeat([]byte{1}, 3<<20)) // chunks written in the background
	must(err)
	id, err := w.Commit()
	must(err)
	must(db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set([]byte("k"), []byte("v")) }))
	_, err = db.Get(ctx, []byte("k"))
	must(err)
	must(db.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) { return true, nil }))
	r, err := ext.ReadExtent(ctx, id, 0, -1)
	must(err)
	_, err = io.Copy(io.Discard, r)
	must(err)
	r.Close()
	want("calls one after the other", "")

	must(db.Update(ctx, nil, func(tx store.Txn) error {
		if _, err := tx.Get([]byte("k")); err != nil {
			return err
		}
		snap, err := tx.Snapshot()
		if err != nil {
			return err
		}
		defer snap.Close()
		_, err = snap.Lookup([]byte("k"))
		return err
	}))
	want("a Txn's own reads", "")

	must(db.Update(ctx, nil, func(tx store.Txn) error {
		_, err := db.Get(ctx, []byte("k"))
		return err
	}))
	want("Get inside an Update", "get")

	snap, err := db.Snapshot(ctx)
	must(err)
	must(db.Update(ctx, nil, func(tx store.Txn) error { return nil }))
	_, err = db.Get(ctx, []byte("k"))
	must(err)
	snap.Close()
	want("Update and Get with a snapshot open", "update,get")

	must(db.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) {
		_, err := db.Get(ctx, k)
		return false, err
	}))
	must(store.ScanLimit(ctx, db, nil, nil, 1, func(k, v []byte) (bool, error) {
		_, err := db.Get(ctx, k)
		return false, err
	}))
	want("Get in a scan's callback", "get,get")

	must(db.Update(ctx, nil, func(tx store.Txn) error {
		w, err := ext.NewExtent(ctx)
		if err != nil {
			return err
		}
		if _, err := w.Write(bytes.Repeat([]byte{2}, 2<<20)); err != nil {
			return err
		}
		_, err = w.Commit()
		return err
	}))
	want("an extent written inside an Update", "new extent,write extent,write extent")

	snap, err = db.Snapshot(ctx)
	must(err)
	r, err = ext.ReadExtent(ctx, id, 0, -1)
	must(err)
	_, err = io.Copy(io.Discard, r)
	must(err)
	r.Close()
	snap.Close()
	want("an extent read with a snapshot open", "read extent,read extent,read extent")
}

// TestNestingCheckPerGoroutine: connections are counted per goroutine, so a call made while
// another goroutine holds a connection (a scan stopped in its callback) is not reported.
func TestNestingCheckPerGoroutine(t *testing.T) {
	log := &nestLog{}
	db, err := postgres.Open(ctx, postgres.Options{URL: pgtest.URL(t), CheckNesting: true, Logger: slog.New(log),
		StatementTimeout: 2 * time.Second, ReclaimInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(ctx, nil, func(tx store.Txn) error { return tx.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	holding, release, scanned := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		scanned <- db.Scan(ctx, nil, nil, func(k, v []byte) (bool, error) {
			close(holding)
			<-release
			return false, nil
		})
	}()
	<-holding
	_, gerr := db.Get(ctx, []byte("k"))
	close(release)
	if err := <-scanned; err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	if got := log.take(); got != "" {
		t.Fatalf("a Get while another goroutine scans: reported %q, want nothing", got)
	}
}
