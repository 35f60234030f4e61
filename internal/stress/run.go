package stress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablo/tablo/internal/load"
)

// opStats are one operation kind's results (one worker's, then merged).
type opStats struct {
	ok, failed, retries, busy, timeouts, otherErrs int64
	entities                                       int64
	hist                                           load.Histogram
	firstErr                                       string
}

func (s *opStats) merge(o *opStats) {
	s.ok += o.ok
	s.failed += o.failed
	s.retries += o.retries
	s.busy += o.busy
	s.timeouts += o.timeouts
	s.otherErrs += o.otherErrs
	s.entities += o.entities
	s.hist.Merge(&o.hist)
	if s.firstErr == "" {
		s.firstErr = o.firstErr
	}
}

// run is one stress run's shared state.
type run struct {
	cfg    *Config
	table  *aztables.Client
	data   map[string]any
	mixSum int

	knownMu sync.Mutex
	known   [][2]string // recently written keys, a ring
	knownN  int

	partsMu sync.Mutex
	parts   map[string]int64 // entities per partition
	others  int64
	// The key order of inserts: the highest and lowest PartitionKey written so far and as of
	// the end of the previous keyLag period (keyPeriod; prevValid once keys were written
	// before it), and how many inserts of the measured phase went above (appends) or below
	// (prepends) every key written before it.
	hiKey, loKey, hiPrev, loPrev   string
	keyPeriod                      int64
	keysSeen, prevValid, measuring bool
	inserts, appends, prepends     int64

	sched  atomic.Int64 // operations scheduled (with --rate)
	rowSeq atomic.Int64 // RowKeys, unique across the run's phases
	// start is the measured phase's start; timeline counts entities per second of it, and
	// firstBusy is when (ns after start, +1) the endpoint first refused a request.
	start     time.Time
	timeline  [timelineSecs]atomic.Int64
	firstBusy atomic.Int64
	live      atomic.Int64
	liveBsy   atomic.Int64
	liveRtr   atomic.Int64

	// From x-tablo-query-plan: queries that named their ranges, and the ranges they touched.
	rangeQueries, rangesTouched, rangesMax atomic.Int64
}

// planPolicy reads Tablo's x-tablo-query-plan header ("…; ranges=N r0@s1,…; …").
type planPolicy struct{ r *run }

func (p planPolicy) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil && resp != nil {
		if plan := resp.Header.Get("x-tablo-query-plan"); plan != "" {
			if _, rest, ok := strings.Cut(plan, "; ranges="); ok {
				num, _, _ := strings.Cut(rest, " ")
				if n, err := strconv.Atoi(num); err == nil {
					p.r.rangeQueries.Add(1)
					p.r.rangesTouched.Add(int64(n))
					for {
						m := p.r.rangesMax.Load()
						if int64(n) <= m || p.r.rangesMax.CompareAndSwap(m, int64(n)) {
							break
						}
					}
				}
			}
		}
	}
	return resp, err
}

// Run performs the stress test and returns its report. Progress goes to stderr when it is a
// terminal.
func Run(ctx context.Context, cfg *Config, stderr io.Writer) (*Report, error) {
	r := &run{cfg: cfg, parts: map[string]int64{}, known: make([][2]string, knownKeys)}
	svc, err := load.NewServiceClient(cfg.Conn, cfg.Concurrency, planPolicy{r})
	if err != nil {
		return nil, err
	}
	name := cfg.Table
	if name == "" {
		name = fmt.Sprintf("stress%08x", rand.Uint32())
	}
	if _, err := svc.CreateTable(ctx, name, nil); err != nil {
		return nil, fmt.Errorf("stress: create table %s: %w", name, err)
	}
	if !cfg.Keep {
		defer func() {
			dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, _ = svc.DeleteTable(dctx, name, nil)
		}()
	}
	r.table = svc.NewClient(name)
	r.data = cfg.Template
	if r.data == nil {
		r.data = map[string]any{"Data": strings.Repeat("x", cfg.EntitySize)}
	}
	for _, n := range cfg.Mix {
		r.mixSum += n
	}
	rep := &Report{Table: name, Endpoint: cfg.Conn.Endpoint, PartitionKey: cfg.PK.Kind(), Concurrency: cfg.Concurrency,
		Rate: cfg.Rate, Retry: cfg.Retry.Kind, Target: cfg.Target, Mix: cfg.Mix, Planned: cfg.Duration.Seconds()}
	var prog *progressLine
	if load.IsTerminal(stderr) {
		prog = startProgress(stderr, r)
		defer prog.stop()
	}
	// Step 2: load the table with entities keyed as the design keys them.
	prog.set("load")
	t0 := time.Now()
	pre, err := r.drive(ctx, cfg.Preload, 0, func(*worker) string { return opInsert })
	if err != nil {
		return nil, err
	}
	rep.Preload = PreloadReport{Entities: pre[opInsert].ok, Failed: pre[opInsert].failed, Seconds: time.Since(t0).Seconds()}
	r.partsMu.Lock()
	clear(r.parts)
	r.others = 0
	r.measuring = true
	r.partsMu.Unlock()
	r.live.Store(0)
	// Step 3: the peak load, with the application's mix.
	prog.set("stress")
	t1 := time.Now()
	r.start = t1
	r.firstBusy.Store(0)
	res, err := r.drive(ctx, 0, cfg.Duration, (*worker).pick)
	if err != nil {
		return nil, err
	}
	prog.set("")
	rep.fill(r, res, time.Since(t1))
	return rep, nil
}

// worker is one client goroutine.
type worker struct {
	r     *run
	rnd   *rand.Rand
	id    int
	stats map[string]*opStats
}

func (w *worker) pick() string {
	n := w.rnd.IntN(w.r.mixSum)
	for _, op := range opNames {
		if n < w.r.cfg.Mix[op] {
			return op
		}
		n -= w.r.cfg.Mix[op]
	}
	return opInsert
}

// drive runs the workers until ops operations (ops > 0) or the duration has passed.
func (r *run) drive(ctx context.Context, ops int, d time.Duration, choose func(*worker) string) (map[string]*opStats, error) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		claimed atomic.Int64
		total   = map[string]*opStats{}
	)
	start := time.Now()
	deadline := start.Add(d)
	r.sched.Store(0)
	for id := range r.cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{r: r, id: id, rnd: rand.New(rand.NewPCG(r.cfg.Seed, uint64(id))), stats: map[string]*opStats{}}
			for ctx.Err() == nil {
				if ops > 0 && claimed.Add(1) > int64(ops) {
					break
				}
				if d > 0 && !time.Now().Before(deadline) {
					break
				}
				if d > 0 && r.cfg.Rate > 0 {
					due := start.Add(time.Duration(float64(r.sched.Add(1)) / r.cfg.Rate * float64(time.Second)))
					if due.After(deadline) {
						break
					}
					if wait := time.Until(due); wait > 0 {
						select {
						case <-time.After(wait):
						case <-ctx.Done():
						}
					}
				}
				w.do(ctx, choose(w))
			}
			mu.Lock()
			defer mu.Unlock()
			for k, s := range w.stats {
				if total[k] == nil {
					total[k] = &opStats{}
				}
				total[k].merge(s)
			}
		}()
	}
	wg.Wait()
	return total, ctx.Err()
}

// do performs one operation with the retry policy and records it.
func (w *worker) do(ctx context.Context, op string) {
	r := w.r
	pk, rk, ok := "", "", true
	switch op {
	case opGet, opUpdate, opQuery:
		pk, rk, ok = r.randomKnown(w.rnd)
		if !ok {
			op = opInsert
		}
	}
	if op == opInsert || op == opBatch {
		pk = r.cfg.PK.Next(w.rnd)
		rk = fmt.Sprintf("r%012d", r.rowSeq.Add(1))
	}
	st := w.stats[op]
	if st == nil {
		st = &opStats{}
		w.stats[op] = st
	}
	start := time.Now()
	var n int
	var err error
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, r.cfg.OpTimeout)
		n, err = w.attempt(actx, op, pk, rk, attempt > 0)
		cancel()
		if err == nil || ctx.Err() != nil {
			break
		}
		busy, timeout, retryable := classify(err)
		if busy || timeout {
			r.firstBusy.CompareAndSwap(0, int64(time.Since(r.start))+1)
		}
		if busy {
			st.busy++
			r.liveBsy.Add(1)
		}
		if timeout {
			st.timeouts++
		}
		if !retryable || attempt >= r.cfg.Retry.Max {
			break
		}
		st.retries++
		r.liveRtr.Add(1)
		select {
		case <-time.After(r.cfg.Retry.Delay(w.rnd, attempt+1)):
		case <-ctx.Done():
		}
	}
	if ctx.Err() != nil && err != nil {
		return // interrupted: not the endpoint's doing
	}
	if err != nil {
		st.failed++
		if !isBusyOrTimeout(err) {
			st.otherErrs++
		}
		if st.firstErr == "" {
			st.firstErr = describe(err)
		}
		return
	}
	st.hist.Record(time.Since(start))
	st.ok++
	st.entities += int64(n)
	r.live.Add(1)
	if sec := int(time.Since(r.start) / time.Second); sec >= 0 && sec < timelineSecs {
		r.timeline[sec].Add(int64(n))
	}
	if op == opInsert || op == opBatch {
		r.notePartition(pk, int64(n))
		r.noteKeyOrder(pk)
		if op == opBatch {
			rk = batchRowKey(rk, 0)
		}
		r.remember(pk, rk)
	} else if op == opGet || op == opUpdate {
		r.notePartition(pk, 1)
	} else if n > 0 {
		r.notePartition(pk, int64(n))
	}
}

// attempt sends one try. A retried insert that finds its entity (the earlier try applied
// and its reply was lost) counts as done.
func (w *worker) attempt(ctx context.Context, op, pk, rk string, retry bool) (int, error) {
	t := w.r.table
	switch op {
	case opInsert:
		_, err := t.AddEntity(ctx, w.r.entity(pk, rk), nil)
		if retry && isCode(err, "EntityAlreadyExists") {
			err = nil
		}
		return 1, err
	case opGet:
		_, err := t.GetEntity(ctx, pk, rk, nil)
		return 1, err
	case opUpdate:
		_, err := t.UpsertEntity(ctx, w.r.entity(pk, rk), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
		return 1, err
	case opQuery:
		filter := fmt.Sprintf("PartitionKey eq '%s' and RowKey ge '%s'", strings.ReplaceAll(pk, "'", "''"), strings.ReplaceAll(rk, "'", "''"))
		top := int32(queryTop)
		pager := t.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Top: &top})
		page, err := pager.NextPage(ctx)
		return len(page.Entities), err
	case opBatch:
		actions := make([]aztables.TransactionAction, batchSize)
		for i := range actions {
			actions[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertMerge, Entity: w.r.entity(pk, batchRowKey(rk, i))}
		}
		_, err := t.SubmitTransaction(ctx, actions, nil)
		return batchSize, err
	}
	return 0, fmt.Errorf("stress: unknown operation %q", op)
}

func (r *run) entity(pk, rk string) []byte {
	m := make(map[string]any, len(r.data)+2)
	for k, v := range r.data {
		m[k] = v
	}
	m["PartitionKey"], m["RowKey"] = pk, rk
	b, _ := json.Marshal(m)
	return b
}

func (r *run) remember(pk, rk string) {
	r.knownMu.Lock()
	r.known[r.knownN%knownKeys] = [2]string{pk, rk}
	r.knownN++
	r.knownMu.Unlock()
}

func (r *run) randomKnown(rnd *rand.Rand) (pk, rk string, ok bool) {
	r.knownMu.Lock()
	defer r.knownMu.Unlock()
	n := min(r.knownN, knownKeys)
	if n == 0 {
		return "", "", false
	}
	k := r.known[rnd.IntN(n)]
	return k[0], k[1], true
}

func (r *run) notePartition(pk string, n int64) {
	r.partsMu.Lock()
	defer r.partsMu.Unlock()
	if _, ok := r.parts[pk]; ok || len(r.parts) < maxPartitions {
		r.parts[pk] += n
		return
	}
	r.others += n
}

// noteKeyOrder records where an insert's PartitionKey fell in the key order: above every key
// written before the last keyLag period (an append: the last range partition takes it,
// whatever the splits), below every one (a prepend), or among them. The lag keeps concurrent
// writers' completions, which arrive slightly out of order, from hiding the pattern.
func (r *run) noteKeyOrder(pk string) {
	r.partsMu.Lock()
	defer r.partsMu.Unlock()
	if p := time.Now().UnixNano() / int64(keyLag); p != r.keyPeriod {
		r.keyPeriod, r.hiPrev, r.loPrev, r.prevValid = p, r.hiKey, r.loKey, r.keysSeen
	}
	if r.measuring && r.prevValid {
		r.inserts++
		if pk > r.hiPrev {
			r.appends++
		}
		if pk < r.loPrev {
			r.prepends++
		}
	}
	if !r.keysSeen || pk > r.hiKey {
		r.hiKey = pk
	}
	if !r.keysSeen || pk < r.loKey {
		r.loKey = pk
	}
	r.keysSeen = true
}

// classify sorts a failure: ServerBusy (503), a time-out (500 OperationTimedOut, 504, 408,
// or the client's own deadline or a dropped connection), and whether the guide's advice is
// to retry it (server busy and time-outs, other 5xx except 501 and 505).
func classify(err error) (busy, timeout, retryable bool) {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		switch {
		case re.StatusCode == http.StatusServiceUnavailable:
			return true, false, true
		case re.StatusCode == http.StatusGatewayTimeout || re.StatusCode == http.StatusRequestTimeout ||
			re.ErrorCode == "OperationTimedOut":
			return false, true, true
		case re.StatusCode == http.StatusNotImplemented || re.StatusCode == http.StatusHTTPVersionNotSupported:
			return false, false, false
		case re.StatusCode >= 500:
			return false, false, true
		}
		return false, false, false
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return false, true, true
	}
	return false, false, true // a dropped connection: the outcome is unknown, retry
}

func isBusyOrTimeout(err error) bool {
	busy, timeout, _ := classify(err)
	return busy || timeout
}

func isCode(err error, code string) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.ErrorCode == code
}

func describe(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprintf("%d %s", re.StatusCode, re.ErrorCode)
	}
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// progressLine is the live status on a terminal.
type progressLine struct {
	out   io.Writer
	r     *run
	mu    sync.Mutex
	phase string
	t0    time.Time
	done  chan struct{}
	wg    sync.WaitGroup
}

func startProgress(out io.Writer, r *run) *progressLine {
	p := &progressLine{out: out, r: r, done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(progressPeriod)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				p.draw()
			}
		}
	}()
	return p
}

func (p *progressLine) set(phase string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase, p.t0 = phase, time.Now()
	if phase == "" {
		fmt.Fprint(p.out, "\r\033[K")
	}
}

func (p *progressLine) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.phase == "" {
		return
	}
	el := time.Since(p.t0).Seconds()
	ops := p.r.live.Load()
	fmt.Fprintf(p.out, "\r\033[K%s %5.1fs %9d ops %8.0f ops/s %6d busy %6d retries",
		p.phase, el, ops, float64(ops)/max(el, 1e-9), p.r.liveBsy.Load(), p.r.liveRtr.Load())
}

func (p *progressLine) stop() {
	if p == nil {
		return
	}
	close(p.done)
	p.wg.Wait()
	p.set("")
}

// batchRowKey is the RowKey of a batch's i-th entity.
func batchRowKey(rk string, i int) string { return fmt.Sprintf("%s-%02d", rk, i) }
