package queue

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
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
	// seq numbers messages: increasing, and above any number of an earlier run.
	seq atomic.Uint64
	// states holds per-queue in-memory state (*qstate) by queue id.
	states sync.Map
	// catalog caches account+"\x00"+name → *qentry, so message operations find a queue's id
	// without reading the catalog. Delete Queue marks an entry dead under the queue's lock.
	catalog sync.Map
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
}

// qstate is what the service remembers about a queue between requests.
type qstate struct {
	// hint: no entry of the queue's visibility index is below this position.
	hint atomic.Pointer[position]
}

// position is a place in a queue's visibility index: (visibleAt, seq).
type position struct {
	at  int64
	seq uint64
}

func (p position) less(o position) bool { return p.at < o.at || p.at == o.at && p.seq < o.seq }

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
	s.seq.Store(uint64(max(o.Now().UnixNano(), 0)))
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

func (s *Service) nextSeq(now int64) uint64 {
	for {
		cur := s.seq.Load()
		next := max(cur+1, uint64(max(now, 0)))
		if s.seq.CompareAndSwap(cur, next) {
			return next
		}
	}
}

func (s *Service) state(id uint64) *qstate {
	if v, ok := s.states.Load(id); ok {
		return v.(*qstate)
	}
	v, _ := s.states.LoadOrStore(id, &qstate{})
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
	v, _ := s.catalog.LoadOrStore(key, &qentry{id: q.id})
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
		err = s.st.Update(ctx, []store.Lock{queueLock(e.id)}, func(tx store.Txn) error {
			if e.dead.Load() {
				moved = true
				return errQueueNotFound
			}
			return fn(tx, e.id)
		})
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
	s.reapFrom.Store(0)
}
