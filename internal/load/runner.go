package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// target is one endpoint under test.
type target struct {
	label string
	conn  ConnInfo
	pid   int // server process for CPU accounting; 0 = none
	// alsoPID is a second front end's process, dbPID a database's main process (with its
	// children): both count as the server's CPU; 0 = none.
	alsoPID, dbPID int
	svc            *aztables.ServiceClient
	// also is a second front end of the same service: odd-numbered workers use it.
	also *aztables.ServiceClient
	qsvc *azqueue.ServiceClient // made on the first queue workload
	bsvc *service.Client        // made on the first blob workload
	// diskDir makes this the disk ceiling (--disk-dir): uploads are written and fsynced to
	// files here, and no endpoint is involved.
	diskDir string
	ceiling bool // measured beside the endpoints under test, not compared with them
}

// workerState is what a workload's workers operate on: a table, a queue, or a container.
type workerState struct {
	client *aztables.Client
	table  string // the table's name, so a second front end can reach the same table
	queue  *azqueue.QueueClient
	blob   blobWorker
}

// phase is what one measured run of one workload against one target produced.
type phase struct {
	hist      Histogram // latency of successful operations
	ops       int64     // successful operations
	entities  int64
	errors    int64
	elapsed   time.Duration
	serverCPU time.Duration
	dbCPU     time.Duration // the part of serverCPU the database used
	cpuOK     bool          // serverCPU is valid (pid given and readable before and after)
	clientCPU time.Duration
	firstErr  string
	aborted   bool // stopped by the error budget
}

// live counters the progress line reads while workers run.
type live struct {
	ops, errors atomic.Int64
}

// runWorkload runs one workload on t. Without --table it creates a fresh table, preloads it,
// measures and deletes the table again; with --table it measures the named table as it is.
func runWorkload(ctx context.Context, cfg *config, t *target, wl workload, seed uint64, prog *progress) (phase, error) {
	switch {
	case wl.queue:
		return runQueueWorkload(ctx, cfg, t, wl, seed, prog)
	case wl.blob:
		return runBlobWorkload(ctx, cfg, t, wl, seed, prog)
	case cfg.Table != "":
		return measure(ctx, cfg, t, wl, workerState{client: t.svc.NewClient(cfg.Table), table: cfg.Table}, seed, prog)
	}
	table := tableName(wl.name, seed)
	if err := withTimeout(ctx, cfg.OpTimeout, func(ctx context.Context) error {
		_, err := t.svc.CreateTable(ctx, table, nil)
		return err
	}); err != nil {
		return phase{}, fmt.Errorf("create table %s: %s", table, describeError(err))
	}
	defer func() {
		// Delete even when ctx was cancelled, but never wait long.
		_ = withTimeout(context.WithoutCancel(ctx), cfg.OpTimeout, func(ctx context.Context) error {
			_, err := t.svc.DeleteTable(ctx, table, nil)
			return err
		})
	}()
	client := t.svc.NewClient(table)
	if l := cfg.layoutOf(wl); l != layoutEmpty {
		unmeasured := *t
		unmeasured.pid, unmeasured.alsoPID, unmeasured.dbPID = 0, 0, 0 // not reported: must not fail on CPU accounting
		if _, err := preload(ctx, cfg, &unmeasured, client, l, prog); err != nil {
			return phase{}, fmt.Errorf("preload %s: %s", table, describeError(err))
		}
	}
	return measure(ctx, cfg, t, wl, workerState{client: client, table: table}, seed, prog)
}

// clientFor is the table client worker id uses: with a second front end, odd workers
// reach the table through it.
func (t *target) clientFor(id int, client *aztables.Client, table string) *aztables.Client {
	if t.also != nil && id%2 == 1 && table != "" {
		return t.also.NewClient(table)
	}
	return client
}

// loadNamedTable creates the --table table on t (it must not exist yet) and fills it; the phase
// measures the load.
func loadNamedTable(ctx context.Context, cfg *config, t *target, prog *progress) (phase, error) {
	if err := withTimeout(ctx, cfg.OpTimeout, func(ctx context.Context) error {
		_, err := t.svc.CreateTable(ctx, cfg.Table, nil)
		return err
	}); err != nil {
		return phase{}, fmt.Errorf("create table %s (to measure an already loaded table, add --skip-preload): %s", cfg.Table, describeError(err))
	}
	return preload(ctx, cfg, t, t.svc.NewClient(cfg.Table), cfg.tableLayout(), prog)
}

// measure runs cfg.Concurrency workers until the op count, the duration, the error budget or ctx
// ends the phase. Operations in flight when the duration ends are allowed to finish.
func measure(ctx context.Context, cfg *config, t *target, wl workload, st workerState, seed uint64, prog *progress) (phase, error) {
	var (
		lv       live
		claimed  atomic.Int64
		stop     atomic.Bool
		mu       sync.Mutex
		res      phase
		wg       sync.WaitGroup
		deadline time.Time
	)
	data := payload(cfg.EntitySize)
	prog.set(wl.name, t.label, &lv)

	cpu0, db0, err0 := t.serverCPU()
	client0, _ := ReadProcessCPU(0)
	start := time.Now()
	if cfg.Duration > 0 {
		deadline = start.Add(cfg.Duration)
	}
	for id := range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{
				id: id, rng: rand.New(rand.NewPCG(seed, uint64(id))), client: t.clientFor(id, st.client, st.table), queue: st.queue, blob: st.blob,
				preload: cfg.Preload, key: keyFunc(cfg.layoutOf(wl)), data: data,
			}
			var (
				h               Histogram
				ops, ents, errs int64
				firstErr        string
			)
			for !stop.Load() && ctx.Err() == nil {
				if cfg.Ops > 0 && claimed.Add(1) > cfg.Ops {
					break
				}
				if !deadline.IsZero() && !time.Now().Before(deadline) {
					break
				}
				octx, cancel := context.WithTimeout(ctx, cfg.OpTimeout)
				t0 := time.Now()
				n, err := wl.op(octx, w)
				d := time.Since(t0)
				cancel()
				if err != nil {
					if ctx.Err() != nil {
						break // interrupted, not the server's fault
					}
					errs++
					if firstErr == "" {
						firstErr = describeError(err)
					}
					if lv.errors.Add(1) >= cfg.MaxErrors {
						stop.Store(true)
					}
					continue
				}
				h.Record(d)
				ops++
				ents += int64(n)
				lv.ops.Add(1)
			}
			mu.Lock()
			defer mu.Unlock()
			res.hist.Merge(&h)
			res.ops += ops
			res.entities += ents
			res.errors += errs
			if res.firstErr == "" {
				res.firstErr = firstErr
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	client1, _ := ReadProcessCPU(0)
	res.clientCPU = client1 - client0
	cpu1, db1, err1 := t.serverCPU()
	if t.pid != 0 && err0 == nil && err1 == nil {
		res.serverCPU, res.dbCPU, res.cpuOK = cpu1-cpu0, db1-db0, true
	}
	res.aborted = stop.Load()
	prog.set("", "", nil)
	if t.pid != 0 && (err0 != nil || err1 != nil) {
		return res, fmt.Errorf("server cpu of pid %d: %w", t.pid, errors.Join(err0, err1))
	}
	return res, ctx.Err()
}

// serverCPU is the CPU the target's processes have used so far: the server, a second front
// end, and the database (also returned on its own).
func (t *target) serverCPU() (total, db time.Duration, err error) {
	if t.pid == 0 {
		return 0, 0, nil
	}
	if total, err = ReadProcessCPU(t.pid); err != nil {
		return 0, 0, err
	}
	if t.alsoPID != 0 {
		also, err := ReadProcessCPU(t.alsoPID)
		if err != nil {
			return 0, 0, err
		}
		total += also
	}
	if t.dbPID != 0 {
		if db, err = ReadProcessTreeCPU(t.dbPID); err != nil {
			return 0, 0, err
		}
	}
	return total + db, db, nil
}

// preload fills client's table with cfg.Preload entities of layout l in batchSize-entity
// transactions, several in flight, and returns the phase measuring it (one op = one
// transaction). It stops at the first failed transaction.
func preload(ctx context.Context, cfg *config, t *target, client *aztables.Client, l layout, prog *progress) (phase, error) {
	batches := (cfg.Preload + batchSize - 1) / batchSize
	if batches == 0 {
		return phase{}, nil
	}
	pc := *cfg
	pc.Ops, pc.Duration, pc.MaxErrors = int64(batches), 0, 1
	pc.Concurrency = preloadWorkers(cfg)
	p, err := measure(ctx, &pc, t, preloadWorkload(cfg.Preload, l, cfg.UniqueData), workerState{client: client}, 0, prog)
	if err == nil && p.errors > 0 {
		err = fmt.Errorf("batch insert: %s", p.firstErr)
	}
	return p, err
}

// preloadWorkers is how many transactions preload keeps in flight.
func preloadWorkers(cfg *config) int {
	batches := (cfg.Preload + batchSize - 1) / batchSize
	return min(max(cfg.Concurrency, 4), 16, batches)
}

// preloadWorkload inserts preloaded entities [0, n) of layout l: op k (counted across all
// workers) inserts entities [k*batchSize, (k+1)*batchSize) in one transaction. The caller bounds
// the ops to ceil(n/batchSize). unique gives each entity its own Data (uniquePayload).
func preloadWorkload(n int, l layout, unique bool) workload {
	var next atomic.Int64
	key := keyFunc(l)
	return workload{name: "preload", summary: "load the table in 100-entity transactions", layout: l,
		op: func(ctx context.Context, w *worker) (int, error) {
			lo := int(next.Add(1)-1) * batchSize
			hi := min(lo+batchSize, n)
			if lo >= hi {
				return 0, nil
			}
			actions := make([]aztables.TransactionAction, 0, hi-lo)
			for i := lo; i < hi; i++ {
				pk, rk := key(i)
				data := w.data
				if unique {
					data = uniquePayload(len(w.data), i)
				}
				actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: entityJSON(pk, rk, i, data)})
			}
			_, err := w.client.SubmitTransaction(ctx, actions, nil)
			return hi - lo, err
		}}
}

func withTimeout(ctx context.Context, d time.Duration, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return f(ctx)
}

// tableName is a valid, unique-enough table name: letters and digits, starting with a letter.
func tableName(workload string, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	return "bench" + strings.ReplaceAll(workload, "-", "") + fmt.Sprintf("%08x", r.Uint32())
}

// describeError shortens an SDK error to its status and Azure code when it has them; the full
// text of a ResponseError is a multi-line dump.
func describeError(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprintf("HTTP %d %s", re.StatusCode, re.ErrorCode)
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
