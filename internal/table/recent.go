package table

import (
	"container/list"
	"sync"
)

// recentValues remembers the stored form of entities this process wrote or read lately, on a
// shared engine with conditional writes (store.GuardedWriter). It is only ever a guess: a
// write uses a remembered value as the value it expects the entity to hold, and the engine
// writes only if the entity holds exactly that (writeFast). A guess that another front end
// (or a racing writer here) made stale fails the write, which then reads the entity; no
// answer is ever given from it, so it needs no invalidation to be correct. What it saves is
// the read: a write of an entity whose value is remembered is one round trip.
//
// Bounded by bytes, least recently used first out. Values are never modified in place.
type recentValues struct {
	mu    sync.Mutex
	max   int
	size  int
	items map[string]*list.Element // of *recentEntry
	order list.List                // front: most recently used
}

type recentEntry struct {
	key   string
	value []byte
}

// recentOverhead approximates the bookkeeping bytes of one entry.
const recentOverhead = 128

func newRecentValues(maxBytes int) *recentValues {
	return &recentValues{max: maxBytes, items: map[string]*list.Element{}}
}

// get returns the remembered value of key. The caller must not modify it.
func (c *recentValues) get(key []byte) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[string(key)]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*recentEntry).value, true
}

// put remembers value (which the cache now owns) as key's stored value.
func (c *recentValues) put(key, value []byte) {
	if c == nil {
		return
	}
	n := len(key) + len(value) + recentOverhead
	if n > c.max/64 {
		c.drop(key) // large entities are not worth the room
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[string(key)]; ok {
		r := e.Value.(*recentEntry)
		c.size += len(value) - len(r.value)
		r.value = value
		c.order.MoveToFront(e)
	} else {
		k := string(key)
		c.items[k] = c.order.PushFront(&recentEntry{key: k, value: value})
		c.size += n
	}
	for c.size > c.max {
		e := c.order.Back()
		r := e.Value.(*recentEntry)
		c.order.Remove(e)
		delete(c.items, r.key)
		c.size -= len(r.key) + len(r.value) + recentOverhead
	}
}

// drop forgets key.
func (c *recentValues) drop(key []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[string(key)]; ok {
		r := e.Value.(*recentEntry)
		c.order.Remove(e)
		delete(c.items, r.key)
		c.size -= len(r.key) + len(r.value) + recentOverhead
	}
}
