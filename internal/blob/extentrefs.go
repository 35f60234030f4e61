package blob

import (
	"bytes"

	"github.com/tablo/tablo/internal/keys"
)

// Which records name extents, and how: the sweep (gc.go) reads them to find what is still
// referenced, and tablo migrate rewrites them, because extent ids are each engine's own and
// a copied extent gets a new one. Only two kinds of record name extents: a blob record (base
// blob or snapshot: its committed blocks, or a page blob's written runs; an append blob's
// blocks are committed blocks) and an uncommitted block's record. Copies share their
// source's extents by naming the same ids.

// RecordKind says what a key of the engine holds, as far as extents are concerned.
type RecordKind int

const (
	// OtherRecord is any key that names no extent (containers, settings, other services).
	OtherRecord RecordKind = iota
	// BlobRecord is a blob or a snapshot (it may name no extent: small blobs are inline).
	BlobRecord
	// BlockRecord is an uncommitted block.
	BlockRecord
)

// recordKind classifies key k: 'B' 'd' | container id(8) | 'b' or 'u' | ...
func recordKind(k []byte) RecordKind {
	const at = 2 + 8
	if len(k) <= at || !bytes.HasPrefix(k, []byte{keys.TagBlob, 'd'}) {
		return OtherRecord
	}
	switch k[at] {
	case 'b':
		return BlobRecord
	case 'u':
		return BlockRecord
	}
	return OtherRecord
}

// extentRef is one place in a decoded record that names an extent, and how many bytes of
// it the record reads (from its start).
type extentRef struct {
	id   *uint64
	need int64
}

// decodeRefs decodes the record v at key k if its kind can name extents, and returns it with
// the places it names them. rec is *Blob or *staged (nil for OtherRecord).
func decodeRefs(k, v []byte) (kind RecordKind, rec any, refs []extentRef, err error) {
	switch kind = recordKind(k); kind {
	case BlobRecord:
		b, err := decodeBlob(v)
		if err != nil {
			return kind, nil, nil, err
		}
		for i := range b.Blocks {
			if bl := &b.Blocks[i]; bl.Ext != 0 {
				refs = append(refs, extentRef{&bl.Ext, bl.Size})
			}
		}
		for i := range b.Pages {
			p := &b.Pages[i]
			refs = append(refs, extentRef{&p.Ext, p.ExtOff + p.Len})
		}
		return kind, b, refs, nil
	case BlockRecord:
		sb := &staged{}
		if _, err := decodeRecord(v, sb); err != nil {
			return kind, nil, nil, err
		}
		return kind, sb, []extentRef{{&sb.Ext, sb.Size}}, nil
	}
	return kind, nil, nil, nil
}

// RewriteExtents returns the stored record v of key k with every extent id it names replaced
// by m's answer, and the record's kind. m is called once for each place an id is named (an
// id shared by blocks, snapshots or copies is asked for again each time), with the number of
// bytes of that extent the record reads from its start, so that a caller can refuse an
// extent too short for it. A record that names no extent comes back as it is (the same
// slice). m's error is returned as it is.
func RewriteExtents(k, v []byte, m func(id uint64, need int64) (uint64, error)) ([]byte, RecordKind, error) {
	kind, rec, refs, err := decodeRefs(k, v)
	if err != nil || len(refs) == 0 {
		return v, kind, err
	}
	for _, r := range refs {
		if *r.id, err = m(*r.id, r.need); err != nil {
			return nil, kind, err
		}
	}
	switch rec := rec.(type) {
	case *Blob:
		return rec.encode(), kind, nil
	default:
		return encodeRecord(rec, nil), kind, nil
	}
}
