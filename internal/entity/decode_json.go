package entity

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tablo/tablo/internal/azerr"
)

// KeyPresence tells which key members a request body carried with a non-null value. Insert
// and upsert need both; update and merge take their keys from the URL.
type KeyPresence struct {
	PartitionKey bool
	RowKey       bool
}

// Require returns PropertiesNeedValue unless both keys were present.
func (k KeyPresence) Require() error {
	if !k.PartitionKey || !k.RowKey {
		return azerr.New(azerr.PropertiesNeedValue)
	}
	return nil
}

const typeAnnotationSuffix = "@odata.type"

// DecodeJSON parses an entity request body (Insert, Update, Merge, Upsert, or a batch
// sub-request). It enforces every rule that one body can violate: JSON syntax, duplicate
// members, annotations and value types, key and property-name rules, value sizes and the
// whole-entity limits. All errors are *azerr.Error. Timestamp and odata.* members are
// ignored and null members dropped; the returned Timestamp is 0 (the service sets it).
//
// The returned entity's strings may share one copy of body; body itself is not retained.
func DecodeJSON(body []byte) (*Entity, KeyPresence, error) {
	return DecodeJSONString(string(body))
}

// DecodeJSONString is DecodeJSON for a body the caller already holds as a string (a batch
// sub-request, sliced from the parser's copy of its part), sparing the copy. The returned
// entity's strings may be substrings of body, so retaining the entity retains body.
func DecodeJSONString(body string) (*Entity, KeyPresence, error) {
	var keys KeyPresence
	body = strings.TrimPrefix(body, "\uFEFF") // UTF-8 byte order mark
	if !utf8.ValidString(body) {
		return nil, keys, azerr.New(azerr.InvalidInput)
	}
	var buf [32]member
	members, ok := scanObject(body, buf[:0])
	if !ok {
		return nil, keys, azerr.New(azerr.InvalidInput)
	}
	if err := linkMembers(members); err != nil {
		return nil, keys, err
	}

	// Classify the members once; count the properties to size Props exactly.
	n := 0
	for i := range members {
		m := &members[i]
		switch {
		case m.name == "PartitionKey":
			m.role = rolePartitionKey
		case m.name == "RowKey":
			m.role = roleRowKey
		case m.name == "Timestamp", isAnnotationName(m.name):
			m.role = roleIgnored
		case m.kind != kindNull:
			n++
		}
	}
	e := &Entity{Props: make([]Property, min(n, MaxCustomProperties+1))}
	k := 0 // properties decoded into e.Props so far
	for i := range members {
		m := &members[i]
		switch m.role {
		case rolePartitionKey:
			if err := decodeKey(m, &e.PartitionKey, &keys.PartitionKey); err != nil {
				return nil, keys, err
			}
			continue
		case roleRowKey:
			if err := decodeKey(m, &e.RowKey, &keys.RowKey); err != nil {
				return nil, keys, err
			}
			continue
		case roleIgnored:
			continue
		}
		if err := ValidatePropertyName(m.name); err != nil {
			return nil, keys, err
		}
		if m.kind == kindNull {
			continue
		}
		p := &e.Props[k] // decoded in place: Value is large
		if err := decodeValue(m, &p.Value); err != nil {
			return nil, keys, err
		}
		if k == MaxCustomProperties {
			return nil, keys, azerr.New(azerr.TooManyProperties)
		}
		p.Name = m.name
		k++
	}
	e.Props = e.Props[:k]
	// The loop above already caps the property count. Size counts UTF-16 units, at most one
	// per byte, so it cannot exceed maxSize(…) for this body: only a body that could be too
	// large pays for the exact count.
	if maxSize(len(body), len(members)) > MaxEntitySize {
		if err := CheckLimits(e); err != nil {
			return nil, keys, err
		}
	}
	return e, keys, nil
}

// maxSize bounds Size of any entity decoded from a body of n bytes with m members: each
// member adds at most 8 bytes of overhead and 20 of fixed-size value or string header, and
// every name or string value byte at most 2 (a UTF-16 unit per byte; escapes only shrink).
func maxSize(n, m int) int { return 4 + 28*m + 2*n }

// isAnnotationName reports members that are OData annotations rather than properties:
// "odata.*" on the entity and "X@odata.*" on a property.
func isAnnotationName(name string) bool {
	if strings.HasPrefix(name, "odata.") {
		return true
	}
	if i := strings.IndexByte(name, '@'); i >= 0 {
		return strings.HasPrefix(name[i+1:], "odata.")
	}
	return false
}

// linkMembers rejects duplicate member names and attaches every "X@odata.type" annotation
// to the member X (in either order). Small bodies use quadratic scans, large ones a map, so
// hostile bodies with many members stay linear.
func linkMembers(members []member) error {
	const mapThreshold = 32
	var index map[string]int
	if len(members) > mapThreshold {
		index = make(map[string]int, len(members))
		for i := range members {
			if _, dup := index[members[i].name]; dup {
				return azerr.New(azerr.DuplicatePropertiesSpecified)
			}
			index[members[i].name] = i
		}
	} else {
		for i := 1; i < len(members); i++ {
			for j := range i {
				if members[i].name == members[j].name {
					return azerr.New(azerr.DuplicatePropertiesSpecified)
				}
			}
		}
	}
	for i := range members {
		a := &members[i]
		target, ok := strings.CutSuffix(a.name, typeAnnotationSuffix)
		if !ok || a.kind == kindNull {
			continue
		}
		if a.kind != kindString {
			return azerr.New(azerr.InvalidInput)
		}
		t, ok := ParseType(a.str())
		if !ok {
			return azerr.New(azerr.InvalidInput)
		}
		j := -1
		if index != nil {
			if k, found := index[target]; found {
				j = k
			}
		} else {
			for k := range members {
				if members[k].name == target {
					j = k
					break
				}
			}
		}
		if j >= 0 { // an annotation without its value is ignored
			members[j].ann = t
		}
	}
	return nil
}

// decodeKey reads a PartitionKey or RowKey member: a string (an Edm.String annotation is
// allowed), or null meaning absent.
func decodeKey(m *member, dst *string, present *bool) error {
	if m.ann != 0 && m.ann != String {
		return azerr.New(azerr.InvalidInput)
	}
	switch m.kind {
	case kindNull:
		return nil
	case kindString:
	default:
		return azerr.New(azerr.InvalidInput)
	}
	v := m.str()
	if err := ValidateKey(m.name, v); err != nil {
		return err
	}
	*dst, *present = v, true
	return nil
}

// invalidInput is the error for malformed JSON and for values that do not match their type.
func invalidInput() error { return azerr.New(azerr.InvalidInput) }

// decodeValue converts a non-null property member to a Value per its annotation (or the
// un-annotated inference rules), stored into *v, and checks its size. *v must be the zero
// Value: only the fields of the decoded type are set, which spares copying a whole Value
// (it is large) into the entity's Props.
func decodeValue(m *member, v *Value) error {
	t := m.ann
	if t == 0 {
		switch m.kind {
		case kindString:
			t = String
		case kindTrue, kindFalse:
			t = Boolean
		case kindNumber:
			if m.integral {
				t = Int32
			} else {
				t = Double
			}
		default:
			return invalidInput()
		}
	}
	switch t {
	case String:
		if m.kind != kindString {
			return invalidInput()
		}
		v.Type, v.S = String, m.str()
		return ValidateValue(*v)
	case Boolean:
		switch {
		case m.kind == kindTrue:
			v.I = 1
		case m.kind == kindFalse:
		// Azure also takes the annotated value as a string, in any case (az CLI sends
		// "Flag":"false" with an Edm.Boolean annotation).
		case m.kind == kindString && strings.EqualFold(m.str(), "true"):
			v.I = 1
		case m.kind == kindString && strings.EqualFold(m.str(), "false"):
		default:
			return invalidInput()
		}
		v.Type = Boolean
		return nil
	case Int32:
		var text string
		switch {
		case m.kind == kindNumber && m.integral:
			text = m.raw
		case m.kind == kindString: // annotated, as Azure accepts it ("N":"32")
			text = m.str()
		default:
			return invalidInput()
		}
		i, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			return invalidInput()
		}
		v.Type, v.I = Int32, i
		return nil
	case Int64:
		var text string
		switch {
		case m.kind == kindString:
			text = m.str()
		case m.kind == kindNumber && m.integral:
			text = m.raw
		default:
			return invalidInput()
		}
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return invalidInput()
		}
		v.Type, v.I = Int64, i
		return nil
	case Double:
		f, err := decodeDouble(m)
		if err != nil {
			return err
		}
		v.Type, v.F = Double, f
		return nil
	case DateTime:
		if m.kind != kindString {
			return invalidInput()
		}
		ticks, p, status := parseDateTime(m.str())
		switch status {
		case dateTimeSyntax:
			return invalidInput()
		case dateTimeRange:
			return azerr.Newf(azerr.OutOfRangeInput, "The '%s' parameter of value '%s' is out of range.", m.name, p.text())
		}
		v.Type, v.I = DateTime, ticks
		return nil
	case Guid:
		if m.kind != kindString {
			return invalidInput()
		}
		g, ok := canonicalGuid(m.str())
		if !ok {
			return invalidInput()
		}
		v.Type, v.S = Guid, g
		return nil
	case Binary:
		if m.kind != kindString {
			return invalidInput()
		}
		s := m.str()
		if base64.StdEncoding.DecodedLen(len(s)) > MaxBinaryLength+3 {
			return azerr.New(azerr.PropertyValueTooLarge)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return invalidInput()
		}
		v.Type, v.B = Binary, b
		return ValidateValue(*v)
	}
	return invalidInput()
}

// decodeDouble accepts a JSON number, or a string holding a JSON number or one of "NaN",
// "Infinity", "-Infinity" (annotated Doubles from Python and JS). Overflow is rejected.
func decodeDouble(m *member) (float64, error) {
	var text string
	switch m.kind {
	case kindNumber:
		text = m.raw
	case kindString:
		text = m.str()
		switch text {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		sc := scanner{s: text}
		if _, _, ok := sc.scanNumber(); !ok || sc.i != len(text) {
			return 0, invalidInput()
		}
	default:
		return 0, invalidInput()
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, invalidInput()
	}
	return f, nil
}

// canonicalGuid accepts xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx in any case and returns it in
// lower case.
func canonicalGuid(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	upper := false
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", false
			}
			continue
		}
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			upper = true
		default:
			return "", false
		}
	}
	if upper {
		s = strings.ToLower(s)
	}
	return s, true
}
