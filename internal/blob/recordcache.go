package blob

import (
	"bytes"
	"sync"
)

// recordCache remembers decoded records by their exact stored bytes, so that a record read
// again unchanged costs a store read and a byte comparison instead of a JSON decode (the
// container read every blob request makes was a tenth of a 1 KiB Put or Get Blob's server
// CPU, the blob record's decode an eighth of a 1 KiB Get Blob's). It is never the source of
// truth: every lookup still reads the record from the store, and an entry is used only when
// the bytes read equal the bytes it was decoded from, so a changed, deleted or recreated
// record (or another front end's write) is never answered from it.
//
// Each result is a copy of the cached value: its fields may be reassigned, but the slices
// and maps in it are shared with the cache and must not be modified in place. Records
// longer than maxRecord are not kept, and the cache starts over when it holds maxEntries,
// which bounds its memory.
type recordCache[T any] struct {
	maxEntries, maxRecord int
	decode                func([]byte) (*T, error)

	mu sync.RWMutex
	m  map[string]cached[T]
}

type cached[T any] struct {
	raw []byte
	v   T
}

// get returns the record stored at key as raw.
func (rc *recordCache[T]) get(key, raw []byte) (*T, error) {
	rc.mu.RLock()
	e, ok := rc.m[string(key)] // no copy of key for a lookup
	rc.mu.RUnlock()
	if ok && bytes.Equal(e.raw, raw) {
		v := e.v
		return &v, nil
	}
	v, err := rc.decode(raw)
	if err != nil || len(raw) > rc.maxRecord {
		return v, err
	}
	rc.mu.Lock()
	if rc.m == nil || len(rc.m) >= rc.maxEntries {
		rc.m = make(map[string]cached[T]) // crude but bounded: start over when full
	}
	rc.m[string(key)] = cached[T]{raw: bytes.Clone(raw), v: *v}
	rc.mu.Unlock()
	cp := *v
	return &cp, nil
}

// put remembers v as the decoding of raw, the bytes just stored at key, so that the next read
// of an unchanged record skips its decode. v must be exactly what decode(raw) returns (the
// caller normalizes what JSON does not keep, such as an empty slice against nil), and the
// caller must not modify v's slices or maps afterwards.
func (rc *recordCache[T]) put(key, raw []byte, v *T) {
	if len(raw) > rc.maxRecord {
		return
	}
	rc.mu.Lock()
	if rc.m == nil || len(rc.m) >= rc.maxEntries {
		rc.m = make(map[string]cached[T])
	}
	rc.m[string(key)] = cached[T]{raw: bytes.Clone(raw), v: *v}
	rc.mu.Unlock()
}

// Bounds of the Service's caches: containers of at most 2 KiB (metadata and ACLs can make a
// record longer; those few are decoded each time), and blob records of at most 4 KiB (a
// blob of a few kilobytes kept inline, or up to about a hundred blocks), 512 of each.
const (
	cacheEntries      = 512
	containerCacheMax = 2 << 10
	blobCacheMax      = 4 << 10
)

func newContainerCache() *recordCache[Container] {
	return &recordCache[Container]{maxEntries: cacheEntries, maxRecord: containerCacheMax, decode: func(b []byte) (*Container, error) {
		c := &Container{}
		if _, err := decodeRecord(b, c); err != nil {
			return nil, err
		}
		return c, nil
	}}
}

func newBlobCache() *recordCache[Blob] {
	return &recordCache[Blob]{maxEntries: cacheEntries, maxRecord: blobCacheMax, decode: decodeBlob}
}
