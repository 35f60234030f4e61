package e2e

// Several Tablo front ends, each a real process, on one PostgreSQL database: every guarantee
// of one server must hold across them (docs/postgres.md). These tests need PostgreSQL
// (TABLO_TEST_POSTGRES_URL); the restart test also needs scripts/pg-throwaway to start a
// private cluster it can restart.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

// frontEnds starts n processes of bin on the database at url.
func frontEnds(t *testing.T, bin, url string, n int) []*tabloProc {
	t.Helper()
	fes := make([]*tabloProc, n)
	for i := range fes {
		fes[i], _ = startTabloWith(t, bin, "--postgres", url)
	}
	return fes
}

func statusCode(err error) (int, string) {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode, re.ErrorCode
	}
	return 0, ""
}

func TestFrontEnds(t *testing.T) {
	if onPostgres() {
		t.Skip("engine-independent: runs in the default pass")
	}
	pgtest.Base(t)
	bin := buildTablo(t)
	t.Run("ETagIncrements", func(t *testing.T) { testFrontEndIncrements(t, bin) })
	t.Run("MergesLoseNothing", func(t *testing.T) { testFrontEndMerges(t, bin) })
	t.Run("StaleWriteGuesses", func(t *testing.T) { testFrontEndStaleGuesses(t, bin) })
	t.Run("BatchWholeOrNothing", func(t *testing.T) { testFrontEndBatches(t, bin) })
	t.Run("CreateDeleteRace", func(t *testing.T) { testFrontEndCreateDelete(t, bin) })
	t.Run("CachesSeeOtherFrontEnds", func(t *testing.T) { testFrontEndCaches(t, bin) })
	t.Run("KillFrontEndMidLoad", func(t *testing.T) { testFrontEndKill(t, bin) })
	t.Run("DatabaseRestartMidLoad", func(t *testing.T) { testDatabaseRestart(t, bin) })
	t.Run("BlobsAcrossFrontEnds", func(t *testing.T) { testFrontEndBlobs(t, bin) })
	t.Run("BigBlobBoundedMemory", func(t *testing.T) { testFrontEndBigBlob(t, bin) })
}

// testFrontEndIncrements: read-modify-write under If-Match through three front ends loses no
// update: each counter ends at the number of increments acknowledged.
func testFrontEndIncrements(t *testing.T, bin string) {
	fes := frontEnds(t, bin, pgtest.URL(t), 3)
	if _, err := fes[0].service(t).CreateTable(ctx, "counters", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fes[0].service(t).NewClient("counters").AddEntity(ctx, counterEntity{PartitionKey: "p", RowKey: "c"}.json(), nil); err != nil {
		t.Fatal(err)
	}
	const workers, perWorker = 6, 15
	var wins atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		tc := fes[w%len(fes)].service(t).NewClient("counters")
		wg.Go(func() {
			for done := 0; done < perWorker; {
				c, etag, err := readCounter(tc, "p", "c")
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				c.Value++
				_, err = tc.UpdateEntity(ctx, c.json(), &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
				if isConflict(err) {
					continue
				}
				if err != nil {
					t.Errorf("update: %v", err)
					return
				}
				wins.Add(1)
				done++
			}
		})
	}
	wg.Wait()
	c, _, err := readCounter(fes[2].service(t).NewClient("counters"), "p", "c")
	if err != nil || c.Value != wins.Load() || c.Value != workers*perWorker {
		t.Fatalf("counter = %d (%v), acknowledged increments %d", c.Value, err, wins.Load())
	}
}

// testFrontEndMerges: unconditional merges (Upsert in merge mode, what the SDKs do by
// default) of one entity through three front ends, each worker setting a property of its own,
// lose no property value, and every acknowledged write gets an ETag of its own (each one
// later than the last).
func testFrontEndMerges(t *testing.T, bin string) {
	fes := frontEnds(t, bin, pgtest.URL(t), 3)
	if _, err := fes[0].service(t).CreateTable(ctx, "merges", nil); err != nil {
		t.Fatal(err)
	}
	const workers, perWorker = 6, 15
	var mu sync.Mutex
	etags := map[azcore.ETag]int{}
	var wg sync.WaitGroup
	for w := range workers {
		tc := fes[w%len(fes)].service(t).NewClient("merges")
		wg.Go(func() {
			for i := 1; i <= perWorker; i++ {
				e := jsonOf(map[string]any{"PartitionKey": "p", "RowKey": "m", fmt.Sprintf("W%d", w): i})
				resp, err := tc.UpsertEntity(ctx, e, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
				if err != nil {
					t.Errorf("upsert: %v", err)
					return
				}
				mu.Lock()
				etags[resp.ETag]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	resp, err := fes[1].service(t).NewClient("merges").GetEntity(ctx, "p", "m", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(resp.Value, &got); err != nil {
		t.Fatal(err)
	}
	for w := range workers {
		if v := got[fmt.Sprintf("W%d", w)]; v != float64(perWorker) {
			t.Errorf("W%d = %v after %d acknowledged merges: an update was lost", w, v, perWorker)
		}
	}
	if len(etags) != workers*perWorker {
		t.Errorf("%d acknowledged writes got %d distinct ETags", workers*perWorker, len(etags))
	}
}

// testFrontEndStaleGuesses: a front end that wrote an entity remembers its value as a guess
// for its next write (one round trip); after another front end changed or deleted the
// entity, the guess must neither be answered from (a 412 or a success) nor overwrite the
// other front end's change.
func testFrontEndStaleGuesses(t *testing.T, bin string) {
	fes := frontEnds(t, bin, pgtest.URL(t), 2)
	if _, err := fes[0].service(t).CreateTable(ctx, "guesses", nil); err != nil {
		t.Fatal(err)
	}
	a, b := fes[0].service(t).NewClient("guesses"), fes[1].service(t).NewClient("guesses")
	entity := func(props map[string]any) []byte {
		props["PartitionKey"], props["RowKey"] = "p", "r"
		return jsonOf(props)
	}
	merge := &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}
	if _, err := a.UpsertEntity(ctx, entity(map[string]any{"A": 1}), merge); err != nil {
		t.Fatal(err)
	}
	// b changes it; a's If-Match with b's ETag must succeed, and a's merge keep b's change.
	resp, err := b.UpsertEntity(ctx, entity(map[string]any{"B": 2}), merge)
	if err != nil {
		t.Fatal(err)
	}
	etag := resp.ETag
	if _, err := a.UpdateEntity(ctx, entity(map[string]any{"A": 3, "B": 2}), &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatalf("If-Match with the other front end's ETag: %v", err)
	}
	if _, err := b.UpsertEntity(ctx, entity(map[string]any{"C": 4}), merge); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpsertEntity(ctx, entity(map[string]any{"D": 5}), merge); err != nil {
		t.Fatal(err)
	}
	got, err := b.GetEntity(ctx, "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	var props map[string]any
	if err := json.Unmarshal(got.Value, &props); err != nil {
		t.Fatal(err)
	}
	if props["A"] != float64(3) || props["B"] != float64(2) || props["C"] != float64(4) || props["D"] != float64(5) {
		t.Fatalf("after merges through both front ends: %v", props)
	}
	// b deletes it; a's update must answer 404, and a's merge create it afresh.
	if _, err := b.DeleteEntity(ctx, "p", "r", nil); err != nil {
		t.Fatal(err)
	}
	anyTag := azcore.ETagAny
	_, err = a.UpdateEntity(ctx, entity(map[string]any{"A": 6}), &aztables.UpdateEntityOptions{IfMatch: &anyTag, UpdateMode: aztables.UpdateModeMerge})
	if code, _ := statusCode(err); code != http.StatusNotFound {
		t.Fatalf("update of an entity the other front end deleted: %v, want 404", err)
	}
	if _, err := a.UpsertEntity(ctx, entity(map[string]any{"E": 7}), merge); err != nil {
		t.Fatal(err)
	}
	if got, err = b.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatal(err)
	}
	props = nil
	if err := json.Unmarshal(got.Value, &props); err != nil {
		t.Fatal(err)
	}
	if _, stale := props["A"]; stale || props["E"] != float64(7) {
		t.Fatalf("merge after the other front end's delete: %v", props)
	}
}

// testFrontEndBatches: a transaction through one front end rewrites every entity of a
// partition; readers on the others see all of it or none of it.
func testFrontEndBatches(t *testing.T, bin string) {
	fes := frontEnds(t, bin, pgtest.URL(t), 3)
	if _, err := fes[0].service(t).CreateTable(ctx, "batches", nil); err != nil {
		t.Fatal(err)
	}
	writer := fes[0].service(t).NewClient("batches")
	const rows = 20
	batch := func(gen int) error {
		var actions []aztables.TransactionAction
		for r := range rows {
			e := mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("r%02d", r), "Gen": gen})
			actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: e})
		}
		_, err := writer.SubmitTransaction(ctx, actions, nil)
		return err
	}
	if err := batch(0); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for gen := 1; ; gen++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := batch(gen); err != nil {
				t.Errorf("batch %d: %v", gen, err)
				return
			}
		}
	})
	for i := range 40 {
		reader := fes[1+i%2].service(t).NewClient("batches")
		pager := reader.NewListEntitiesPager(nil)
		gens := map[int]int{}
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, raw := range page.Entities {
				var e struct{ Gen int }
				if err := json.Unmarshal(raw, &e); err != nil {
					t.Fatal(err)
				}
				gens[e.Gen]++
			}
		}
		if len(gens) != 1 {
			t.Fatalf("a read saw parts of several transactions: %v (generation: entities)", gens)
		}
	}
	close(stop)
	wg.Wait()
}

// testFrontEndCreateDelete: the same table created (then deleted) at once through three
// front ends: exactly one create and one delete succeed; the others get Azure's conflict and
// not-found answers.
func testFrontEndCreateDelete(t *testing.T, bin string) {
	fes := frontEnds(t, bin, pgtest.URL(t), 3)
	for round := range 5 {
		name := fmt.Sprintf("race%d", round)
		race := func(op func(svc *aztables.ServiceClient) error, loser int, loserCode string) {
			var ok atomic.Int64
			var wg sync.WaitGroup
			for _, fe := range fes {
				for range 2 {
					svc := fe.service(t)
					wg.Go(func() {
						err := op(svc)
						if err == nil {
							ok.Add(1)
							return
						}
						if st, code := statusCode(err); st != loser || code != loserCode {
							t.Errorf("%s: %v, want %d %s", name, err, loser, loserCode)
						}
					})
				}
			}
			wg.Wait()
			if ok.Load() != 1 {
				t.Fatalf("%s: %d winners", name, ok.Load())
			}
		}
		race(func(svc *aztables.ServiceClient) error {
			_, err := svc.CreateTable(ctx, name, nil)
			return err
		}, http.StatusConflict, "TableAlreadyExists")
		race(func(svc *aztables.ServiceClient) error {
			_, err := svc.DeleteTable(ctx, name, nil)
			return err
		}, http.StatusNotFound, "ResourceNotFound")
	}
}

// testFrontEndCaches: what one front end acknowledges, another sees on its next request: a
// deleted table (no write lands in it, no read finds its rows, a re-created one is empty)
// and new service properties (CORS rules).
func testFrontEndCaches(t *testing.T, bin string) {
	fes := frontEnds(t, bin, pgtest.URL(t), 2)
	a, b := fes[0].service(t), fes[1].service(t)
	if _, err := a.CreateTable(ctx, "cached", nil); err != nil {
		t.Fatal(err)
	}
	e := mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r"})
	if _, err := b.NewClient("cached").AddEntity(ctx, e, nil); err != nil { // b looks the table up
		t.Fatal(err)
	}
	if _, err := a.DeleteTable(ctx, "cached", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.NewClient("cached").UpsertEntity(ctx, e, nil); err == nil {
		t.Fatal("a write through another front end landed in a deleted table")
	} else if st, code := statusCode(err); st != http.StatusNotFound || code != "TableNotFound" {
		t.Fatalf("write into a deleted table: %v", err)
	}
	if _, err := b.NewClient("cached").GetEntity(ctx, "p", "r", nil); err == nil {
		t.Fatal("a read through another front end found a deleted table's entity")
	}
	// A single insert (one guarded statement on this engine) checks the table too.
	e2 := mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r2"})
	if _, err := b.NewClient("cached").AddEntity(ctx, e2, nil); err == nil {
		t.Fatal("an insert through another front end landed in a deleted table")
	} else if st, code := statusCode(err); st != http.StatusNotFound || code != "TableNotFound" {
		t.Fatalf("insert into a deleted table: %v", err)
	}
	if _, err := a.CreateTable(ctx, "cached", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.NewClient("cached").GetEntity(ctx, "p", "r", nil); err == nil {
		t.Fatal("a re-created table holds the old table's entity")
	}
	// b still guesses the old table's id when the table is deleted and re-created behind its
	// back: its insert must land in the new table.
	if _, err := a.CreateTable(ctx, "hinted", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.NewClient("hinted").AddEntity(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DeleteTable(ctx, "hinted", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateTable(ctx, "hinted", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.NewClient("hinted").AddEntity(ctx, e2, nil); err != nil {
		t.Fatalf("insert into the re-created table: %v", err)
	}
	if _, err := a.NewClient("hinted").GetEntity(ctx, "p", "r2", nil); err != nil {
		t.Fatalf("an insert acknowledged by one front end is not in the re-created table seen by another: %v", err)
	}

	// CORS rules set through a, used by a preflight through b.
	props := aztables.ServiceProperties{Cors: []*aztables.CorsRule{{
		AllowedOrigins: ptr("https://example.com"), AllowedMethods: ptr("GET"),
		AllowedHeaders: ptr("*"), ExposedHeaders: ptr("*"), MaxAgeInSeconds: ptr(int32(60)),
	}}}
	preflight := func() int {
		req, _ := http.NewRequest(http.MethodOptions, fes[1].endpoint+"/cached()", nil)
		req.Header.Set("Origin", "https://example.com")
		req.Header.Set("Access-Control-Request-Method", "GET")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := preflight(); st != http.StatusForbidden {
		t.Fatalf("preflight before any CORS rule: %d", st)
	}
	if _, err := a.SetProperties(ctx, props, nil); err != nil {
		t.Fatal(err)
	}
	if st := preflight(); st != http.StatusOK {
		t.Fatalf("preflight through another front end after the rule was set: %d", st)
	}
}

// loadWriter inserts distinct entities through tc until stop, recording each acknowledged
// RowKey; errors are counted, and must be Azure's retryable answers (or connection errors
// from a killed front end when killable).
type loadWriter struct {
	mu        sync.Mutex
	acked     []string
	retryable int
	bad       []string
}

func (l *loadWriter) run(t *testing.T, tc *aztables.Client, prefix string, stop <-chan struct{}, killable bool) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		rk := fmt.Sprintf("%s-%06d", prefix, i)
		_, err := tc.AddEntity(ctx, mustJSON(t, map[string]any{"PartitionKey": prefix, "RowKey": rk}), nil)
		l.mu.Lock()
		switch st, code := statusCode(err); {
		case err == nil:
			l.acked = append(l.acked, rk)
		case st == http.StatusServiceUnavailable && code == "ServerBusy",
			st == http.StatusInternalServerError && code == "OperationTimedOut":
			l.retryable++
		case st == 0 && killable:
			l.mu.Unlock()
			return // the front end is gone
		default:
			l.bad = append(l.bad, err.Error())
		}
		l.mu.Unlock()
		if err != nil && !killable {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// checkAcked asserts that every acknowledged insert can be read through tc.
func (l *loadWriter) checkAcked(t *testing.T, tc *aztables.Client) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.bad) > 0 {
		t.Errorf("%d answers were neither success nor retryable, e.g. %s", len(l.bad), l.bad[0])
	}
	for _, rk := range l.acked {
		pk, _, _ := strings.Cut(rk, "-")
		if _, err := tc.GetEntity(ctx, pk, rk, nil); err != nil {
			t.Fatalf("acknowledged insert %s lost: %v", rk, err)
		}
	}
	t.Logf("%d acknowledged inserts all present; %d retryable errors", len(l.acked), l.retryable)
}

// testFrontEndKill: kill -9 of one front end under load through two loses no write either
// acknowledged.
func testFrontEndKill(t *testing.T, bin string) {
	fes := frontEnds(t, bin, pgtest.URL(t), 3)
	if _, err := fes[0].service(t).CreateTable(ctx, "kill", nil); err != nil {
		t.Fatal(err)
	}
	var victim, survivor loadWriter
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() { victim.run(t, fes[0].service(t).NewClient("kill"), fmt.Sprint("v", w), stop, true) })
		wg.Go(func() { survivor.run(t, fes[1].service(t).NewClient("kill"), fmt.Sprint("s", w), stop, false) })
	}
	time.Sleep(300 * time.Millisecond)
	if err := fes[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	tc := fes[2].service(t).NewClient("kill")
	victim.checkAcked(t, tc)
	survivor.checkAcked(t, tc)
}

// testDatabaseRestart: `pg_ctl restart -m fast` under load through two front ends gives
// retryable answers only (503 ServerBusy, 500 OperationTimedOut), loses no acknowledged
// write, and the front ends serve again by themselves.
func testDatabaseRestart(t *testing.T, bin string) {
	out, err := exec.Command("../scripts/pg-throwaway", "--dir").Output()
	if err != nil {
		if os.Getenv(pgtest.RequireEnv) != "" {
			t.Fatalf("scripts/pg-throwaway: %v", err)
		}
		t.Skipf("needs a private PostgreSQL cluster (scripts/pg-throwaway: %v)", err)
	}
	url, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	t.Cleanup(func() { _ = exec.Command("../scripts/pg-throwaway", "stop", dir).Run() })
	fes := frontEnds(t, bin, url, 2)
	for _, fe := range fes {
		fe.expectServerErrors() // 503 ServerBusy while the database is down
	}
	if _, err := fes[0].service(t).CreateTable(ctx, "restart", nil); err != nil {
		t.Fatal(err)
	}
	var load loadWriter
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() { load.run(t, fes[w%2].service(t).NewClient("restart"), fmt.Sprint("w", w), stop, false) })
	}
	time.Sleep(300 * time.Millisecond)
	if out, err := exec.Command("../scripts/pg-throwaway", "restart", dir).CombinedOutput(); err != nil {
		t.Fatalf("restart: %v\n%s", err, out)
	}
	load.mu.Lock()
	before := len(load.acked)
	load.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(100 * time.Millisecond)
		load.mu.Lock()
		after := len(load.acked)
		load.mu.Unlock()
		if after > before+20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("writes did not resume after the database restarted")
		}
	}
	close(stop)
	wg.Wait()
	load.checkAcked(t, fes[1].service(t).NewClient("restart"))
}
