package partition

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Snapshot is the layer's state as the admin API shows it. Rates are per second over the
// last Window; totals are since the process started.
type Snapshot struct {
	Time     string            `json:"time"`
	Emulate  bool              `json:"emulateTargets"`
	Targets  TargetsView       `json:"targets"`
	Window   string            `json:"window"`
	Accounts []AccountView     `json:"accounts"`
	Tables   []TableView       `json:"tables"`
	Servers  []ServerView      `json:"servers"`
	Hottest  []PartitionView   `json:"hottestPartitions"`
	Busy     map[string]uint64 `json:"serverBusy"`
	Faults   FaultsView        `json:"faults"`
	Events   []Event           `json:"events"`
}

// TargetsView lists the targets and model parameters.
type TargetsView struct {
	PartitionEntitiesPerSec int    `json:"partitionEntitiesPerSec"`
	QueueMessagesPerSec     int    `json:"queueMessagesPerSec"`
	BlobRequestsPerSec      int    `json:"blobRequestsPerSec"`
	AccountRequestsPerSec   int    `json:"accountRequestsPerSec"`
	ServerEntitiesPerSec    int    `json:"serverEntitiesPerSec"`
	Servers                 int    `json:"servers"`
	Heat                    string `json:"heat"`
	Move                    string `json:"move"`
	TrackedKeysPerTable     int    `json:"trackedKeysPerTable"`
}

// AccountView is one account, over all its services (the account target covers them all).
type AccountView struct {
	Name           string  `json:"name"`
	RequestsPerSec float64 `json:"requestsPerSec"`
	Requests       uint64  `json:"requests"`
	// RequestsByService splits Requests by service (table, queue, blob).
	RequestsByService map[string]uint64 `json:"requestsByService"`
	ServerBusy        uint64            `json:"serverBusy"`
	// Tables counts the tables, queues and containers seen.
	Tables int `json:"tables"`
}

// Rates are per-second rates over the window.
type Rates struct {
	ReadOps       float64 `json:"readOpsPerSec"`
	WriteOps      float64 `json:"writeOpsPerSec"`
	ReadEntities  float64 `json:"readEntitiesPerSec"`
	WriteEntities float64 `json:"writeEntitiesPerSec"`
	Demand        float64 `json:"demandEntitiesPerSec"`
	Busy          float64 `json:"busyPerSec"`
}

// Entities is entities read and written per second.
func (r Rates) Entities() float64 { return r.ReadEntities + r.WriteEntities }

// TableView is one table (or queue, or container).
type TableView struct {
	Service     string             `json:"service"`
	Account     string             `json:"account"`
	Name        string             `json:"name"`
	Rates       Rates              `json:"rates"`
	BytesIn     uint64             `json:"bytesIn"`
	BytesOut    uint64             `json:"bytesOut"`
	LatencyP50  string             `json:"latencyP50"`
	LatencyP99  string             `json:"latencyP99"`
	Kinds       map[string]uint64  `json:"requestsByKind"`
	KindShares  map[string]float64 `json:"shareByKind"`
	RangesHist  [5]uint64          `json:"requestsByRangesTouched"` // 0, 1, 2, 3, 4+
	PartsPerQ   float64            `json:"partitionsReturnedPerQuery"`
	Errors5xx   uint64             `json:"errors5xx"`
	TrackedKeys int                `json:"trackedKeys"`
	Ranges      []RangeView        `json:"ranges"`
	Partitions  []PartitionView    `json:"partitions"`
}

// RangeView is one range partition: PartitionKeys from Low (inclusive) to the next range's.
type RangeView struct {
	Name    string `json:"name"`
	Low     string `json:"low"`
	High    string `json:"high,omitempty"` // exclusive; "" = to the end
	Server  int    `json:"server"`
	Rates   Rates  `json:"rates"`
	Offline bool   `json:"offline"`
	Splits  int    `json:"splits"`
}

// PartitionView is one tracked partition: a table's PartitionKey, a queue (Key is its name)
// or a blob (Key is its name, Table its container).
type PartitionView struct {
	Service string `json:"service,omitempty"`
	Account string `json:"account,omitempty"`
	Table   string `json:"table,omitempty"`
	Key     string `json:"partitionKey"`
	Rates   Rates  `json:"rates"`
	// OfTarget is the demand over the service's partition target (1 = at the target; for a
	// queue messages of 1 KiB, for a blob requests).
	OfTarget float64 `json:"ofTarget"`
	// Count is the (decayed) weight the summary holds; it overestimates by at most Err, and
	// Exact means Err is 0.
	Count uint64 `json:"count"`
	Err   uint64 `json:"err"`
	Exact bool   `json:"exact"`
	Hot   bool   `json:"hot"`
}

// ServerView is one simulated partition server.
type ServerView struct {
	ID     int   `json:"id"`
	Ranges int   `json:"ranges"`
	Rates  Rates `json:"rates"`
	Hot    bool  `json:"hot"`
}

// FaultsView is the fault-injection state.
type FaultsView struct {
	Spec     string            `json:"spec"`
	Injected map[string]uint64 `json:"injected"`
}

func rates(w *window, now int64) Rates {
	c := w.sum(now)
	secs := float64(winLen-1) * 1 // complete ticks in the window
	return Rates{
		ReadOps: float64(c.readOps) / secs, WriteOps: float64(c.writeOps) / secs,
		ReadEntities: float64(c.readEnts) / secs, WriteEntities: float64(c.writeEnts) / secs,
		Demand: float64(c.demand) / secs, Busy: float64(c.busy) / secs,
	}
}

// scale converts per-tick rates to per-second rates.
func (r Rates) scale(tick time.Duration) Rates {
	f := float64(time.Second) / float64(tick)
	return Rates{r.ReadOps * f, r.WriteOps * f, r.ReadEntities * f, r.WriteEntities * f, r.Demand * f, r.Busy * f}
}

// Snapshot returns the layer's state; topKeys bounds the partitions listed per table and
// in the hottest list.
func (l *Layer) Snapshot(now time.Time, topKeys int) Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.tickOf(now)
	l.advance(t)
	rt := func(w *window) Rates { return rates(w, t).scale(l.o.Tick) }
	s := Snapshot{
		Time: now.UTC().Format(time.RFC3339Nano), Emulate: l.o.Emulate,
		Window: (time.Duration(winLen-1) * l.o.Tick).String(),
		Targets: TargetsView{l.o.PartitionTarget, l.o.QueueTarget, l.o.BlobTarget, l.o.AccountTarget, l.o.ServerCapacity, l.o.Servers,
			l.o.Heat.String(), l.o.Move.String(), l.o.TrackedKeys},
		Busy:   map[string]uint64{},
		Events: slices.Clone(l.events),
	}
	for r := reasonAccount; r < numReasons; r++ {
		s.Busy[reasonNames[r]] = l.busy[r]
	}
	for _, a := range l.accounts {
		r := rt(&a.w)
		av := AccountView{Name: a.name, RequestsPerSec: r.ReadOps, Requests: a.total, RequestsByService: map[string]uint64{},
			ServerBusy: a.busy}
		for svc, n := range a.bySvc {
			if n > 0 {
				av.RequestsByService[Service(svc).String()] = n
			}
			av.Tables += len(a.tables[svc])
		}
		s.Accounts = append(s.Accounts, av)
	}
	slices.SortFunc(s.Accounts, func(a, b AccountView) int { return cmp.Compare(a.Name, b.Name) })
	for _, srv := range l.servers {
		s.Servers = append(s.Servers, ServerView{srv.id, srv.ranges, rt(&srv.w), srv.heat.since >= 0})
	}
	for _, tb := range l.tables {
		st := &tb.stats
		tv := TableView{
			Service: tb.key.svc.String(), Account: tb.key.account, Name: tb.display,
			Rates: rt(&tb.w), BytesIn: st.bytesIn, BytesOut: st.bytesOut,
			LatencyP50: percentile(&st.lat, 0.5).String(), LatencyP99: percentile(&st.lat, 0.99).String(),
			Kinds: map[string]uint64{}, KindShares: map[string]float64{}, RangesHist: st.touched,
			Errors5xx: st.errors5xx, TrackedKeys: len(tb.keys.heap),
		}
		var total uint64
		for _, n := range st.kinds {
			total += n
		}
		for k, n := range st.kinds {
			if n > 0 {
				tv.Kinds[kindNames[k]] = n
				tv.KindShares[kindNames[k]] = float64(n) / float64(total)
			}
		}
		if st.queries > 0 {
			tv.PartsPerQ = float64(st.partitionsReturned) / float64(st.queries)
		}
		for i, r := range tb.ranges {
			rv := RangeView{Name: r.name(), Low: r.lo, Server: r.server, Rates: rt(&r.w), Offline: t < r.offUntil, Splits: r.splits}
			if i+1 < len(tb.ranges) {
				rv.High = tb.ranges[i+1].lo
			}
			tv.Ranges = append(tv.Ranges, rv)
		}
		target := float64(tb.target) * float64(time.Second) / float64(l.o.Tick)
		for _, e := range tb.keys.heap {
			r := rt(&e.w)
			tv.Partitions = append(tv.Partitions, PartitionView{
				Service: tv.Service, Account: tb.key.account, Table: tb.display, Key: e.key, Rates: r, OfTarget: r.Demand / target,
				Count: e.count, Err: e.err, Exact: e.err == 0, Hot: e.heat.since >= 0,
			})
		}
		slices.SortFunc(tv.Partitions, func(a, b PartitionView) int {
			return cmp.Or(cmp.Compare(b.Rates.Demand, a.Rates.Demand), cmp.Compare(b.Count, a.Count), strings.Compare(a.Key, b.Key))
		})
		s.Hottest = append(s.Hottest, tv.Partitions[:min(len(tv.Partitions), topKeys)]...)
		tv.Partitions = tv.Partitions[:min(len(tv.Partitions), topKeys)]
		s.Tables = append(s.Tables, tv)
	}
	slices.SortFunc(s.Tables, func(a, b TableView) int {
		return cmp.Or(strings.Compare(a.Account, b.Account), strings.Compare(a.Service, b.Service), strings.Compare(a.Name, b.Name))
	})
	slices.SortFunc(s.Hottest, func(a, b PartitionView) int {
		return cmp.Or(cmp.Compare(b.Rates.Demand, a.Rates.Demand), cmp.Compare(b.Count, a.Count))
	})
	s.Hottest = s.Hottest[:min(len(s.Hottest), topKeys)]
	fs := l.faults.set.Load()
	s.Faults = FaultsView{Spec: fs.String(), Injected: map[string]uint64{}}
	for k := faultBusy; k < numFaultKinds; k++ {
		s.Faults.Injected[faultNames[k]] = l.faults.counts[k].Load()
	}
	return s
}

// Handler serves the admin API:
//
//	GET /partitions[?top=N]   the Snapshot as JSON
//	GET /faults               the fault spec in force
//	PUT /faults               replace it (the body is a spec; empty: none)
//
// Mount it under any prefix with http.StripPrefix.
func (l *Layer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /partitions", func(w http.ResponseWriter, r *http.Request) {
		top := 20
		if v := r.URL.Query().Get("top"); v != "" {
			if n, err := strconv.Atoi(v); err == nil && n >= 0 && n <= 10000 {
				top = n
			}
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(l.Snapshot(time.Now(), top))
	})
	mux.HandleFunc("GET /faults", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, l.Faults().String()+"\n")
	})
	mux.HandleFunc("PUT /faults", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fs, err := ParseFaults(string(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		l.SetFaults(fs)
		_, _ = io.WriteString(w, l.Faults().String()+"\n")
	})
	return mux
}
