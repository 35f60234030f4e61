package entity

import (
	"encoding/binary"
	"strings"
)

// Raw is a stored entity read lazily: Get decodes only the property asked for, so a filter
// that touches two properties of a wide entity skips the rest. It answers the same names as
// Entity.Get, including PartitionKey, RowKey and Timestamp.
//
// Raw refers to its buffer (and its key strings) without copying them; it is valid only while
// they are (inside a store Scan callback, for instance). Values returned by Get and the
// Entity returned by Decode are copies and stay valid.
type Raw struct {
	b      []byte
	pk, rk string
	// element, when set, is this entity's JSON as a collection element at minimal metadata
	// (see WithElementJSON): AppendJSONRaw copies it instead of encoding again.
	element []byte
}

// NewRaw wraps a stored entity value and its keys. It checks only the header; corruption
// further in makes Get report the property as missing and Decode return an error.
func NewRaw(b []byte, pk, rk string) (Raw, error) {
	r := reader{b: b}
	if _, _, err := r.header(); err != nil {
		return Raw{}, err
	}
	return Raw{b: b, pk: pk, rk: rk}, nil
}

// WithKeys returns r with its keys set (a scan decodes them only for entities it returns),
// without the JSON WithElementJSON attached: it was written with the old keys.
func (r Raw) WithKeys(pk, rk string) Raw {
	r.pk, r.rk, r.element = pk, rk, nil
	return r
}

// ElementOptions returns the encode options of an entity in a query response at minimal
// metadata with every property (no $select): the one form WithElementJSON can carry.
func ElementOptions() EncodeOptions { return EncodeOptions{Level: MinimalMetadata} }

// WithElementJSON returns r carrying json, which must be exactly what AppendJSONRaw writes
// for r (keys included) with ElementOptions: a cache of encoded matches passes it so that
// AppendJSONRaw with those options copies it instead of encoding the entity again. json is
// referenced, not copied: it must stay valid as long as r.
func (r Raw) WithElementJSON(json []byte) Raw {
	r.element = json
	return r
}

// PartitionKey returns the entity's PartitionKey.
func (r Raw) PartitionKey() string { return r.pk }

// RowKey returns the entity's RowKey.
func (r Raw) RowKey() string { return r.rk }

// Timestamp returns the entity's Timestamp ticks (0 for a Raw that NewRaw did not return).
func (r Raw) Timestamp() int64 {
	if len(r.b) < headerSize {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(r.b[1:9]))
}

// Get returns the named property like Entity.Get; the value is a copy.
func (r Raw) Get(name string) (Value, bool) { return r.get(name, false) }

// View is Get without copying: String, Guid and Binary values alias the Raw's buffer and are
// valid only as long as it is. Filters use it to compare values in place during a scan,
// without an allocation per entity.
func (r Raw) View(name string) (Value, bool) { return r.get(name, true) }

func (r Raw) get(name string, borrow bool) (Value, bool) {
	switch name {
	case "PartitionKey":
		return StringValue(r.pk), true
	case "RowKey":
		return StringValue(r.rk), true
	case "Timestamp":
		return DateTimeValue(r.Timestamp()), true
	}
	rd := reader{b: r.b}
	_, count, err := rd.header()
	if err != nil {
		return Value{}, false
	}
	for range count {
		s, e, ok := rd.bytes()
		if !ok {
			return Value{}, false
		}
		if string(rd.b[s:e]) == name {
			return rd.value("", 0, borrow)
		}
		if !rd.skipValue() {
			return Value{}, false
		}
	}
	return Value{}, false
}

// Decode fully decodes the entity (see DecodeBinary). The keys are copied too: a scan may
// pass keys that alias a reused buffer.
func (r Raw) Decode() (*Entity, error) {
	return DecodeBinary(r.b, strings.Clone(r.pk), strings.Clone(r.rk))
}
