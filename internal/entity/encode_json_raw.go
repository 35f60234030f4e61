package entity

import "unsafe"

// AppendJSONRaw appends the JSON object of a stored entity straight from its binary form:
// the same bytes as AppendJSON(dst, DecodeBinary(...), o), without building an Entity. It
// allocates nothing beyond growing dst (names and values are read in place).
//
// A corrupt entity yields an error wrapping ErrCorrupt (exactly when DecodeBinary would
// fail) and dst unchanged.
func AppendJSONRaw(dst []byte, r Raw, o EncodeOptions) ([]byte, error) {
	if r.element != nil && o.Level == MinimalMetadata && o.Metadata == "" && o.Select == nil {
		// Minimal metadata without odata.metadata reads nothing else of o.
		return append(dst, r.element...), nil
	}
	props, ts, err := newRawProps(r.b)
	if err != nil {
		return dst, err
	}
	w := beginObject(dst, r.pk, r.rk, ts, o)
	if o.Select == nil {
		for name, v, ok := props.next(); ok; name, v, ok = props.next() {
			w.property(name, v, o.Level)
		}
		if props.err != nil {
			return dst, props.err
		}
		return append(w.b, '}'), nil
	}
	// Validate the whole entity first, so that a corrupt one fails here as it would in
	// DecodeBinary instead of rendering whatever precedes the damage.
	for _, _, ok := props.next(); ok; _, _, ok = props.next() {
	}
	if props.err != nil {
		return dst, props.err
	}
	for _, name := range o.Select {
		if !IsSystemProperty(name) {
			v, ok := r.View(name)
			w.selected(name, v, ok, o.Level)
		}
	}
	return append(w.b, '}'), nil
}

// rawProps walks the custom properties of a stored entity in stored order without copying:
// names and String, Guid and Binary values alias the buffer. It checks everything
// DecodeBinary checks, trailing bytes included.
type rawProps struct {
	rd   reader
	left int
	err  error
}

func newRawProps(b []byte) (rawProps, int64, error) {
	p := rawProps{rd: reader{b: b}}
	ts, count, err := p.rd.header()
	p.left = count
	return p, ts, err
}

// next returns the next property; at the end or on corruption it returns ok false, with err
// set for corruption.
func (p *rawProps) next() (name string, v Value, ok bool) {
	if p.err != nil {
		return "", Value{}, false
	}
	if p.left == 0 {
		if p.rd.i != len(p.rd.b) {
			p.err = p.rd.fail("trailing bytes")
		}
		return "", Value{}, false
	}
	s, e, ok := p.rd.bytes()
	if !ok {
		p.err = p.rd.fail("property name")
		return "", Value{}, false
	}
	if v, ok = p.rd.value("", 0, true); !ok {
		p.err = p.rd.fail("property value")
		return "", Value{}, false
	}
	p.left--
	if s < e {
		name = unsafe.String(&p.rd.b[s], e-s)
	}
	return name, v, true
}
