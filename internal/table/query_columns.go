package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tablo/tablo/internal/colcache"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/query"
	"github.com/tablo/tablo/internal/store"
)

// columnChunk is how many cached rows a page evaluates between checks of its deadline.
const columnChunk = 4096

// cacheableFilter returns the properties of a residual filter that the column cache can
// serve, or nil: the cache holds property values, not keys, so a residual that still reads
// PartitionKey or RowKey is evaluated on the store.
func cacheableFilter(plan *query.Plan) []string {
	if plan.Residual == nil || plan.Kind == query.Point || plan.Kind == query.Empty {
		return nil
	}
	props := plan.Residual.Properties()
	if slices.Contains(props, "PartitionKey") || slices.Contains(props, "RowKey") {
		return nil
	}
	return props
}

// maxBuildWait bounds how long a filtered scan waits for a column-cache build in progress.
const maxBuildWait = 250 * time.Millisecond

// queryColumns serves one page of a filtered scan from the column cache: the filter is
// evaluated over cached columns and only matching entities are read from a store snapshot.
// It returns false, having done nothing, when the cache does not hold the filter's
// properties. The page is the one a store scan of the same snapshot would produce: same
// entities, same Scanned count, same continuation.
func (s *Service) queryColumns(ctx context.Context, tableID uint64, spans []query.Span, residual *query.Filter, props []string,
	limit int, elementJSON bool, deadline time.Time, visit func(entity.Raw) (bool, error), info *PageInfo) (bool, error) {
	gen, ok := s.cols.Ready(tableID, props)
	// While a build of these columns runs, wait for it: a store scan of the table meanwhile
	// would cost as much CPU as the build itself. At most maxBuildWait (a 100 k-row table
	// builds in well under that) and half the page's time budget, so that a query on a
	// table whose build is slow is not delayed by much more than its own scan would take.
	if !ok && s.cols.AwaitBuild(ctx, tableID, props, time.Now().Add(min(time.Until(deadline)/2, maxBuildWait))) {
		gen, ok = s.cols.Ready(tableID, props)
	}
	if !ok {
		return false, nil // no snapshot for tables the cache does not hold
	}
	// Ready, then the snapshot, then the view of the same generation: every key written
	// between the base's snapshot and ours is then in the view's dirty set (package colcache).
	snap, err := s.st.Snapshot(ctx)
	if err != nil {
		return true, err
	}
	defer snap.Close()
	view := s.cols.View(tableID, props, gen)
	if view == nil {
		return false, nil // rebuilt or dropped meanwhile: this page scans the store
	}
	defer view.Release()
	info.Plan += " +columns"
	p := columnPage{view: view, limit: limit, elementJSON: elementJSON, visit: visit, info: info}
	m := view.Matcher(residual)
	// Loop steps since the clock and the context were last read: each step is a chunk without
	// a match, or one match.
	sinceCheck := 0
	for _, sp := range spans {
		lo, hi, dirty := view.Span(sp.Start, sp.End)
		i := lo
		for {
			// Base rows before the next written key hold their snapshot values.
			segEnd := hi
			if len(dirty) > 0 {
				segEnd = max(i, min(hi, view.Search([]byte(dirty[0]))))
			}
			for i < segEnd {
				if p.stopNext {
					return true, p.stop(view.Key(i))
				}
				// The clock and the context every 64 steps (at most 64 matches or 256 K rows
				// apart): read per match, they were 5% of a cached scan. The first read comes
				// after 63 steps of work, so that every page makes progress however small its
				// time budget (a store scan likewise reads them after 63 entities).
				if sinceCheck++; sinceCheck == 64 {
					sinceCheck = 0
					if err := ctx.Err(); err != nil {
						return true, err
					}
					if time.Now().After(deadline) {
						return true, p.stop(view.Key(i))
					}
				}
				n := min(segEnd-i, columnChunk)
				full := info.Returned == limit
				if full {
					if p.lookahead == maxLookahead {
						// As the store scan: it counts this entity as scanned, and resumes here.
						info.Scanned++
						return true, p.stop(view.Key(i))
					}
					n = min(n, maxLookahead-p.lookahead)
				}
				j := m.Next(i, i+n)
				skipped := j - i
				info.Scanned += skipped
				if full {
					p.lookahead += skipped
				}
				i = j
				if skipped == n {
					continue // no match in this chunk
				}
				info.Scanned++
				if full {
					return true, p.stop(view.Key(j))
				}
				key := p.fullKey(view.Key(j))
				v, cached := view.Value(j)
				if !cached {
					if v, err = snap.Lookup(key); err != nil {
						// Not found would mean the cache missed a write: fail loudly,
						// never return a wrong page.
						return true, fmt.Errorf("table: column cache row: %w", err)
					}
					view.Remember(j, v) // a clean row: the next scan reads it from memory
				}
				if err := p.emitBase(j, key, v); err != nil {
					return true, err
				}
				i = j + 1
			}
			if len(dirty) == 0 {
				break
			}
			d := []byte(dirty[0])
			dirty = dirty[1:]
			if i < hi && bytes.Equal(view.Key(i), d) {
				i++ // stale base row: the snapshot has the current value, if any
			}
			key := p.fullKey(d)
			v, err := snap.Lookup(key)
			if errors.Is(err, store.ErrNotFound) {
				continue
			} else if err != nil {
				return true, fmt.Errorf("table: query: %w", err)
			}
			if p.stopNext {
				return true, p.stop(d)
			}
			info.Scanned++
			full := info.Returned == limit
			if full {
				p.lookahead++
				if p.lookahead > maxLookahead {
					return true, p.stop(d)
				}
			}
			raw, err := entity.NewRaw(v, "", "")
			if err != nil {
				return true, err
			}
			p.row.reset(key, raw)
			if !residual.Eval(&p.row) {
				continue
			}
			if full {
				return true, p.stop(d)
			}
			if err := p.emit(key, v); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

// columnPage is the state of one page served from the column cache.
type columnPage struct {
	view      *colcache.View
	limit     int
	visit     func(entity.Raw) (bool, error)
	info      *PageInfo
	lookahead int
	stopNext  bool // visit ended the page: the next entity is where to resume
	keyBuf    []byte
	// elementJSON: the visitor writes the default form (Query.ElementJSON), so base rows'
	// JSON is kept in the view and reused.
	elementJSON bool
	jsonBuf     []byte
	row         scanRow
}

// fullKey returns the full key of a key suffix, in a buffer the next call reuses.
func (p *columnPage) fullKey(suffix []byte) []byte {
	p.keyBuf = p.view.AppendKey(p.keyBuf[:0], suffix)
	return p.keyBuf
}

// stop ends the page; the next page resumes at the entity with key suffix suffix.
func (p *columnPage) stop(suffix []byte) error {
	_, pk, rk, err := keys.DecodeEntity(p.view.AppendKey(nil, suffix))
	if err != nil {
		return err
	}
	p.info.Next = &Continuation{PartitionKey: pk, RowKey: rk}
	return errStopScan
}

// emit returns one matching entity (key: its full key; v: its stored value).
func (p *columnPage) emit(key, v []byte) error {
	raw, err := p.raw(key, v)
	if err != nil {
		return err
	}
	return p.return1(raw)
}

// emitBase returns matching base row j, which was not written since the base's snapshot, with
// its response JSON in the form the server writes by default (entity.ElementOptions): the
// view keeps that JSON the first time, and later pages copy it instead of encoding the
// entity. It is exact for the same reason as the row's value is: every reader of this base
// sees that value for row j, and the JSON is a function of the keys and the value.
func (p *columnPage) emitBase(j int, key, v []byte) error {
	if !p.elementJSON {
		return p.emit(key, v)
	}
	raw, err := p.raw(key, v)
	if err != nil {
		return err
	}
	json, ok := p.view.Element(j)
	if !ok {
		if p.jsonBuf, err = entity.AppendJSONRaw(p.jsonBuf[:0], raw, entity.ElementOptions()); err != nil {
			return err
		}
		json = p.jsonBuf
		p.view.RememberElement(j, json)
	}
	return p.return1(raw.WithElementJSON(json))
}

// raw returns the entity with full key key and stored value v, keys decoded.
func (p *columnPage) raw(key, v []byte) (entity.Raw, error) {
	raw, err := entity.NewRaw(v, "", "")
	if err != nil {
		return entity.Raw{}, err
	}
	p.row.reset(key, raw)
	pk, rk, err := p.row.keys()
	if err != nil {
		return entity.Raw{}, err
	}
	return raw.WithKeys(pk, rk), nil
}

// return1 passes one matching entity to visit.
func (p *columnPage) return1(raw entity.Raw) error {
	p.info.Returned++
	more, err := p.visit(raw)
	if err != nil {
		return err
	}
	p.stopNext = !more
	return nil
}

// freezeTable runs fn with the table's writers excluded (its lock held exclusively); the
// column cache takes its build snapshot there.
func (s *Service) freezeTable(ctx context.Context, tableID uint64, fn func(tx store.Txn) error) error {
	return s.st.Update(ctx, []store.Lock{{Name: tableLock(tableID)}}, fn)
}
