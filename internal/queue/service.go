package queue

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Options configure a Service.
type Options struct {
	Logger *slog.Logger
	// Now is the clock (default time.Now). The service never lets its readings go
	// backwards (see Service.clock).
	Now func() time.Time
	// ReapInterval is how often expired messages are deleted (default 1 s; negative: never,
	// for tests that drive Reap themselves).
	ReapInterval time.Duration
}

// Service is the Queue service over one store. It is safe for concurrent use.
type Service struct {
	st   store.Store
	log  *slog.Logger
	wall func() time.Time
	// last is the latest clock reading handed out (Unix ns): readings never go back, which
	// the visibility-index hints rely on.
	last atomic.Int64
	// seq numbers messages: increasing, and above any number of an earlier run. On a shared
	// store it holds the tick part only (see nextSeq).
	seq atomic.Uint64
	// shared is set when other processes share the store (store.Traits): the visibility
	// hints and cached counts are then off, message operations read their queue's catalog
	// record and the messages they take inside their serializable transaction, and message
	// numbers carry this process's node number (docs/postgres.md).
	shared bool
	// node is this process's number among those sharing the store (0 until allocated;
	// shared stores only), in the low nodeBits bits of every message number it makes.
	node   atomic.Uint64
	nodeMu sync.Mutex
	// states holds per-queue in-memory state (*qstate) by queue id.
	states sync.Map
	// catalog caches account+"\x00"+name → *qentry, so message operations find a queue's id
	// without reading the catalog. Delete Queue marks an entry dead under the queue's lock.
	catalog sync.Map
	// upgraded holds the ids of queues known to hold no message of the earlier layout
	// (upgrade.go).
	upgraded sync.Map
	// reapFrom is where the next reaper pass starts in the expiry index (Unix ns).
	reapFrom atomic.Int64
	stop     chan struct{}
	done     chan struct{}
	closed   atomic.Bool
}

// qentry is a cached catalog entry.
type qentry struct {
	id   uint64
	dead atomic.Bool
	// locks is the queue's lock set for Update (read only), made once: message operations
	// would otherwise format the lock name and allocate the slice on every request.
	locks []store.Lock
}

func newQEntry(id uint64) *qentry { return &qentry{id: id, locks: []store.Lock{queueLock(id)}} }

// qstate is what the service remembers about a queue between requests.
type qstate struct {
	// hint: no entry of the queue's visibility index is below this position.
	hint atomic.Pointer[position]
	// count caches the queue's message count (countUnknown: read the store); see addCount.
	count atomic.Int64
	// head caches the front of the visibility index (head.go); nil: nothing cached.
	head atomic.Pointer[headCache]
}

// position is a place in a queue's visibility index: (visibleAt, seq).
type position struct {
	at  int64
	seq uint64
}

func (p position) less(o position) bool { return p.at < o.at || p.at == o.at && p.seq < o.seq }

// next is the position just after p.
func (p position) next() position {
	if p.seq == ^uint64(0) {
		return position{at: p.at + 1}
	}
	return position{p.at, p.seq + 1}
}

// load returns the hint (the index's start when none is known).
func (st *qstate) load() position {
	if p := st.hint.Load(); p != nil {
		return *p
	}
	return position{}
}

// raise moves the hint up to p (both are lower bounds of the index; the larger is tighter).
func (st *qstate) raise(p position) {
	for {
		cur := st.hint.Load()
		if cur != nil && !cur.less(p) {
			return
		}
		if st.hint.CompareAndSwap(cur, &p) {
			return
		}
	}
}

// New returns a Service over st and starts its reaper.
func New(st store.Store, o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Service{st: st, log: o.Logger, wall: o.Now, stop: make(chan struct{}), done: make(chan struct{})}
	s.shared = store.TraitsOf(st).Shared
	if s.shared {
		s.seq.Store(uint64(max(o.Now().UnixNano(), 0)) >> nodeBits)
	} else {
		s.seq.Store(uint64(max(o.Now().UnixNano(), 0)))
	}
	if o.ReapInterval == 0 {
		o.ReapInterval = time.Second
	}
	if o.ReapInterval > 0 {
		go s.reapLoop(o.ReapInterval)
	} else {
		close(s.done)
	}
	return s
}

// Close stops the reaper (the store is the caller's). Safe to call twice.
func (s *Service) Close() {
	if s.closed.Swap(true) {
		return
	}
	close(s.stop)
	<-s.done
}

// clock returns the time in Unix ns, greater than every earlier reading: an index entry
// written after a walk is then above the position the walk ended at.
func (s *Service) clock() int64 {
	t := s.wall().UnixNano()
	for {
		l := s.last.Load()
		next := max(t, l+1)
		if s.last.CompareAndSwap(l, next) {
			return next
		}
	}
}

// Shared reports whether other processes share the store, so that callers keep no
// unvalidated cache of what it holds (the service properties).
func (s *Service) Shared() bool { return s != nil && s.shared }

// nodeBits is how many low bits of a message number name the process that made it, on a
// shared store: 65,535 processes (node numbers are handed out in turn and wrap around) and a
// tick of 2^16 ns (65 µs) above them.
const nodeBits = 16

// nextSeq returns a new message number, from the clock reading now. On one process it is
// the reading itself (or one more than the last number, if larger): increasing, and above
// every number of an earlier run. On a shared store each process puts its node number in
// the low bits, so numbers made by different processes at the same moment still differ (a
// message's key is its queue and number: a collision would overwrite another message).
func (s *Service) nextSeq(now int64) uint64 {
	at := uint64(max(now, 0))
	if s.shared {
		at >>= nodeBits
	}
	for {
		cur := s.seq.Load()
		next := max(cur+1, at)
		if s.seq.CompareAndSwap(cur, next) {
			if s.shared {
				return next<<nodeBits | s.node.Load()
			}
			return next
		}
	}
}

// nodeKey holds the last node number handed out to a process sharing the store.
var nodeKey = keys.Meta("queue-node")

// ensureNode allocates this process's node number on a shared store, once (a failed
// allocation is tried again by the next put).
func (s *Service) ensureNode(ctx context.Context) error {
	if !s.shared || s.node.Load() != 0 {
		return nil
	}
	s.nodeMu.Lock()
	defer s.nodeMu.Unlock()
	if s.node.Load() != 0 {
		return nil
	}
	var n uint64
	err := s.st.Update(ctx, []store.Lock{{Name: "q/node"}}, func(tx store.Txn) error {
		n = 0
		v, err := tx.Get(nodeKey)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if len(v) == 8 {
			n = binary.BigEndian.Uint64(v)
		}
		n = n%(1<<nodeBits-1) + 1 // 1 … 65535
		return tx.Set(nodeKey, binary.BigEndian.AppendUint64(nil, n))
	})
	if err != nil {
		return fmt.Errorf("queue: allocate node number: %w", err)
	}
	s.node.Store(n)
	return nil
}

// hint returns where a walk of queue st's visibility index may start: the hint on one
// process, the index's start on a shared store (another process may have written below any
// position this one remembers, with a clock behind this one's).
func (s *Service) hint(st *qstate) position {
	if s.shared {
		return position{}
	}
	return st.load()
}

func (s *Service) state(id uint64) *qstate {
	if v, ok := s.states.Load(id); ok {
		return v.(*qstate)
	}
	st := &qstate{}
	st.count.Store(countUnknown)
	v, _ := s.states.LoadOrStore(id, st)
	return v.(*qstate)
}

func nameLock(account, name string) store.Lock {
	return store.Lock{Name: "qn/" + account + "/" + name}
}

func queueLock(id uint64) store.Lock { return store.Lock{Name: "q/" + strconv.FormatUint(id, 10)} }

var errQueueNotFound = azerr.New(azerr.QueueNotFound)

// lookup reads a queue's catalog record (nil when absent) through get.
func lookup(get func([]byte) ([]byte, error), account, name string) (*queueRecord, error) {
	v, err := get(keys.QueueCatalog(account, name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeQueueRecord(v)
}

// resolve returns the cached catalog entry of a queue, reading the catalog on a miss (nil
// when the queue does not exist).
func (s *Service) resolve(ctx context.Context, account, name string) (*qentry, error) {
	key := account + "\x00" + name
	if v, ok := s.catalog.Load(key); ok {
		e := v.(*qentry)
		if !e.dead.Load() {
			return e, nil
		}
		s.catalog.CompareAndDelete(key, e)
	}
	q, err := lookup(func(k []byte) ([]byte, error) { return s.st.Get(ctx, k) }, account, name)
	if err != nil || q == nil {
		return nil, err
	}
	if err := s.upgradeQueue(ctx, q.id); err != nil {
		return nil, err
	}
	v, _ := s.catalog.LoadOrStore(key, newQEntry(q.id))
	return v.(*qentry), nil
}

// withQueue runs fn in an Update holding the queue's lock. A queue deleted (or deleted and
// created again) between the lookup and the lock is looked up again.
func (s *Service) withQueue(ctx context.Context, account, name string, fn func(tx store.Txn, id uint64) error) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		e, err := s.resolve(ctx, account, name)
		if err != nil {
			return err
		}
		if e == nil {
			return errQueueNotFound
		}
		moved := false
		err = s.st.Update(ctx, e.locks, func(tx store.Txn) error {
			if e.dead.Load() {
				moved = true
				return errQueueNotFound
			}
			if s.shared {
				// Another process may have deleted the queue (and made another under its
				// name): the record read here is part of the serializable transaction, so a
				// concurrent Delete Queue conflicts with this write.
				q, err := lookup(tx.Get, account, name)
				if err != nil {
					return err
				}
				if q == nil || q.id != e.id {
					e.dead.Store(true)
					moved = true
					return errQueueNotFound
				}
			}
			return fn(tx, e.id)
		})
		if err != nil {
			s.forgetCount(e.id)
			s.state(e.id).dropHead()
		}
		if !moved || attempt == 2 {
			return err
		}
	}
}

// newReceipt returns a random pop receipt value.
func newReceipt() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint64(b[:])
}

// DropCaches forgets what the service remembers about the store's contents (the catalog
// cache, the visibility-index hints, the reaper's position), for when the contents are
// replaced underneath it (a snapshot restore or a reset). The caller keeps every request out
// meanwhile; the reaper may run, and starts over from the beginning of the expiry index.
func (s *Service) DropCaches() {
	s.catalog.Clear()
	s.states.Clear()
	s.upgraded.Clear()
	s.reapFrom.Store(0)
}
