package entity

// Helpers for readers that keep property values in the storage encoding (the column cache):
// one value is its type byte followed by its payload, exactly as inside a stored entity.

// AppendValue appends v in the storage encoding of one property value.
func AppendValue(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.Type))
	return appendPayload(dst, v)
}

// ViewValue decodes one value in the storage encoding (as AppendValue writes it or
// Raw.EachValue passes it). String, Guid and Binary values alias b.
func ViewValue(b []byte) (Value, bool) {
	r := reader{b: b}
	return r.value("", 0, true)
}

// EachValue calls fn with the name and encoded value of each stored property in storage
// order (Timestamp and the keys are not stored properties), until fn returns false. Both
// slices alias r's buffer. It returns ErrCorrupt if the entity is malformed.
func (r Raw) EachValue(fn func(name, value []byte) bool) error {
	rd := reader{b: r.b}
	_, count, err := rd.header()
	if err != nil {
		return err
	}
	for range count {
		s, e, ok := rd.bytes()
		if !ok {
			return rd.fail("property name")
		}
		start := rd.i
		if !rd.skipValue() {
			return rd.fail("property value")
		}
		if !fn(rd.b[s:e], rd.b[start:rd.i]) {
			return nil
		}
	}
	return nil
}
