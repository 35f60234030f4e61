package blob

import (
	"bytes"
	"sync"
)

// containerCache remembers decoded container records by their exact stored bytes, so that
// the container read every blob request makes costs a store read and a byte comparison
// instead of a JSON decode (the decode was a tenth of a 1 KiB Put or Get Blob's server
// CPU). It is never the source of truth: every lookup still reads the record from the
// store, and an entry is used only when the bytes read equal the bytes it was decoded from,
// so a changed, deleted or recreated container (or another front end's write) can never be
// answered from it.
type containerCache struct {
	mu sync.RWMutex
	m  map[string]cachedContainer
}

type cachedContainer struct {
	raw []byte
	c   Container
}

// Bounds: at most this many containers, each record at most this long (metadata and ACLs
// can make a record kilobytes long; those few are decoded each time).
const (
	containerCacheEntries = 1024
	containerCacheRecord  = 2 << 10
)

// decode returns the container stored at key as raw, from the cache when raw is the
// cached bytes. The result is the caller's own copy: its fields may be reassigned, but the
// Meta map and ACL slice are shared with the cache and must not be modified in place.
func (cc *containerCache) decode(key string, raw []byte) (*Container, error) {
	cc.mu.RLock()
	e, ok := cc.m[key]
	cc.mu.RUnlock()
	if ok && bytes.Equal(e.raw, raw) {
		c := e.c
		return &c, nil
	}
	c := &Container{}
	if _, err := decodeRecord(raw, c); err != nil {
		return nil, err
	}
	if len(raw) > containerCacheRecord {
		return c, nil
	}
	cc.mu.Lock()
	if cc.m == nil || len(cc.m) >= containerCacheEntries {
		cc.m = make(map[string]cachedContainer) // crude but bounded: start over when full
	}
	cc.m[key] = cachedContainer{raw: bytes.Clone(raw), c: *c}
	cc.mu.Unlock()
	cp := *c
	return &cp, nil
}
