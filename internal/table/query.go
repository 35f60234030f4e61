package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/query"
	"github.com/tablo/tablo/internal/store"
)

// MaxPageSize is Azure's limit on entities (and tables) per query response.
const MaxPageSize = 1000

// Query selects entities for Query Entities.
type Query struct {
	Filter *query.Filter
	// Top is the page size (0 = 1,000).
	Top int
	// NextPartitionKey/NextRowKey resume a previous page (inclusive); HasNext says they are set.
	HasNext          bool
	NextPartitionKey string
	NextRowKey       string
	// Bounds, when set, restrict the query to a key range (e.g. a SAS's range); entities
	// outside it are never visited.
	Bounds *KeyBounds
	// ElementJSON says the visitor writes each entity with entity.ElementOptions(): the
	// column cache may then keep that JSON and hand it back with later matches (Raw's
	// WithElementJSON). Other forms would never use it, so it is not kept for them.
	ElementJSON bool
}

// KeyBounds is an inclusive (PartitionKey, RowKey) range; a nil end is unbounded.
type KeyBounds struct {
	Start, End *Bound
}

// Bound is one inclusive end of a key range; without a RowKey it covers the whole partition.
type Bound struct {
	PartitionKey string
	RowKey       string
	HasRowKey    bool
}

// Continuation names the first entity not yet returned.
type Continuation struct {
	PartitionKey string
	RowKey       string
}

// PageInfo describes how a page was produced (for the x-tablo-query-plan header and logs).
type PageInfo struct {
	Plan     string
	Scanned  int
	Returned int
	// Next is set when more entities may follow.
	Next *Continuation
}

// maxLookahead bounds how many entities a full page scans in search of the next match.
const maxLookahead = 1000

// errStopScan ends a scan early; it never leaves this package.
var errStopScan = errors.New("table: stop scan")

// QueryEntities runs one page of a query. visit receives each matching entity in key
// order, still in its stored form (entity.AppendJSONRaw writes it as JSON, Raw.Decode
// copies it out); it returns false to end the page early (e.g. a response byte budget), in
// which case the continuation points just after that entity, or an error to abort the
// query. The page also ends after Top (or 1,000) entities or when the time budget is spent;
// then Next is set only if another entity may follow.
//
// The Raw passed to visit, keys included, aliases scan buffers: it is valid only during the
// call. That is what lets a page go from storage to JSON without allocating per entity.
func (s *Service) QueryEntities(ctx context.Context, account, tableName string, q Query, visit func(r entity.Raw) (bool, error)) (PageInfo, error) {
	t, err := s.lookupTable(ctx, account, tableName)
	if err != nil {
		return PageInfo{}, err
	}
	limit := q.Top
	if limit <= 0 || limit > MaxPageSize {
		limit = MaxPageSize
	}
	plan := query.PlanQuery(q.Filter)
	spans := plan.Spans(t.ID)
	spans = clipSpans(spans, q.Bounds.spanOf(t.ID))
	if q.HasNext {
		resume := keys.Entity(t.ID, q.NextPartitionKey, q.NextRowKey)
		spans = clipSpans(spans, query.Span{Start: resume, End: keys.TableEnd(t.ID)})
	}
	info := PageInfo{Plan: plan.String()}
	deadline := time.Now().Add(s.budget)
	stopAt := func(k []byte) error {
		_, pk, rk, err := keys.DecodeEntity(k)
		if err != nil {
			return err
		}
		info.Next = &Continuation{PartitionKey: pk, RowKey: rk}
		return errStopScan
	}
	// An entity in the spans matches the filter iff it satisfies the plan's residual.
	residual := plan.Residual
	if props := cacheableFilter(plan); props != nil && s.cols != nil {
		served, err := s.queryColumns(ctx, t.ID, spans, residual, props, limit, q.ElementJSON, deadline, visit, &info)
		s.countColumnPage(served)
		if served {
			if errors.Is(err, errStopScan) {
				err = nil
			}
			return info, err
		}
		// Not cached: scan the store, and let the cache weigh building the columns.
		defer func() { s.cols.NoteScan(t.ID, props, info.Scanned) }()
	}
	var afterLast []byte // key following the last visited entity, when visit asked to stop
	lookahead := 0       // entities scanned after the page filled up
	row := &scanRow{}    // reused for every entity: filtering allocates nothing per entity
	for _, sp := range spans {
		scan := s.st.Scan
		if residual == nil {
			// Every entity scanned is returned, or ends the page: the page reads at most
			// limit+1 of them (the one past the page says where the next begins), so the
			// engine need read no more (store.ScanLimit).
			left := limit + 1 - info.Scanned
			scan = func(ctx context.Context, start, end []byte, fn func(k, v []byte) (bool, error)) error {
				return store.ScanLimit(ctx, s.st, start, end, left, fn)
			}
		}
		err := scan(ctx, sp.Start, sp.End, func(k, v []byte) (bool, error) {
			if afterLast != nil {
				// visit ended the page: the next existing key is where to resume.
				return false, stopAt(k)
			}
			if info.Scanned&63 == 63 {
				if err := ctx.Err(); err != nil {
					return false, err
				}
				if time.Now().After(deadline) {
					return false, stopAt(k)
				}
			}
			info.Scanned++
			if info.Returned == limit {
				// The page is full; look a little further for another match so that the last
				// page carries no continuation, but never scan on unboundedly for a
				// selective filter: then resume here (the next page may come back empty).
				lookahead++
				if lookahead > maxLookahead {
					return false, stopAt(k)
				}
			}
			raw, err := entity.NewRaw(v, "", "")
			if err != nil {
				return false, err
			}
			// Keys are decoded only if the filter reads them or the entity is returned.
			row.reset(k, raw)
			if residual != nil && !residual.Eval(row) {
				return true, nil
			}
			if info.Returned == limit {
				return false, stopAt(k)
			}
			pk, rk, err := row.keys()
			if err != nil {
				return false, err
			}
			info.Returned++
			more, err := visit(raw.WithKeys(pk, rk))
			if err != nil {
				return false, err
			}
			if !more {
				afterLast = append(bytes.Clone(k), 0)
			}
			return true, nil
		})
		if errors.Is(err, errStopScan) {
			return info, nil
		}
		if err != nil {
			return info, fmt.Errorf("table: query %s: %w", tableName, err)
		}
		if err := ctx.Err(); err != nil {
			return info, err
		}
	}
	return info, nil
}

// scanRow is what a filter reads during a scan: the stored entity through its lazy reader,
// with PartitionKey and RowKey decoded from the key only when asked for. It is reused for
// every entity of a scan and is valid only inside the Scan callback that filled it.
type scanRow struct {
	key     []byte
	raw     entity.Raw
	decoded bool
	pk, rk  string // alias keyBuf
	err     error
	keyBuf  []byte
}

// reset points the row at the next scanned entity.
func (r *scanRow) reset(key []byte, raw entity.Raw) {
	r.key, r.raw, r.decoded = key, raw, false
}

// keys decodes the entity's keys once. They alias a buffer the next entity reuses, so that
// a scan allocates nothing per entity for them.
func (r *scanRow) keys() (pk, rk string, err error) {
	if !r.decoded {
		r.decoded = true
		r.pk, r.rk, r.keyBuf, r.err = decodeEntityKey(r.keyBuf[:0], r.key)
	}
	return r.pk, r.rk, r.err
}

// Get implements query.Getter. A corrupt key reads as missing keys (the entity is then
// rejected by any key comparison, and returning it reports the corruption).
func (r *scanRow) Get(name string) (entity.Value, bool) {
	switch name {
	case "PartitionKey", "RowKey":
		pk, rk, err := r.keys()
		if err != nil {
			return entity.Value{}, false
		}
		if name == "PartitionKey" {
			return entity.StringValue(pk), true
		}
		return entity.StringValue(rk), true
	}
	return r.raw.View(name) // compared in place, never retained by the filter
}

// decodeEntityKey is keys.DecodeEntity without allocating: it decodes the keys of an entity
// key into buf (grown if needed and returned for reuse) and returns strings aliasing it. The
// caller's scan span guarantees the key's prefix and table id, so only the two encoded
// strings are checked.
func decodeEntityKey(buf, key []byte) (pk, rk string, _ []byte, err error) {
	const header = 1 + 8 // prefix byte, table id
	if len(key) < header {
		return "", "", buf, keys.ErrCorrupt
	}
	// Decoding never lengthens a string, so one buffer of len(key) holds both keys and is
	// never reallocated between them.
	if cap(buf) < len(key) {
		buf = make([]byte, 0, 2*len(key))
	}
	buf, rest, err := keys.AppendDecodedString(buf[:0], key[header:])
	n := len(buf)
	if err == nil {
		buf, rest, err = keys.AppendDecodedString(buf, rest)
	}
	if err != nil || len(rest) != 0 {
		return "", "", buf, keys.ErrCorrupt
	}
	return unsafe.String(unsafe.SliceData(buf), n), unsafe.String(unsafe.SliceData(buf[n:]), len(buf)-n), buf, nil
}

// clipSpans intersects every span with r, dropping empty results.
func clipSpans(spans []query.Span, r query.Span) []query.Span {
	out := spans[:0:0]
	for _, sp := range spans {
		start, end := sp.Start, sp.End
		if bytes.Compare(r.Start, start) > 0 {
			start = r.Start
		}
		if r.End != nil && (end == nil || bytes.Compare(r.End, end) < 0) {
			end = r.End
		}
		if end == nil || bytes.Compare(start, end) < 0 {
			out = append(out, query.Span{Start: start, End: end})
		}
	}
	return out
}

// spanOf converts bounds to a key span of the table (the whole table when b is nil).
func (b *KeyBounds) spanOf(tableID uint64) query.Span {
	sp := query.Span{Start: keys.TablePrefix(tableID), End: keys.TableEnd(tableID)}
	if b == nil {
		return sp
	}
	if b.Start != nil {
		sp.Start = keys.PartitionPrefix(tableID, b.Start.PartitionKey)
		if b.Start.HasRowKey {
			sp.Start = keys.Entity(tableID, b.Start.PartitionKey, b.Start.RowKey)
		}
	}
	if b.End != nil {
		sp.End = keys.PrefixEnd(keys.PartitionPrefix(tableID, b.End.PartitionKey))
		if b.End.HasRowKey {
			sp.End = append(keys.Entity(tableID, b.End.PartitionKey, b.End.RowKey), 0)
		}
	}
	return sp
}
