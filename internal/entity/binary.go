package entity

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// Storage encoding of an entity (the engine value; the keys live in the engine key):
//
//	version byte (1) | Timestamp ticks int64 LE (8) | uvarint property count |
//	property*: uvarint len(name) | name | type byte | payload
//
// payload by type: Boolean 1 byte (0/1); Int32 4 bytes LE; Int64, DateTime 8 bytes LE
// (two's complement); Double 8 bytes LE (IEEE-754 bits, so NaN payloads and -0 survive);
// String, Guid, Binary uvarint length + bytes. Every payload is self-delimiting, so a reader
// can skip a property without decoding it (Raw).

const (
	binaryVersion = 1
	headerSize    = 1 + 8
)

// ErrCorrupt reports a stored entity this package did not produce. It is a server fault, not
// a client error (azerr.From turns it into InternalError).
var ErrCorrupt = errors.New("entity: corrupt stored entity")

// AppendBinary appends the storage encoding of e (without its keys) to dst, growing dst at
// most once.
func AppendBinary(dst []byte, e *Entity) []byte {
	dst = slices.Grow(dst, binarySize(e))
	dst = append(dst, binaryVersion)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(e.Timestamp))
	dst = binary.AppendUvarint(dst, uint64(len(e.Props)))
	for i := range e.Props {
		p := &e.Props[i]
		dst = binary.AppendUvarint(dst, uint64(len(p.Name)))
		dst = append(dst, p.Name...)
		dst = append(dst, byte(p.Value.Type))
		dst = appendPayload(dst, p.Value)
	}
	return dst
}

// binarySize is the length of e's storage encoding.
func binarySize(e *Entity) int {
	n := headerSize + uvarintLen(uint64(len(e.Props)))
	for i := range e.Props {
		p := &e.Props[i]
		n += uvarintLen(uint64(len(p.Name))) + len(p.Name) + 1
		switch v := &p.Value; v.Type {
		case Boolean:
			n++
		case Int32:
			n += 4
		case Int64, DateTime, Double:
			n += 8
		case String, Guid:
			n += uvarintLen(uint64(len(v.S))) + len(v.S)
		case Binary:
			n += uvarintLen(uint64(len(v.B))) + len(v.B)
		}
	}
	return n
}

// uvarintLen is the length of binary.AppendUvarint's encoding of x.
func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

func appendPayload(dst []byte, v Value) []byte {
	switch v.Type {
	case Boolean:
		if v.Bool() {
			return append(dst, 1)
		}
		return append(dst, 0)
	case Int32:
		return binary.LittleEndian.AppendUint32(dst, uint32(int32(v.I)))
	case Int64, DateTime:
		return binary.LittleEndian.AppendUint64(dst, uint64(v.I))
	case Double:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.F))
	case String, Guid:
		dst = binary.AppendUvarint(dst, uint64(len(v.S)))
		return append(dst, v.S...)
	case Binary:
		dst = binary.AppendUvarint(dst, uint64(len(v.B)))
		return append(dst, v.B...)
	}
	return dst // invalid type: the reader rejects the record
}

// DecodeBinary decodes a stored entity and attaches its keys. It copies everything it keeps
// (b may be reused by the caller) and returns an error wrapping ErrCorrupt, never a panic,
// for malformed input.
func DecodeBinary(b []byte, pk, rk string) (*Entity, error) {
	r := reader{b: b}
	ts, count, err := r.header()
	if err != nil {
		return nil, err
	}
	// One string holds every name and string payload of the entity: a single copy instead
	// of one allocation per property.
	arena := string(b[r.i:])
	base := r.i
	e := &Entity{PartitionKey: pk, RowKey: rk, Timestamp: ts, Props: make([]Property, 0, count)}
	for range count {
		ns, ne, ok := r.bytes()
		if !ok {
			return nil, r.fail("property name")
		}
		v, ok := r.value(arena, base, false)
		if !ok {
			return nil, r.fail("property value")
		}
		e.Props = append(e.Props, Property{Name: arena[ns-base : ne-base], Value: v})
	}
	if r.i != len(b) {
		return nil, r.fail("trailing bytes")
	}
	return e, nil
}

// reader walks a stored entity. Every method bounds-checks and reports failure instead of
// panicking.
type reader struct {
	b []byte
	i int
}

func (r *reader) fail(what string) error {
	return fmt.Errorf("%w: bad %s at offset %d", ErrCorrupt, what, r.i)
}

// header reads the version, Timestamp and property count.
func (r *reader) header() (ts int64, count int, err error) {
	if len(r.b) < headerSize || r.b[0] != binaryVersion {
		return 0, 0, r.fail("header")
	}
	ts = int64(binary.LittleEndian.Uint64(r.b[1:9]))
	r.i = headerSize
	n, ok := r.uvarint()
	// Each property takes at least 3 bytes, which bounds a corrupt count's allocation.
	if !ok || n > uint64(len(r.b)-r.i)/3 {
		return 0, 0, r.fail("property count")
	}
	return ts, int(n), nil
}

func (r *reader) uvarint() (uint64, bool) {
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		return 0, false
	}
	r.i += n
	return v, true
}

// bytes reads a uvarint length and returns the [start, end) offsets of the bytes that follow.
func (r *reader) bytes() (start, end int, ok bool) {
	n, ok := r.uvarint()
	if !ok || n > uint64(len(r.b)-r.i) {
		return 0, 0, false
	}
	start = r.i
	r.i += int(n)
	return start, r.i, true
}

func (r *reader) fixed(n int) ([]byte, bool) {
	if len(r.b)-r.i < n {
		return nil, false
	}
	p := r.b[r.i : r.i+n]
	r.i += n
	return p, true
}

// value reads a type byte and payload. String payloads are taken from arena, a string copy
// of b starting at offset base; with an empty arena they are copied individually.
// value decodes one type byte and payload. Strings come from arena (when set) or are copied;
// with borrow, strings and binaries alias r.b instead (see Raw.View).
func (r *reader) value(arena string, base int, borrow bool) (Value, bool) {
	tb, ok := r.fixed(1)
	if !ok {
		return Value{}, false
	}
	t := Type(tb[0])
	switch t {
	case Boolean:
		p, ok := r.fixed(1)
		if !ok || p[0] > 1 {
			return Value{}, false
		}
		return BoolValue(p[0] == 1), true
	case Int32:
		p, ok := r.fixed(4)
		if !ok {
			return Value{}, false
		}
		return Int32Value(int32(binary.LittleEndian.Uint32(p))), true
	case Int64, DateTime, Double:
		p, ok := r.fixed(8)
		if !ok {
			return Value{}, false
		}
		u := binary.LittleEndian.Uint64(p)
		switch t {
		case Int64:
			return Int64Value(int64(u)), true
		case DateTime:
			return DateTimeValue(int64(u)), true
		}
		return DoubleValue(math.Float64frombits(u)), true
	case String, Guid:
		s, e, ok := r.bytes()
		if !ok {
			return Value{}, false
		}
		var str string
		switch {
		case s == e:
		case arena != "":
			str = arena[s-base : e-base]
		case borrow:
			str = unsafe.String(&r.b[s], e-s)
		default:
			str = string(r.b[s:e])
		}
		return Value{Type: t, S: str}, true
	case Binary:
		s, e, ok := r.bytes()
		if !ok {
			return Value{}, false
		}
		if borrow {
			return BinaryValue(r.b[s:e:e]), true
		}
		return BinaryValue(append([]byte(nil), r.b[s:e]...)), true
	}
	return Value{}, false
}

// skipValue skips a type byte and payload without decoding it.
func (r *reader) skipValue() bool {
	tb, ok := r.fixed(1)
	if !ok {
		return false
	}
	switch Type(tb[0]) {
	case Boolean:
		_, ok = r.fixed(1)
	case Int32:
		_, ok = r.fixed(4)
	case Int64, DateTime, Double:
		_, ok = r.fixed(8)
	case String, Guid, Binary:
		_, _, ok = r.bytes()
	default:
		ok = false
	}
	return ok
}
