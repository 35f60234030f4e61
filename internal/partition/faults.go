package partition

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

// A fault spec is a list of rules separated by ';'. Each rule is fields separated by commas
// or spaces:
//
//	spec    = [rule] { ";" [rule] }
//	rule    = field { ("," | " ") field }
//	field   = "seed=" uint64                    the run's seed (a rule of its own, or anywhere)
//	        | "fault=" ("busy" | "timeout" | "internal" | "latency" | "drop")
//	        | "latency=" duration               for fault=latency (default 100ms)
//	        | "service=" ("table" | "queue" | "blob" | "*")
//	        | "op=" ("*" | "read" | "write" | "query" | kind)    kind: point-read, insert,
//	                                            update, delete, batch, other, ...
//	        | "table=" name                     table, queue or container (case-insensitive);
//	                                            name* matches every name with that prefix
//	        | "queue=" name | "container=" name the same as table=
//	        | "pk=" prefix                      partition key prefix (a queue: its name;
//	                                            a blob: its name)
//	        | "p=" probability                  0 < p <= 1
//	        | "every=" n                        the n-th, 2n-th, ... matching request
//	        | "when=" ("before" | "after")      after: the operation is applied, then the
//	                                            reply is lost (or delayed, or dropped)
//
// Example: "seed=7; fault=busy op=write table=orders p=0.1; fault=timeout when=after every=50".
// A rule needs fault= and one of p= or every=. Rules are tried in order; for each request
// the first matching rule that fires applies. Whether a rule fires depends only on the seed,
// the rule and how many requests it has matched before, so the same requests in the same
// order meet the same faults.

type faultKind uint8

const (
	faultBusy faultKind = iota + 1
	faultTimeout
	faultInternal
	faultLatency
	faultDrop
	numFaultKinds
)

var faultNames = [numFaultKinds]string{"", "busy", "timeout", "internal", "latency", "drop"}

type fault struct {
	kind     faultKind
	service  Service // 0: any
	op       string  // "" or "*": any
	table    string  // lower case; "": any
	tablePfx bool    // table is a prefix (the spec's name ended in '*')
	pk       string
	p        float64
	every    uint64
	after    bool
	latency  time.Duration
	index    int
	seen     atomic.Uint64
	fired    atomic.Uint64
	seed     uint64
	rendered string
}

// FaultSet is a parsed fault spec.
type FaultSet struct {
	Seed  uint64
	rules []*fault
	spec  string
}

// ParseFaults parses a fault spec. An empty spec means no faults.
func ParseFaults(spec string) (*FaultSet, error) {
	fs := &FaultSet{spec: spec}
	var errs []error
	for i, raw := range strings.Split(spec, ";") {
		fields := strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
		if len(fields) == 0 {
			continue
		}
		f := &fault{index: len(fs.rules)}
		onlySeed := true
		for _, fd := range fields {
			k, v, ok := strings.Cut(fd, "=")
			if !ok || v == "" {
				errs = append(errs, fmt.Errorf("faults: rule %d: %q is not name=value", i+1, fd))
				continue
			}
			if k != "seed" {
				onlySeed = false
			}
			if err := f.set(fs, k, v); err != nil {
				errs = append(errs, fmt.Errorf("faults: rule %d: %w", i+1, err))
			}
		}
		if onlySeed {
			continue
		}
		switch {
		case f.kind == 0:
			errs = append(errs, fmt.Errorf("faults: rule %d: fault= is missing", i+1))
		case f.p == 0 && f.every == 0:
			errs = append(errs, fmt.Errorf("faults: rule %d: p= or every= is missing", i+1))
		case f.p != 0 && f.every != 0:
			errs = append(errs, fmt.Errorf("faults: rule %d: p= and every= exclude each other", i+1))
		}
		if f.kind == faultLatency && f.latency == 0 {
			f.latency = 100 * time.Millisecond
		}
		f.rendered = strings.Join(fields, " ")
		fs.rules = append(fs.rules, f)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, f := range fs.rules {
		f.seed = fs.Seed
	}
	return fs, nil
}

func (f *fault) set(fs *FaultSet, k, v string) error {
	switch k {
	case "seed":
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("seed %q is not an unsigned integer", v)
		}
		fs.Seed = n
	case "fault":
		for i, n := range faultNames {
			if n == v && i > 0 {
				f.kind = faultKind(i)
				return nil
			}
		}
		return fmt.Errorf("fault %q: want busy, timeout, internal, latency or drop", v)
	case "latency":
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Minute {
			return fmt.Errorf("latency %q: want a duration up to 1m", v)
		}
		f.latency = d
	case "service":
		switch v {
		case "*":
		case "table":
			f.service = Table
		case "queue":
			f.service = Queue
		case "blob":
			f.service = Blob
		default:
			return fmt.Errorf("service %q: want table, queue, blob or *", v)
		}
	case "op":
		switch v {
		case "*", "read", "write", "query":
		default:
			known := false
			for _, n := range kindNames {
				known = known || n == v
			}
			if !known {
				return fmt.Errorf("op %q: want *, read, write, query or an operation kind", v)
			}
		}
		f.op = v
	case "table", "queue", "container":
		f.table = strings.ToLower(v)
		if p, ok := strings.CutSuffix(f.table, "*"); ok {
			f.table, f.tablePfx = p, true
		}
	case "pk":
		f.pk = v
	case "p":
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || !(p > 0 && p <= 1) {
			return fmt.Errorf("p %q: want a probability in (0, 1]", v)
		}
		f.p = p
	case "every":
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("every %q: want a positive integer", v)
		}
		f.every = n
	case "when":
		switch v {
		case "before":
			f.after = false
		case "after":
			f.after = true
		default:
			return fmt.Errorf("when %q: want before or after", v)
		}
	default:
		return fmt.Errorf("unknown field %q", k)
	}
	return nil
}

// String renders the set in the spec grammar (normalised).
func (fs *FaultSet) String() string {
	if fs == nil {
		return ""
	}
	parts := []string{"seed=" + strconv.FormatUint(fs.Seed, 10)}
	for _, f := range fs.rules {
		parts = append(parts, f.rendered)
	}
	return strings.Join(parts, "; ")
}

func (f *fault) matches(op *Op) bool {
	if f.service != 0 && f.service != op.Service {
		return false
	}
	switch f.op {
	case "", "*":
	case "read":
		if op.Kind.Write() || op.Kind == KindOther {
			return false
		}
	case "write":
		if !op.Kind.Write() {
			return false
		}
	case "query":
		if !op.Kind.query() {
			return false
		}
	default:
		if op.Kind.String() != f.op {
			return false
		}
	}
	switch {
	case f.tablePfx:
		if len(op.Container) < len(f.table) || !strings.EqualFold(f.table, op.Container[:len(f.table)]) {
			return false
		}
	case f.table != "" && !strings.EqualFold(f.table, op.Container):
		return false
	}
	return strings.HasPrefix(op.Key, f.pk)
}

// fires counts one more matching request and decides, deterministically, whether the rule
// applies to it.
func (f *fault) fires() bool {
	n := f.seen.Add(1)
	if f.every > 0 {
		return n%f.every == 0
	}
	x := splitmix(f.seed ^ uint64(f.index+1)<<48 ^ n)
	return float64(x>>11)/(1<<53) < f.p
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (f *fault) err() error {
	switch f.kind {
	case faultBusy:
		return azerr.New(azerr.ServerBusy)
	case faultTimeout:
		return azerr.New(azerr.OperationTimedOut)
	case faultInternal:
		return azerr.New(azerr.InternalError)
	}
	return nil
}

// applyBefore puts a before-fault into the ticket; it reports whether the fault applies.
func (tk *Ticket) applyBefore(f *fault) bool {
	switch f.kind {
	case faultLatency:
		tk.Delay = f.latency
	case faultDrop:
		tk.Drop = true
	default:
		tk.Err = f.err()
	}
	return true
}

// faultHolder holds the current fault set; it can be replaced at run time.
type faultHolder struct {
	set    atomic.Pointer[FaultSet]
	counts [numFaultKinds]atomic.Uint64
}

func (h *faultHolder) match(op *Op) *fault {
	fs := h.set.Load()
	if fs == nil {
		return nil
	}
	for _, f := range fs.rules {
		if f.matches(op) && f.fires() {
			f.fired.Add(1)
			return f
		}
	}
	return nil
}

// SetFaults replaces the fault rules (nil or an empty set: none); the rules' counters
// start from zero.
func (l *Layer) SetFaults(fs *FaultSet) {
	if fs != nil && len(fs.rules) == 0 {
		fs = nil
	}
	l.faults.set.Store(fs)
}

// Faults returns the current fault set (nil: none).
func (l *Layer) Faults() *FaultSet { return l.faults.set.Load() }

func (l *Layer) countFault(f *fault) { l.faults.counts[f.kind].Add(1) }
