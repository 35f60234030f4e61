package blob

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/keys"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// stagedAt reads when a staged block was staged.
func stagedAt(t *testing.T, s *Service, r Ref, blockID string) int64 {
	t.Helper()
	c, err := s.GetContainer(context.Background(), r.Account, r.Container)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.st.Get(context.Background(), keys.BlobBlock(c.ID, r.Name, blockID))
	if err != nil {
		t.Fatal(err)
	}
	var sb staged
	if _, err := decodeRecord(v, &sb); err != nil {
		t.Fatal(err)
	}
	return sb.Staged
}

// An uncommitted block lives exactly its expiry (default seven days): at that age the sweep
// keeps it, one tick older it deletes it, and the sweeps after free its extent.
func TestStagedBlockExpiresAtItsAge(t *testing.T) {
	for _, expiry := range []time.Duration{0, time.Hour} {
		now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
		db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		s := New(db, Options{SweepInterval: -1, Now: func() time.Time { return now }, BlockExpiry: expiry})
		ctx := context.Background()
		if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
			t.Fatal(err)
		}
		r := Ref{Account: "a", Container: "ccc", Name: "b"}
		if _, err := s.PutBlock(ctx, r, "QUFB", body([]byte("staged")), Cond{}); err != nil {
			t.Fatal(err)
		}
		life := expiry
		if life == 0 {
			life = 7 * 24 * time.Hour
		}
		now = timeOf(stagedAt(t, s, r, "QUFB")).Add(life)
		if st := sweep2(t, s); st.ExpiredBlocks != 0 || st.Deleted != 0 || st.Referenced != 1 {
			t.Errorf("expiry %v: at exactly its age: %+v", expiry, st)
		}
		now = now.Add(100 * time.Nanosecond)
		if st, err := s.Sweep(ctx); err != nil || st.ExpiredBlocks != 1 {
			t.Errorf("expiry %v: one tick older: %+v %v", expiry, st, err)
		}
		if _, _, unc, err := s.GetBlockList(ctx, r, Cond{}); err == nil || len(unc) != 0 {
			t.Errorf("expiry %v: staged block still there: %v %v", expiry, unc, err)
		}
		if st := sweep2(t, s); st.Deleted != 1 || st.DeletedBytes != int64(len("staged")) {
			t.Errorf("expiry %v: its extent: %+v", expiry, st)
		}
		s.Close()
		db.Close()
	}
}

// Every reader holds what it streams: of two readers of one blob, the one still reading
// keeps the extent through sweeps after the other has closed.
func TestSweepSparesEveryReader(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	big := bytes.Repeat([]byte("r"), 3*inlineMax)
	if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body(big)}); err != nil {
		t.Fatal(err)
	}
	b, err := s.Get(ctx, r, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	first := s.Open(ctx, b, 0, b.Size)
	second := s.Open(ctx, b, 0, b.Size)
	first.Close()
	if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("new"))}); err != nil {
		t.Fatal(err)
	}
	if st := sweep2(t, s); st.Deleted != 0 || st.Candidates != 0 {
		t.Errorf("while a reader streams: %+v", st)
	}
	got, err := io.ReadAll(second)
	second.Close()
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("second reader: %d bytes, %v", len(got), err)
	}
	if st := sweep2(t, s); st.Deleted != 1 || st.DeletedBytes != int64(len(big)) || st.Referenced != 0 {
		t.Errorf("after both readers: %+v", st)
	}
}

// On a shared engine the grace defaults to DefaultSharedGrace: garbage swept twice within
// it stays.
func TestSharedGraceDefault(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, grace := range []time.Duration{0, -time.Second} {
		s := New(sharedStore{db}, Options{SweepInterval: -1, SharedGrace: grace})
		if s.gc.grace != DefaultSharedGrace {
			t.Errorf("SharedGrace %v: grace %v, want %v", grace, s.gc.grace, DefaultSharedGrace)
		}
		s.Close()
	}
	s := New(sharedStore{db}, Options{SweepInterval: -1})
	defer s.Close()
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	for range 2 {
		if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body(bytes.Repeat([]byte("g"), inlineMax+1))}); err != nil {
			t.Fatal(err)
		}
	}
	if st := sweep2(t, s); st.Deleted != 0 || st.Candidates != 1 {
		t.Errorf("within the default grace: %+v", st)
	}
}

// logRecorder keeps the messages of the records logged at Warn or above.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		l.mu.Lock()
		l.msgs = append(l.msgs, r.Message)
		l.mu.Unlock()
	}
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// The background sweep reclaims garbage by itself, logs nothing when its sweeps succeed,
// and stops on Close; with the default options (a sweep a minute) the garbage a write makes
// wakes it sooner.
func TestBackgroundSweep(t *testing.T) {
	t.Run("interval", func(t *testing.T) { testBackgroundSweep(t, time.Millisecond) })
	t.Run("default", func(t *testing.T) { testBackgroundSweep(t, 0) })
}

func testBackgroundSweep(t *testing.T, interval time.Duration) {
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := &logRecorder{}
	s := New(db, Options{SweepInterval: interval, Logger: slog.New(rec)})
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	for range 2 { // the second write makes garbage and asks for a sweep
		if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body(bytes.Repeat([]byte("g"), inlineMax+1))}); err != nil {
			t.Fatal(err)
		}
	}
	// That sweep marks the garbage; a later one frees it, on the interval or when asked
	// again (as the next write making garbage would).
	deadline := time.Now().Add(30 * time.Second)
	for n, _ := countExtents(t, db); n != 1; n, _ = countExtents(t, db) {
		if time.Now().After(deadline) {
			t.Fatalf("%d extents after 30 s of background sweeps, want 1", n)
		}
		s.gc.poke()
		time.Sleep(50 * time.Millisecond)
	}
	s.Close()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.msgs) != 0 {
		t.Errorf("logged: %s", strings.Join(rec.msgs, "; "))
	}
}

// A background sweep that fails (here on a record it cannot decode) is logged as a warning
// through the service's logger.
func TestBackgroundSweepLogsFailure(t *testing.T) {
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := &logRecorder{}
	s := New(db, Options{SweepInterval: time.Millisecond, Logger: slog.New(rec)})
	defer s.Close()
	ctx := context.Background()
	c, err := s.CreateContainer(ctx, "a", "ccc", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := setRaw(ctx, s, keys.Blob(c.ID, "b", 0), []byte{0, 0, 0, 9, '{'}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		rec.mu.Lock()
		n := len(rec.msgs)
		rec.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no warning after 30 s of failing sweeps")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
