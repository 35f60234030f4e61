package postgres

import (
	"bytes"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
)

// The engine's rule for its callers: no pooled connection is held while another is acquired.
// A goroutine that holds one (inside an Update's function, with a Snapshot open, while a Scan
// calls its callback) and asks the pool for a second waits for a connection that only its
// peers can free; with a pool's worth of such goroutines at once, none ever gets one, and
// every request waits for its timeout. Such a path works in every test that does not fill
// the pool, so it is checked for directly: with Options.CheckNesting, the engine keeps, per
// goroutine, how many connections it holds, and logs an Error (with the stack) when one that
// holds some acquires another. The end-to-end tests run with it on the PostgreSQL engine,
// where an Error log fails the test.
//
// Work an engine call starts on another goroutine for its caller (an extent's chunk writes
// and read-ahead) counts as the caller's: it is what the caller waits for.

// NestingMessage is the message of the Error that CheckNesting logs.
const NestingMessage = "postgres: a goroutine holding a pooled connection asks for another (a full pool would deadlock)"

// nesting tracks held connections per goroutine. A nil *nesting checks nothing.
type nesting struct {
	log  *slog.Logger
	mu   sync.Mutex
	held map[uint64]int // goroutine id → connections it holds
}

func newNesting(log *slog.Logger) *nesting {
	return &nesting{log: log, held: map[uint64]int{}}
}

// owner returns the calling goroutine's id, the key of its holdings (0 when not checking).
func (n *nesting) owner() uint64 {
	if n == nil {
		return 0
	}
	return goroutineID()
}

// check reports an acquisition for owner (about to ask the pool for a connection for op)
// while owner holds one.
func (n *nesting) check(owner uint64, op string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	held := n.held[owner]
	n.mu.Unlock()
	if held > 0 {
		buf := make([]byte, 16<<10)
		buf = buf[:runtime.Stack(buf, false)]
		n.log.Error(NestingMessage, "op", op, "held", held, "stack", string(buf))
	}
}

// acquire is check, then counts the connection as owner's until release.
func (n *nesting) acquire(owner uint64, op string) {
	if n == nil {
		return
	}
	n.check(owner, op)
	n.mu.Lock()
	n.held[owner]++
	n.mu.Unlock()
}

func (n *nesting) release(owner uint64) {
	if n == nil {
		return
	}
	n.mu.Lock()
	if n.held[owner]--; n.held[owner] <= 0 {
		delete(n.held, owner)
	}
	n.mu.Unlock()
}

// goroutineID parses the current goroutine's id from its stack header ("goroutine 17 [").
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
