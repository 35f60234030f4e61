package e2e

// Crash test against the real binary: concurrent SDK load, kill -9 at a random moment,
// restart on the same data directory, and a check of every write against a model.
// (durability_proc_test.go runs the binary; durability_props_test.go compares entities;
// durability_shutdown_test.go covers SIGTERM.)
//
// Invariants checked after each restart:
//   - every acknowledged write is present with exactly its properties (and its ETag when the
//     acknowledgement carried one); acknowledged deletes stay deleted;
//   - a write whose acknowledgement never arrived is "maybe": before or after state;
//   - an in-flight entity group transaction is wholly applied or wholly absent;
//   - an entity never carries an ETag it carried before (optimistic concurrency stays safe
//     across restarts);
//   - no entity appears that no write created.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

const (
	crashCycles     = 4
	crashWorkers    = 8
	crashPoolSize   = 160 // row keys per worker partition
	crashSeedRows   = 20000
	crashSeedBatch  = 100
	crashMinLoad    = 400 * time.Millisecond
	crashMaxLoad    = 2500 * time.Millisecond
	requestTimeout  = 15 * time.Second
	startupDeadline = 30 * time.Second
)

// ---- the model ----

// state is one entity's content: absent, or present with props and (when known) its ETag.
type state struct {
	exists bool
	props  props
	etag   string
}

func (s state) sameContent(o state) bool {
	return s.exists == o.exists && (!s.exists || maps.Equal(s.props, o.props))
}

// slot tracks one row key. pending is set while a write's outcome is unknown.
type slot struct {
	cur     state
	pending *state
	batchID int // non-zero when pending belongs to a transaction
	etags   map[string]bool
}

// partitionModel is one worker's partition; only its worker touches it during load.
type partitionModel struct {
	pk    string
	slots []slot
	acked atomic.Int64
	maybe int
}

func newPartitionModel(pk string) *partitionModel {
	m := &partitionModel{pk: pk, slots: make([]slot, crashPoolSize)}
	for i := range m.slots {
		m.slots[i].etags = map[string]bool{}
	}
	return m
}

func rowKey(i int) string { return fmt.Sprintf("r%04d", i) }

// noteETag records an acknowledged ETag and reports reuse.
func (m *partitionModel) noteETag(t *testing.T, i int, etag string) {
	if etag == "" {
		return
	}
	if m.slots[i].etags[etag] {
		t.Errorf("%s/%s: ETag %s handed out twice", m.pk, rowKey(i), etag)
	}
	m.slots[i].etags[etag] = true
}

// ---- the load ----

type loadRun struct {
	t       *testing.T
	client  *aztables.Client
	killed  *atomic.Bool
	seq     *atomic.Int64
	batchID *atomic.Int64
}

func (l *loadRun) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), requestTimeout)
}

// failed classifies a write error: after the kill it is expected; before, it is a bug.
func (l *loadRun) failed(what string, err error) {
	if !l.killed.Load() {
		l.t.Errorf("%s failed before the kill: %v", what, err)
	}
}

// work drives one partition until a write fails (the kill) or stop closes.
func (l *loadRun) work(m *partitionModel, r *rand.Rand, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		var ok bool
		if r.IntN(5) == 0 {
			ok = l.batch(m, r)
		} else {
			ok = l.single(m, r)
		}
		if !ok {
			return
		}
	}
}

func etagPtr(e string) *azcore.ETag {
	if e == "" {
		return nil // the SDK sends If-Match: *
	}
	et := azcore.ETag(e)
	return &et
}

func (l *loadRun) single(m *partitionModel, r *rand.Rand) bool {
	i := r.IntN(len(m.slots))
	s := &m.slots[i]
	cur := s.cur
	ps := randomProps(r, l.seq.Add(1))
	body := marshalEntity(m.pk, rowKey(i), ps)
	next := state{exists: true, props: ps}
	merged := state{exists: true, props: maps.Clone(cur.props)}
	if merged.props == nil {
		merged.props = props{}
	}
	maps.Copy(merged.props, ps)

	ctx, cancel := l.ctx()
	defer cancel()
	var etag azcore.ETag
	var err error
	var what string
	if !cur.exists {
		switch r.IntN(3) {
		case 0:
			what = "add"
			s.pending = &next
			var resp aztables.AddEntityResponse
			resp, err = l.client.AddEntity(ctx, body, nil)
			etag = resp.ETag
		case 1:
			what = "upsert-replace(new)"
			s.pending = &next
			var resp aztables.UpsertEntityResponse
			resp, err = l.client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
			etag = resp.ETag
		default:
			what = "upsert-merge(new)"
			s.pending = &next
			var resp aztables.UpsertEntityResponse
			resp, err = l.client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
			etag = resp.ETag
		}
	} else {
		switch r.IntN(6) {
		case 0:
			what = "upsert-replace"
			s.pending = &next
			var resp aztables.UpsertEntityResponse
			resp, err = l.client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
			etag = resp.ETag
		case 1:
			what = "upsert-merge"
			s.pending = &merged
			var resp aztables.UpsertEntityResponse
			resp, err = l.client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
			etag = resp.ETag
		case 2:
			what = "update-replace"
			s.pending = &next
			var resp aztables.UpdateEntityResponse
			resp, err = l.client.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: etagPtr(cur.etag)})
			etag = resp.ETag
		case 3, 4:
			what = "update-merge"
			s.pending = &merged
			var resp aztables.UpdateEntityResponse
			resp, err = l.client.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: etagPtr(cur.etag)})
			etag = resp.ETag
		default:
			what = "delete"
			s.pending = &state{}
			_, err = l.client.DeleteEntity(ctx, m.pk, rowKey(i), &aztables.DeleteEntityOptions{IfMatch: etagPtr(cur.etag)})
		}
	}
	if err != nil {
		l.failed(fmt.Sprintf("%s %s/%s", what, m.pk, rowKey(i)), err)
		return false
	}
	done := *s.pending
	done.etag = string(etag)
	if done.exists && done.etag == "" {
		l.t.Errorf("%s %s/%s: acknowledged without an ETag", what, m.pk, rowKey(i))
	}
	m.noteETag(l.t, i, done.etag)
	s.cur, s.pending = done, nil
	m.acked.Add(1)
	return true
}

// batch submits one transaction of 10–50 distinct rows with every action kind.
func (l *loadRun) batch(m *partitionModel, r *rand.Rand) bool {
	id := int(l.batchID.Add(1))
	rows := r.Perm(len(m.slots))[:10+r.IntN(41)]
	actions := make([]aztables.TransactionAction, 0, len(rows))
	for _, i := range rows {
		s := &m.slots[i]
		ps := randomProps(r, l.seq.Add(1))
		a := aztables.TransactionAction{Entity: marshalEntity(m.pk, rowKey(i), ps)}
		next := state{exists: true, props: ps}
		merged := state{exists: true, props: maps.Clone(s.cur.props)}
		if merged.props == nil {
			merged.props = props{}
		}
		maps.Copy(merged.props, ps)
		if !s.cur.exists {
			switch r.IntN(3) {
			case 0:
				a.ActionType = aztables.TransactionTypeAdd
			case 1:
				a.ActionType = aztables.TransactionTypeInsertReplace
			default:
				a.ActionType = aztables.TransactionTypeInsertMerge
			}
			s.pending = &next
		} else {
			switch r.IntN(5) {
			case 0:
				a.ActionType, a.IfMatch = aztables.TransactionTypeUpdateReplace, etagPtr(s.cur.etag)
				s.pending = &next
			case 1:
				a.ActionType, a.IfMatch = aztables.TransactionTypeUpdateMerge, etagPtr(s.cur.etag)
				s.pending = &merged
			case 2:
				a.ActionType = aztables.TransactionTypeInsertReplace
				s.pending = &next
			case 3:
				a.ActionType = aztables.TransactionTypeInsertMerge
				s.pending = &merged
			default:
				a.ActionType, a.IfMatch = aztables.TransactionTypeDelete, etagPtr(s.cur.etag)
				a.Entity = marshalEntity(m.pk, rowKey(i), nil)
				s.pending = &state{}
			}
		}
		s.batchID = id
		actions = append(actions, a)
	}
	ctx, cancel := l.ctx()
	defer cancel()
	if _, err := l.client.SubmitTransaction(ctx, actions, nil); err != nil {
		l.failed(fmt.Sprintf("transaction of %d in %s", len(actions), m.pk), err)
		return false
	}
	for _, i := range rows {
		s := &m.slots[i]
		s.cur, s.pending, s.batchID = *s.pending, nil, 0 // ETags are not in the SDK's batch response
	}
	m.acked.Add(int64(len(rows)))
	return true
}

// ---- verification ----

// verify checks a partition against its model after a restart, then resolves every maybe to
// what was found.
func verify(t *testing.T, p *tabloProc, table string, m *partitionModel) {
	t.Helper()
	got := listPartition(t, p, table, m.pk)
	observed := func(i int) state { return got[rowKey(i)] }
	for rk := range got {
		var i int
		if _, err := fmt.Sscanf(rk, "r%04d", &i); err != nil || i >= len(m.slots) || rowKey(i) != rk {
			t.Errorf("%s/%s: entity that no write created", m.pk, rk)
		}
	}
	// Transactions in flight: all rows before, or all rows after.
	batches := map[int][]int{}
	for i := range m.slots {
		if s := &m.slots[i]; s.pending != nil && s.batchID != 0 {
			batches[s.batchID] = append(batches[s.batchID], i)
		}
	}
	for id, rows := range batches {
		allBefore, allAfter := true, true
		for _, i := range rows {
			o := observed(i)
			allBefore = allBefore && o.sameContent(m.slots[i].cur)
			allAfter = allAfter && o.sameContent(*m.slots[i].pending)
		}
		if !allBefore && !allAfter {
			t.Errorf("%s: in-flight transaction %d (%d rows) applied partially", m.pk, id, len(rows))
			for _, i := range rows {
				o := observed(i)
				t.Logf("  %s: before=%v after=%v", rowKey(i), o.sameContent(m.slots[i].cur), o.sameContent(*m.slots[i].pending))
			}
		}
		m.maybe++
	}
	for i := range m.slots {
		s := &m.slots[i]
		o := observed(i)
		switch {
		case s.pending == nil:
			if !o.sameContent(s.cur) {
				t.Errorf("%s/%s: acknowledged state lost:\n  want %s\n  got  %s", m.pk, rowKey(i), describe(s.cur), describe(o))
			} else if s.cur.exists && s.cur.etag != "" && o.etag != s.cur.etag {
				t.Errorf("%s/%s: ETag %s after restart, acknowledged %s", m.pk, rowKey(i), o.etag, s.cur.etag)
			}
		case s.batchID == 0:
			m.maybe++
			if !o.sameContent(s.cur) && !o.sameContent(*s.pending) {
				t.Errorf("%s/%s: unacknowledged write left neither state:\n  before %s\n  after  %s\n  got    %s",
					m.pk, rowKey(i), describe(s.cur), describe(*s.pending), describe(o))
			}
			if o.sameContent(s.cur) && !o.sameContent(*s.pending) && s.cur.exists && s.cur.etag != "" && o.etag != s.cur.etag {
				t.Errorf("%s/%s: unapplied write changed the ETag from %s to %s", m.pk, rowKey(i), s.cur.etag, o.etag)
			}
		}
		if o.exists && !o.sameContent(s.cur) {
			m.noteETag(t, i, o.etag) // a new ETag from the unacknowledged write
		}
		s.cur, s.pending, s.batchID = o, nil, 0
		if o.exists {
			s.etags[o.etag] = true
		}
	}
}

func describe(s state) string {
	if !s.exists {
		return "absent"
	}
	b, _ := json.Marshal(s.props)
	return string(b)
}

// ---- seed data: start-up must not grow with it ----

func seedProps(i int) props {
	return props{
		"N":    {"Edm.Int64", strconv.Itoa(i)},
		"Text": {"Edm.String", strings.Repeat("x", 64) + strconv.Itoa(i)},
		"When": {"Edm.DateTime", time.Unix(int64(i), 0).UTC().Format(dateLayout)},
	}
}

func seedPK(i int) string { return fmt.Sprintf("seed%02d", i/(crashSeedRows/20)) }

func seed(t *testing.T, client *aztables.Client) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, crashSeedRows/crashSeedBatch)
	for w := range 4 {
		wg.Go(func() {
			for b := w * crashSeedBatch; b < crashSeedRows; b += 4 * crashSeedBatch {
				var actions []aztables.TransactionAction
				for i := b; i < b+crashSeedBatch; i++ {
					actions = append(actions, aztables.TransactionAction{
						ActionType: aztables.TransactionTypeInsertReplace,
						Entity:     marshalEntity(seedPK(i), rowKey(i), seedProps(i)),
					})
				}
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				_, err := client.SubmitTransaction(ctx, actions, nil)
				cancel()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("seed: %v", err)
	}
}

func verifySeed(t *testing.T, p *tabloProc, table string) {
	t.Helper()
	n := 0
	for part := range 20 {
		pk := fmt.Sprintf("seed%02d", part)
		for rk, st := range listPartition(t, p, table, pk) {
			i, err := strconv.Atoi(strings.TrimPrefix(rk, "r"))
			if err != nil || seedPK(i) != pk || !maps.Equal(st.props, seedProps(i)) {
				t.Errorf("seed entity %s/%s wrong: %s", pk, rk, describe(st))
			}
			n++
		}
	}
	if n != crashSeedRows {
		t.Errorf("seed: %d entities after restart, want %d", n, crashSeedRows)
	}
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// TestCrashDurability kills the server with SIGKILL under concurrent load and checks every
// acknowledged write after each restart.
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and crashes the real binary; skipped in -short mode")
	}
	bin := buildTablo(t)
	dataDir := t.TempDir()
	seedRNG := uint64(time.Now().UnixNano())
	t.Logf("random seed %d", seedRNG)
	r := rand.New(rand.NewPCG(seedRNG, 0x7ab10))

	p, took := startTablo(t, bin, dataDir)
	t.Logf("cold start to first query: %v", took)
	const tableName = "crash"
	if _, err := p.service(t).CreateTable(context.Background(), tableName, nil); err != nil {
		t.Fatal(err)
	}
	seed(t, p.service(t).NewClient(tableName))

	models := make([]*partitionModel, crashWorkers)
	for w := range models {
		models[w] = newPartitionModel(fmt.Sprintf("p%d", w))
	}
	var seq, batchIDs atomic.Int64
	for cycle := 1; cycle <= crashCycles; cycle++ {
		var killed atomic.Bool
		run := &loadRun{t: t, client: p.service(t).NewClient(tableName), killed: &killed, seq: &seq, batchID: &batchIDs}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w, m := range models {
			wr := rand.New(rand.NewPCG(r.Uint64(), uint64(w)))
			wg.Go(func() { run.work(m, wr, stop) })
		}
		time.Sleep(crashMinLoad + time.Duration(r.Int64N(int64(crashMaxLoad-crashMinLoad))))
		killed.Store(true)
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = p.waitExit(t, 10*time.Second)
		close(stop)
		wg.Wait()
		if t.Failed() {
			t.Fatalf("cycle %d: load failed before the kill\n%s", cycle, p.stderr)
		}

		p, took = startTablo(t, bin, dataDir)
		var acked int64
		inflight := 0
		for _, m := range models {
			before := m.maybe
			verify(t, p, tableName, m)
			inflight += m.maybe - before
			acked += m.acked.Load()
		}
		verifySeed(t, p, tableName)
		t.Logf("cycle %d: restart to first query %v (data dir %d KiB, %d seed entities, %d acknowledged writes so far, %d in flight at the kill)",
			cycle, took, dirSize(dataDir)/1024, crashSeedRows, acked, inflight)
		if t.Failed() {
			t.Fatalf("cycle %d failed; server log:\n%s", cycle, p.stderr)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.waitExit(t, 30*time.Second); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
}
