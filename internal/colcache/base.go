package colcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/store"
)

// base is an immutable columnar copy of one table at one store snapshot: the entity keys
// (without the table's key prefix) in key order, and for each cached property a column.
// Its arrays are off-heap; refs counts the table's own reference plus open Views, and the
// memory is freed when it drops to zero.
type base struct {
	rows    int
	keys    buffer // concatenated key suffixes
	keyEnds buffer // uint32 per row: end offset of its key in keys
	ends    []uint32
	cols    []*column // sorted by name
	// values holds every row's stored entity when the whole table fits the budget (then a
	// page returns matches without reading the store); valEnds as keyEnds. Empty otherwise.
	values, valEnds buffer
	vends           []uint32
	hasValues       bool
	size            int64
	gen             Gen    // set when installed
	table           uint64 // set when installed
	// matched holds copies of rows that scans matched when values is empty (NoValues aside).
	matched *matchedRows
	// elements holds the response JSON of rows that scans returned (NoValues aside): see
	// View.Element.
	elements *matchedRows
	refs     atomic.Int64
}

// column holds one property of every row, dictionary-encoded: ids[row] is 0 when the row
// lacks the property, else an index into offs, and offs[id] is where the value starts in
// vals (type byte + payload, the storage encoding). Rows with equal values share an id
// while the dictionary is small, so a one-property filter is evaluated once per distinct
// value, not once per row.
type column struct {
	name string
	ids  []uint32
	offs []uint32
	vals []byte

	idBuf, offBuf, valBuf buffer
	dict                  map[string]uint32 // during the build only
}

// maxOffset is the most bytes of keys, of entities, or of one column's values a base can
// hold: its arrays hold uint32 offsets. Cache.maxOffset is this; tests lower it.
const maxOffset = 1<<32 - 1

// maxDict bounds the dictionary kept while building; past it, new values get their own id.
const maxDict = 1 << 16

// errTooBig ends a build that would exceed its memory budget.
var errTooBig = errors.New("colcache: table exceeds the cache budget")

// key returns row i's key suffix.
func (b *base) key(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.keys.b[start:b.ends[i]]
}

// search returns the first row whose key suffix is >= k.
func (b *base) value(i int) ([]byte, bool) {
	if !b.hasValues {
		if b.matched != nil {
			return b.matched.get(i)
		}
		return nil, false
	}
	start := uint32(0)
	if i > 0 {
		start = b.vends[i-1]
	}
	return b.values.b[start:b.vends[i]], true
}

// search returns the first row whose key suffix is >= k.
func (b *base) search(k []byte) int {
	return sort.Search(b.rows, func(i int) bool { return bytes.Compare(b.key(i), k) >= 0 })
}

func (b *base) column(name string) *column {
	i := sort.Search(len(b.cols), func(i int) bool { return b.cols[i].name >= name })
	if i < len(b.cols) && b.cols[i].name == name {
		return b.cols[i]
	}
	return nil
}

func (b *base) release() {
	if b.refs.Add(-1) == 0 {
		b.keys.free()
		b.keyEnds.free()
		b.values.free()
		b.valEnds.free()
		for _, c := range b.cols {
			c.idBuf.free()
			c.offBuf.free()
			c.valBuf.free()
		}
		if b.matched != nil {
			b.matched.free()
		}
		if b.elements != nil {
			b.elements.free()
		}
	}
}

// buildBase scans the table's entities in snap (keys in [start, end), start being the
// table's key prefix) and builds a base with the named properties (sorted, distinct), and
// with the entities themselves as long as everything fits in budget bytes and the entities
// in valuesBudget (0: never). It gives up with errTooBig once the base would exceed the
// budget even without them. Keys, entities and each column's values may take at most
// offsetLimit bytes each (maxOffset but in tests): past it the entities are dropped, and the
// base is refused for the others.
func buildBase(ctx context.Context, snap store.Snapshot, start, end []byte, props []string, budget, valuesBudget, offsetLimit int64) (*base, error) {
	b := &base{hasValues: valuesBudget > 0}
	b.refs.Store(1)
	for _, p := range props {
		b.cols = append(b.cols, &column{name: p, dict: map[string]uint32{}})
	}
	ok := false
	defer func() {
		if !ok {
			b.release()
		}
	}()
	// Every column's id 0 means "absent"; give it an offset so offs[id] indexes directly.
	for _, c := range b.cols {
		if err := c.offBuf.appendUint32(0); err != nil {
			return nil, err
		}
	}
	var scratch []byte
	found := make([][]byte, len(b.cols)) // this row's encoded values, nil when absent
	err := snap.Scan(ctx, start, end, func(k, v []byte) (bool, error) {
		if b.rows&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			if b.bytes() > budget {
				return false, errTooBig
			}
		}
		if err := b.keys.append(k[len(start):]); err != nil {
			return false, err
		}
		if err := b.keyEnds.appendUint32(uint32(len(b.keys.b))); err != nil {
			return false, err
		}
		// Growing maps the larger region before unmapping the old one, so check the budget
		// against the grown size: peak memory stays within budget plus the old region.
		grown := int64(0)
		if len(b.values.b)+len(v) > cap(b.values.b) {
			grown = int64(max(cap(b.values.b), len(v)))
		}
		if b.hasValues && (b.bytes()+grown+int64(len(v)) > budget || int64(len(b.values.b)+len(v)) > valuesBudget ||
			int64(len(b.values.b)+len(v)) > offsetLimit) {
			// The entities do not fit: keep keys and columns only; matches are read from
			// the store (and copied as matchedRows).
			b.hasValues = false
			b.values.free()
			b.valEnds.free()
		}
		if b.hasValues {
			if err := b.values.append(v); err != nil {
				return false, err
			}
			if err := b.valEnds.appendUint32(uint32(len(b.values.b))); err != nil {
				return false, err
			}
		}
		raw, err := entity.NewRaw(v, "", "")
		if err != nil {
			return false, err
		}
		// Collect the encoded values of the wanted properties in one pass over the entity.
		clear(found)
		for i, c := range b.cols {
			if c.name == "Timestamp" {
				scratch = entity.AppendValue(scratch[:0], entity.DateTimeValue(raw.Timestamp()))
				found[i] = scratch
			}
		}
		err = raw.EachValue(func(name, val []byte) bool {
			for i, c := range b.cols {
				if c.name == string(name) {
					found[i] = val
				}
			}
			return true
		})
		if err != nil {
			return false, err
		}
		for i, c := range b.cols {
			if err := c.add(found[i], offsetLimit); err != nil {
				return false, err
			}
		}
		b.rows++
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if b.bytes() > budget {
		return nil, errTooBig
	}
	if int64(len(b.keys.b)) > offsetLimit {
		return nil, fmt.Errorf("%w: keys exceed %d bytes", errTooBig, offsetLimit)
	}
	b.ends = b.keyEnds.uint32s()
	if b.hasValues {
		b.vends = b.valEnds.uint32s()
	}
	for _, c := range b.cols {
		c.ids, c.offs, c.vals, c.dict = c.idBuf.uint32s(), c.offBuf.uint32s(), c.valBuf.b, nil
	}
	b.size = b.bytes()
	ok = true
	return b, nil
}

// add appends one row's value (nil: the row lacks the property); the distinct values may
// take at most offsetLimit bytes.
func (c *column) add(val []byte, offsetLimit int64) error {
	if val == nil {
		return c.idBuf.appendUint32(0)
	}
	id, ok := c.dict[string(val)]
	if !ok {
		if int64(len(c.valBuf.b)+len(val)) > offsetLimit {
			return fmt.Errorf("%w: column %s exceeds %d bytes", errTooBig, c.name, offsetLimit)
		}
		id = uint32(len(c.offBuf.b) / 4)
		if err := c.offBuf.appendUint32(uint32(len(c.valBuf.b))); err != nil {
			return err
		}
		if err := c.valBuf.append(val); err != nil {
			return err
		}
		if len(c.dict) < maxDict {
			c.dict[string(val)] = id
		}
	}
	return c.idBuf.appendUint32(id)
}

// bytes is the memory the base holds (its buffers' capacity).
func (b *base) bytes() int64 {
	n := cap(b.keys.b) + cap(b.keyEnds.b) + cap(b.values.b) + cap(b.valEnds.b)
	for _, c := range b.cols {
		n += cap(c.idBuf.b) + cap(c.offBuf.b) + cap(c.valBuf.b)
	}
	return int64(n)
}
