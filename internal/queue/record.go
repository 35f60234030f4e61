package queue

import (
	"encoding/binary"
	"errors"
)

var errCorrupt = errors.New("queue: corrupt record")

// queueRecord is the catalog value of a queue.
type queueRecord struct {
	id   uint64
	name string
	md   []Meta
	// acl is the rendered SignedIdentifiers document (nil: no policies).
	acl []byte
}

func (r *queueRecord) encode() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 64), r.id)
	b = appendString(b, r.name)
	b = binary.AppendUvarint(b, uint64(len(r.md)))
	for _, m := range r.md {
		b = appendString(b, m.Name)
		b = appendString(b, m.Value)
	}
	return appendString(b, string(r.acl))
}

func decodeQueueRecord(b []byte) (*queueRecord, error) {
	if len(b) < 8 {
		return nil, errCorrupt
	}
	r := &queueRecord{id: binary.BigEndian.Uint64(b)}
	b = b[8:]
	var ok bool
	if r.name, b, ok = readString(b); !ok {
		return nil, errCorrupt
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errCorrupt
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		var m Meta
		if m.Name, b, ok = readString(b); !ok {
			return nil, errCorrupt
		}
		if m.Value, b, ok = readString(b); !ok {
			return nil, errCorrupt
		}
		r.md = append(r.md, m)
	}
	acl, _, ok := readString(b)
	if !ok {
		return nil, errCorrupt
	}
	if acl != "" {
		r.acl = []byte(acl)
	}
	return r, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func readString(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}

// message is a stored message. Times are Unix nanoseconds; expires is neverExpires for a
// message without expiry.
type message struct {
	seq       uint64
	inserted  int64
	expires   int64
	visibleAt int64
	dequeues  uint32
	receipt   uint64
	text      string
}

const messageHeader = 8 + 8 + 8 + 4 + 8

func (m *message) encode() []byte {
	b := make([]byte, messageHeader, messageHeader+len(m.text))
	binary.BigEndian.PutUint64(b, uint64(m.inserted))
	binary.BigEndian.PutUint64(b[8:], uint64(m.expires))
	binary.BigEndian.PutUint64(b[16:], uint64(m.visibleAt))
	binary.BigEndian.PutUint32(b[24:], m.dequeues)
	binary.BigEndian.PutUint64(b[28:], m.receipt)
	return append(b, m.text...)
}

func decodeMessage(seq uint64, b []byte) (*message, error) {
	if len(b) < messageHeader {
		return nil, errCorrupt
	}
	return &message{
		seq:       seq,
		inserted:  int64(binary.BigEndian.Uint64(b)),
		expires:   int64(binary.BigEndian.Uint64(b[8:])),
		visibleAt: int64(binary.BigEndian.Uint64(b[16:])),
		dequeues:  binary.BigEndian.Uint32(b[24:]),
		receipt:   binary.BigEndian.Uint64(b[28:]),
		text:      string(b[messageHeader:]),
	}, nil
}
