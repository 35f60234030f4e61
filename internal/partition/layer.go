package partition

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
)

// Options configure a Layer. Zero values take the defaults.
type Options struct {
	// Emulate turns on the scalability targets: beyond them requests are refused as Azure
	// refuses them. Off, the layer only observes (and models splits and moves).
	Emulate bool
	// PartitionTarget is one table partition's target in entities per second (Azure: 2,000).
	PartitionTarget int
	// QueueTarget is one queue's target in messages of 1 KiB per second (Azure: 2,000); a
	// queue is one partition.
	QueueTarget int
	// BlobTarget is one blob's target in requests per second (Azure: 500).
	BlobTarget int
	// AccountTarget is an account's target in requests per second over all its services
	// (Azure: 20,000); AccountTargets overrides it per account.
	AccountTarget  int
	AccountTargets map[string]int
	// ServerCapacity is what one simulated partition server serves, in entities per second,
	// before it is hot. Not an Azure figure: a model parameter.
	ServerCapacity int
	// Servers is the number of simulated partition servers.
	Servers int
	// Heat is how long a partition or server must stay above its target before it is
	// throttled and its ranges are split or moved (Azure: "a few minutes").
	Heat time.Duration
	// Move is how long a moved range partition is offline (Azure: "a few seconds").
	Move time.Duration
	// Tick is the accounting resolution; targets are per second and scaled to it.
	Tick time.Duration
	// TrackedKeys bounds the PartitionKeys tracked per table (the heavy-hitters summary).
	TrackedKeys int
	// Seed seeds the split finder's sampling.
	Seed uint64
}

// Defaults.
const (
	DefaultPartitionTarget = 2000
	DefaultQueueTarget     = 2000
	DefaultBlobTarget      = 500
	DefaultAccountTarget   = 20000
	DefaultServerCapacity  = 10000
	DefaultServers         = 16
	DefaultHeat            = 3 * time.Minute
	DefaultMove            = 5 * time.Second
	DefaultTick            = time.Second
	DefaultTrackedKeys     = 256
	// halveEvery is how often (in ticks) the heavy-hitter counts decay by half.
	halveEvery = 60
	// maxEvents is how many recent splits and moves are kept.
	maxEvents = 64
)

func (o *Options) fill() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&o.PartitionTarget, DefaultPartitionTarget)
	def(&o.QueueTarget, DefaultQueueTarget)
	def(&o.BlobTarget, DefaultBlobTarget)
	def(&o.AccountTarget, DefaultAccountTarget)
	def(&o.ServerCapacity, DefaultServerCapacity)
	def(&o.Servers, DefaultServers)
	def(&o.TrackedKeys, DefaultTrackedKeys)
	if o.Heat <= 0 {
		o.Heat = DefaultHeat
	}
	if o.Move <= 0 {
		o.Move = DefaultMove
	}
	if o.Tick <= 0 {
		o.Tick = DefaultTick
	}
}

// Layer is the partition layer of one Tablo process. Its methods are safe for concurrent use.
type Layer struct {
	o Options
	// perTick are the targets scaled to one tick; partPerTick is per service.
	partPerTick          [numServices]uint32
	serverPerTick        uint32
	heatTicks, moveTicks int64
	faults               faultHolder

	mu   sync.Mutex
	tick int64 // the newest tick seen
	rnd  *rand.Rand
	// accounts by name (one account serves all three services, and its request target
	// covers them all); each account maps its tables, queues and containers by service and
	// lower-case name, and tables lists them all (for the per-tick pass).
	accounts map[string]*accountState
	tables   map[tableKey]*tableState
	servers  []*serverState
	events   []Event
	busy     [numReasons]uint64
}

type tableKey struct {
	svc           Service
	account, name string
}

type accountState struct {
	name   string
	target uint32 // requests per tick
	w      window
	total  uint64
	bySvc  [numServices]uint64 // requests per service
	busy   uint64
	tables [numServices]map[string]*tableState
}

type tableState struct {
	key     tableKey
	display string
	target  uint32 // a partition's target per tick (the service's)
	w       window
	ranges  []*rangeState // sorted by lo; ranges[0].lo == ""
	keys    *sketch
	stats   tableStats
	nextID  int
	// succeeded is set by the first request that succeeds; before it, a 404 means the table
	// does not exist, and its state is dropped.
	succeeded bool
}

type rangeState struct {
	id       int
	lo       string // inclusive; "" = from the start
	server   int
	w        window
	fnd      *finder
	offUntil int64 // offline while tick < offUntil
	splits   int
}

type serverState struct {
	id         int
	w          window
	heat       heat
	lastAction int64
	ranges     int
}

// New returns a Layer.
func New(o Options) *Layer {
	o.fill()
	l := &Layer{
		o:         o,
		rnd:       rand.New(rand.NewPCG(o.Seed, 0x7ab10)),
		tables:    map[tableKey]*tableState{},
		accounts:  map[string]*accountState{},
		heatTicks: max(1, int64((o.Heat+o.Tick-1)/o.Tick)),
		moveTicks: max(1, int64((o.Move+o.Tick-1)/o.Tick)),
	}
	l.partPerTick[0] = perTick(o.PartitionTarget, o.Tick)
	l.partPerTick[Table] = l.partPerTick[0]
	l.partPerTick[Queue] = perTick(o.QueueTarget, o.Tick)
	l.partPerTick[Blob] = perTick(o.BlobTarget, o.Tick)
	l.serverPerTick = perTick(o.ServerCapacity, o.Tick)
	for i := range o.Servers {
		l.servers = append(l.servers, &serverState{id: i, heat: coldHeat, lastAction: -1 << 62})
	}
	return l
}

func perTick(perSecond int, tick time.Duration) uint32 {
	return uint32(max(1, int64(perSecond)*int64(tick)/int64(time.Second)))
}

// Options returns the layer's options with defaults filled in.
func (l *Layer) Options() Options { return l.o }

// reason says why a request was refused.
type reason uint8

const (
	reasonNone reason = iota
	reasonAccount
	reasonPartition
	reasonServer
	reasonMoving
	numReasons
)

var reasonNames = [numReasons]string{"", "account", "partition", "server", "moving"}

// Azure's ServerBusy messages.
const (
	msgAccountBusy = "Operations per second is over the account limit."
	msgBusy        = "The server is busy."
)

// Ticket is Admit's decision about one request, and Finish's record of it.
type Ticket struct {
	// Err, when set, is the answer: the operation must not run.
	Err error
	// Delay is how long to wait before running the operation (an injected latency).
	Delay time.Duration
	// Drop asks to close the connection without an answer (before the operation runs).
	Drop bool
	// Ranges names the range partitions the request touched, e.g. "r0@s3" or "r1@s2,r2@s5".
	Ranges string
	// RangeCount is how many range partitions the request touched.
	RangeCount int

	after *fault // a fault to apply once the operation has run
	start time.Time
	op    Kind
	tbl   *tableState
	rng   *rangeState // the first range touched
	// rngs are the ranges a query touched when more than one, and perRange the entities it
	// returned from each (NoteKey).
	rngs     []*rangeState
	perRange []uint32
	entry    *keyEntry
	refused  bool
	key      string // the op's partition key, to tell whether entry still tracks it
	drop     bool   // the op deletes its container: forget it once that succeeds
	// applied: the op succeeded (AfterFault was asked about its reply), whatever an
	// after-fault then made of the reply the client gets.
	applied bool
}

// Admit decides about op before the service runs it and records its demand. now is the
// request's arrival.
func (l *Layer) Admit(op *Op, now time.Time) Ticket {
	tk := Ticket{start: now, op: op.Kind, key: op.Key, drop: op.DeleteContainer}
	f := l.faults.match(op)
	if f != nil && !f.after {
		if tk.applyBefore(f) {
			l.countFault(f)
			tk.refused = tk.Err != nil || tk.Drop
		}
	} else if f != nil {
		tk.after = f
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.tickOf(now)
	l.advance(t)
	acct := l.account(op)
	ac := acct.w.cur(t)
	ac.readOps++ // an account's window counts requests, whatever their kind, in readOps
	acct.total++
	acct.bySvc[acct.svcIndex(op.Service)]++
	var reason reason
	if l.o.Emulate && ac.readOps > acct.target {
		reason = reasonAccount
	}
	if op.Container == "" {
		l.refuse(&tk, reason, acct)
		return tk
	}
	tbl := l.table(op, acct)
	tk.tbl = tbl
	tbl.stats.kinds[op.Kind]++
	tbl.stats.bytesIn += uint64(max(op.BytesIn, 0))
	if op.Kind == KindOther {
		l.refuse(&tk, reason, acct)
		return tk
	}
	var c counts
	write := op.Kind.Write()
	ents := uint32(max(op.Entities, 1))
	if write {
		c.writeOps, c.writeEnts = 1, ents
	} else {
		c.readOps = 1
	}
	c.demand = ents
	// The range partitions touched: one for a single partition, [Key, HiKey] for a query.
	first := tbl.find(op.Key)
	last := first
	if op.Kind.query() {
		if op.Open {
			last = len(tbl.ranges) - 1
		} else {
			last = tbl.find(op.HiKey)
		}
		if last < first {
			last = first
		}
	}
	touched := tbl.ranges[first : last+1]
	tk.RangeCount = len(touched)
	tbl.stats.touched[min(tk.RangeCount, len(tbl.stats.touched)-1)]++
	var names strings.Builder // only queries name their ranges (in the query plan)
	for i, r := range touched {
		if op.Kind.query() && names.Len() < 200 {
			if i > 0 {
				names.WriteByte(',')
			}
			names.WriteString(r.name())
		}
		if t < r.offUntil && reason == reasonNone {
			reason = reasonMoving
		}
	}
	tk.Ranges = names.String()
	tk.rng = touched[0]
	if len(touched) > 1 {
		// Each range (and its server) serves its part of the query: NoteKey attributes the
		// entities returned, Finish credits them.
		tk.rngs = slices.Clone(touched)
		tk.perRange = make([]uint32, len(touched))
	}
	single := !op.Kind.query() || op.Kind <= KindPartition
	if single {
		e := tbl.keys.add(op.Key, uint64(ents))
		tk.entry = e
		ec := e.w.cur(t)
		if reason == reasonNone && l.o.Emulate && e.heat.hot(t, l.heatTicks) &&
			ec.readEnts+ec.writeEnts >= tbl.target {
			reason = reasonPartition
		}
		ec.demand += c.demand
		switch {
		case reason != reasonNone:
			ec.busy++
		case !tk.refused: // a fault may have refused it
			ec.add(counts{readOps: c.readOps, writeOps: c.writeOps, writeEnts: c.writeEnts})
		}
	}
	if reason == reasonNone && l.o.Emulate {
		for _, r := range touched {
			srv := l.servers[r.server]
			if sc := srv.w.cur(t); srv.heat.hot(t, l.heatTicks) && sc.readEnts+sc.writeEnts >= l.serverPerTick {
				reason = reasonServer
				break
			}
		}
	}
	hi := op.Key
	if op.Kind.query() {
		hi = op.HiKey
	}
	served := counts{readOps: c.readOps, writeOps: c.writeOps, writeEnts: c.writeEnts}
	credit := func(w *counts) {
		w.demand += c.demand
		switch {
		case reason != reasonNone:
			w.busy++
		case !tk.refused:
			w.add(served)
		}
	}
	for _, r := range touched {
		if r.fnd != nil {
			r.fnd.record(l.rnd, op.Key, hi, op.Kind.query() && op.Open)
		}
		credit(r.w.cur(t))
		credit(l.servers[r.server].w.cur(t))
	}
	credit(tbl.w.cur(t))
	l.refuse(&tk, reason, acct)
	return tk
}

// NoteKey attributes one entity a query returned, by its partition key, to the range
// partition that served it; the wire package calls it for each entity it sends. It needs
// no lock: a range's low key never changes.
func (tk *Ticket) NoteKey(pk string) {
	if len(tk.rngs) < 2 {
		return
	}
	i := sort.Search(len(tk.rngs), func(i int) bool { return keys.CompareOrdinal(tk.rngs[i].lo, pk) > 0 })
	tk.perRange[max(i-1, 0)]++
}

// refuse turns a reason into the ticket's answer and counts it.
func (l *Layer) refuse(tk *Ticket, r reason, acct *accountState) {
	if r == reasonNone || tk.Err != nil || tk.Drop {
		return
	}
	l.busy[r]++
	acct.busy++
	tk.refused = true
	switch r {
	case reasonAccount:
		tk.Err = azerr.Newf(azerr.ServerBusy, msgAccountBusy)
	case reasonMoving:
		// A moving range answers ServerBusy or, as often, a time-out.
		if l.busy[r]%2 == 0 {
			tk.Err = azerr.New(azerr.OperationTimedOut)
		} else {
			tk.Err = azerr.Newf(azerr.ServerBusy, msgBusy)
		}
	default:
		tk.Err = azerr.Newf(azerr.ServerBusy, msgBusy)
	}
}

// AfterFault says what happens to the reply of an operation that has succeeded (call it
// only for those): answer err instead (the reply is lost), drop the connection, or delay
// the reply. All zero: send it.
func (l *Layer) AfterFault(tk *Ticket) (drop bool, delay time.Duration, err error) {
	tk.applied = true
	if tk.after == nil || tk.refused {
		return false, 0, nil
	}
	f := tk.after
	l.countFault(f)
	return f.kind == faultDrop, f.latency, f.err()
}

// Finish records the outcome of a request Admit let through (or refused).
func (l *Layer) Finish(tk *Ticket, r Result) {
	if tk.tbl == nil {
		return
	}
	lat := r.Now.Sub(tk.start)
	l.mu.Lock()
	defer l.mu.Unlock()
	// Whether the op succeeded decides what the layer keeps of its table, not the reply an
	// after-fault may have dropped or replaced: a deleted table is gone either way.
	ok := tk.applied || r.Status > 0 && r.Status < 300
	switch {
	case tk.drop && !tk.refused && ok:
		l.forget(tk.tbl)
		return
	case ok:
		tk.tbl.succeeded = true
	case r.Status == 404 && !tk.tbl.succeeded:
		// Requests for a table that does not exist leave nothing behind.
		l.forget(tk.tbl)
		return
	}
	t := l.tickOf(r.Now)
	l.advance(t)
	s := &tk.tbl.stats
	s.bytesOut += uint64(max(r.BytesOut, 0))
	s.lat[latBucket(lat)]++
	if r.Status >= 500 {
		s.errors5xx++
	}
	if tk.op.query() {
		s.queries++
		s.partitionsReturned += uint64(r.Partitions)
	}
	if tk.refused || r.Entities <= 0 {
		return
	}
	// Reads are counted once they are known: as served entities and as demand (the
	// request's own demand of one entity is already counted).
	n := uint32(r.Entities)
	read := func(w *window) {
		c := w.cur(t)
		c.readEnts += n
		c.demand += n - 1
	}
	read(&tk.tbl.w)
	// A query over several ranges credits each with the entities it returned (as NoteKey
	// attributed them); what was not attributed goes to the first range.
	rest := n
	for i, r := range tk.rngs {
		m := min(tk.perRange[i], rest)
		if m == 0 {
			continue
		}
		rest -= m
		for _, w := range [...]*window{&r.w, &l.servers[r.server].w} {
			c := w.cur(t)
			c.readEnts += m
			c.demand += m - 1
		}
	}
	if tk.rng != nil && rest > 0 {
		own := uint32(1) // the request's own demand, already counted, unless a range took it
		if rest < n {
			own = 0
		}
		for _, w := range [...]*window{&tk.rng.w, &l.servers[tk.rng.server].w} {
			c := w.cur(t)
			c.readEnts += rest
			c.demand += rest - own
		}
	}
	if tk.entry != nil && tk.entry.key == tk.key {
		read(&tk.entry.w)
	}
}

// forget drops a deleted (or never existing) table's state: a table created again under its
// name starts afresh, as Azure's does, and memory follows the tables that exist.
func (l *Layer) forget(tb *tableState) {
	if l.tables[tb.key] != tb {
		return
	}
	delete(l.tables, tb.key)
	if a := l.accounts[tb.key.account]; a != nil && a.tables[tb.key.svc][tb.key.name] == tb {
		delete(a.tables[tb.key.svc], tb.key.name)
	}
	for _, r := range tb.ranges {
		l.servers[r.server].ranges--
	}
}

func (l *Layer) tickOf(now time.Time) int64 { return now.UnixNano() / int64(l.o.Tick) }

// account returns the account's state: one per account name, whatever the service.
func (l *Layer) account(op *Op) *accountState {
	a := l.accounts[op.Account]
	if a == nil {
		target := l.o.AccountTarget
		if v, ok := l.o.AccountTargets[op.Account]; ok && v > 0 {
			target = v
		}
		name := strings.Clone(op.Account)
		a = &accountState{name: name, target: perTick(target, l.o.Tick)}
		l.accounts[name] = a
	}
	return a
}

// svcIndex is s, or 0 for a service the layer does not know.
func (a *accountState) svcIndex(s Service) Service {
	if s >= numServices {
		return 0
	}
	return s
}

// table returns the table's state, creating it with one range partition on the least busy
// server. Names are case-insensitive (as Azure's table names are).
func (l *Layer) table(op *Op, acct *accountState) *tableState {
	name := op.Container
	if hasUpper(name) {
		name = strings.ToLower(name)
	}
	svc := acct.svcIndex(op.Service)
	m := acct.tables[svc]
	if m == nil {
		m = map[string]*tableState{}
		acct.tables[svc] = m
	}
	tb := m[name]
	if tb == nil {
		k := tableKey{svc, acct.name, strings.Clone(name)}
		tb = &tableState{key: k, display: strings.Clone(op.Container), keys: newSketch(l.o.TrackedKeys), target: l.partPerTick[svc]}
		srv := l.idlest(-1)
		tb.ranges = []*rangeState{{id: 0, server: srv.id}}
		srv.ranges++
		tb.nextID = 1
		l.tables[k] = tb
		m[k.name] = tb
	}
	return tb
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// find returns the index of the range holding key.
func (tb *tableState) find(key string) int {
	i := sort.Search(len(tb.ranges), func(i int) bool { return keys.CompareOrdinal(tb.ranges[i].lo, key) > 0 })
	return max(i-1, 0)
}

func (r *rangeState) name() string { return "r" + itoa(r.id) + "@s" + itoa(r.server) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// idlest returns the server with the least load in the last tick, then the fewest ranges,
// other than except.
func (l *Layer) idlest(except int) *serverState {
	var best *serverState
	var bestLoad uint32
	for _, s := range l.servers {
		if s.id == except {
			continue
		}
		c := s.w.tick(l.tick - 1)
		load := c.demand
		if best == nil || load < bestLoad || load == bestLoad && s.ranges < best.ranges {
			best, bestLoad = s, load
		}
	}
	if best == nil {
		return l.servers[0]
	}
	return best
}

// advance processes the ticks up to t: heat is judged on each completed tick's demand.
func (l *Layer) advance(t int64) {
	if t <= l.tick {
		return
	}
	prev := l.tick
	l.tick = t
	// Tick prev is now complete; the ticks after it, up to t-1, saw no request at all.
	silent := t - 1 - prev
	for _, s := range l.servers {
		s.heat.update(prev, s.w.tick(prev).demand, silent, l.serverPerTick, l.heatTicks)
	}
	halve := t/halveEvery != prev/halveEvery
	for _, tb := range l.tables {
		if halve {
			tb.keys.halve()
		}
		for _, e := range tb.keys.heap {
			e.heat.update(prev, e.w.tick(prev).demand, silent, tb.target, l.heatTicks)
		}
		for _, r := range tb.ranges {
			// Engage the finder while the range's server is over capacity (the decider).
			if l.servers[r.server].heat.since >= 0 {
				if r.fnd == nil {
					r.fnd = &finder{start: t}
				}
			} else {
				r.fnd = nil
			}
		}
	}
	for _, s := range l.servers {
		if s.heat.hot(t, l.heatTicks) && s.w.tick(t-1).demand > l.serverPerTick && t-s.lastAction >= l.heatTicks {
			l.rebalance(s, t)
		}
	}
}

// rebalance relieves a server that has been hot for the heat period: it splits its hottest
// range at the finder's key and moves the upper part to the idlest server, or, if no key
// divides the load, moves the hottest range away when the server holds others too.
func (l *Layer) rebalance(s *serverState, t int64) {
	s.lastAction = t
	var hotTbl *tableState
	hotIdx, hotLoad, onServer := -1, uint32(0), 0
	for _, tb := range l.tables {
		for i, r := range tb.ranges {
			if r.server != s.id {
				continue
			}
			onServer++
			if c := r.w.tick(t - 1); hotIdx < 0 || c.demand > hotLoad {
				hotTbl, hotIdx, hotLoad = tb, i, c.demand
			}
		}
	}
	if hotIdx < 0 {
		return
	}
	r := hotTbl.ranges[hotIdx]
	dst := l.idlest(s.id)
	if r.fnd != nil && t-r.fnd.start >= 1 {
		if key, ok := r.fnd.key(); ok && keys.CompareOrdinal(key, r.lo) > 0 {
			nr := &rangeState{id: hotTbl.nextID, lo: key, server: dst.id, offUntil: t + l.moveTicks}
			hotTbl.nextID++
			r.splits++
			r.fnd = nil
			dst.ranges++
			hotTbl.ranges = append(hotTbl.ranges, nil)
			copy(hotTbl.ranges[hotIdx+2:], hotTbl.ranges[hotIdx+1:])
			hotTbl.ranges[hotIdx+1] = nr
			l.event(Event{Tick: t, Kind: "split", Table: hotTbl.display, Account: hotTbl.key.account,
				Range: r.name(), New: nr.name(), Key: key})
			return
		}
	}
	if onServer > 1 {
		r.server = dst.id
		r.offUntil = t + l.moveTicks
		r.fnd = nil
		s.ranges--
		dst.ranges++
		l.event(Event{Tick: t, Kind: "move", Table: hotTbl.display, Account: hotTbl.key.account,
			Range: r.name(), From: s.id, To: dst.id})
		return
	}
	l.event(Event{Tick: t, Kind: "no-split", Table: hotTbl.display, Account: hotTbl.key.account, Range: r.name()})
}

// Event is a split or move of a range partition.
type Event struct {
	Tick    int64  `json:"-"`
	Time    string `json:"time"`
	Kind    string `json:"kind"` // split, move, no-split (hot but no key divides the load)
	Account string `json:"account"`
	Table   string `json:"table"`
	Range   string `json:"range"`
	New     string `json:"new,omitempty"`
	Key     string `json:"key,omitempty"`
	From    int    `json:"from,omitempty"`
	To      int    `json:"to,omitempty"`
}

func (l *Layer) event(e Event) {
	e.Time = time.Unix(0, e.Tick*int64(l.o.Tick)).UTC().Format(time.RFC3339Nano)
	if len(l.events) == maxEvents {
		copy(l.events, l.events[1:])
		l.events = l.events[:maxEvents-1]
	}
	l.events = append(l.events, e)
}

// heat tracks how long something has been above its target. It turns hot after the heat
// period above target and cools only after as long below it: clients that back off after a
// ServerBusy lower the demand for a moment without the partition having cooled.
type heat struct {
	since int64 // first tick of the current run above target; -1: cold
	below int64 // consecutive ticks below target since
}

var coldHeat = heat{since: -1}

// update judges the complete tick done on its demand, then silent ticks without load.
func (h *heat) update(done int64, demand uint32, silent int64, target uint32, heatTicks int64) {
	if demand > target {
		if h.since < 0 {
			h.since = done
		}
		h.below = 0
	} else if h.since >= 0 {
		h.below++
	}
	if h.since >= 0 {
		h.below += silent
		if h.below >= heatTicks {
			*h = coldHeat
		}
	}
}

// hot reports whether the heat period has passed since the run began.
func (h *heat) hot(now, heatTicks int64) bool { return h.since >= 0 && now-h.since >= heatTicks }
