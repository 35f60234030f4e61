package blob

import (
	"context"
	"sync"
	"time"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Reclamation. Extents are never freed on the request path: a Put Blob over an old blob, a
// Put Block List that drops staged blocks, Delete Blob and Delete Container only remove the
// records that name extents (Delete Container is one range delete). The sweep then finds
// extents that no record names and deletes them, in the background, without blocking
// writers:
//
//  1. it copies the set of held extents: a writer holds an extent from NewExtent (before
//     the engine lists it) until the record naming it has committed, a reader while it
//     streams;
//  2. it reads every record of the service from one engine snapshot taken after that copy
//     and collects the extent ids they name (and deletes uncommitted blocks older than
//     BlockExpiry);
//  3. it lists the engine's extents; one neither named nor held is a candidate, and is
//     deleted only if the previous sweep found it a candidate too.
//
// Why that is safe: an extent that is a candidate in two consecutive sweeps existed during
// the whole second sweep, so its writer's hold (taken at creation) was either still there
// when the second sweep copied the holds, or released after its record committed, which
// was then before the second sweep's snapshot: either way it is not a candidate. A reader
// holds an extent a few microseconds after reading the record that names it; a whole sweep
// separates the two sweeps, which covers that gap. Cost: one scan of the records (not of
// the bytes) plus one unlink per garbage extent.
//
// On an engine that several front ends share (store.Traits.Shared) the holds above are only
// this process's: another front end's writer holds its extent in its own process between
// the extent's commit and its record's, and its readers hold what they stream. There an
// extent is also deleted only after it has been a candidate for the grace (SharedGrace,
// default ten minutes). That covers the writer's gap, which the engine bounds (an Update
// gives up after tens of seconds), and every read shorter than the grace; a single Get Blob
// on another front end still streaming an overwritten or deleted blob after that long is cut,
// as it would be if the blob had changed under it (clients' ranged downloads read each range
// in its own request). Every front end sweeps; they may delete the same extent, which is
// harmless.
type collector struct {
	mu   sync.Mutex
	held map[uint64]int
	// prev: the candidates of the previous sweep, each with when it was first found one.
	prev   map[uint64]time.Time
	grace  time.Duration
	expiry time.Duration
	pokeCh chan struct{}
}

func (g *collector) init(expiry, grace time.Duration) {
	g.held = map[uint64]int{}
	g.expiry = expiry
	g.grace = grace
	g.pokeCh = make(chan struct{}, 1)
}

func (g *collector) hold(ids ...uint64) {
	g.mu.Lock()
	for _, id := range ids {
		g.held[id]++
	}
	g.mu.Unlock()
}

func (g *collector) unhold(ids ...uint64) {
	g.mu.Lock()
	for _, id := range ids {
		if g.held[id]--; g.held[id] <= 0 {
			delete(g.held, id)
		}
	}
	g.mu.Unlock()
}

// poke asks for a sweep soon (garbage was made).
func (g *collector) poke() {
	select {
	case g.pokeCh <- struct{}{}:
	default:
	}
}

func (s *Service) sweepLoop(interval time.Duration) {
	defer s.done.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	var last time.Time
	var cost time.Duration
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.gc.pokeCh:
			// Garbage was made: sweep soon (that marks it; a later sweep frees it), but
			// never more often than once a second or ten times the last sweep's cost, so
			// that a stream of overwrites does not turn the sweep into a busy loop.
			if wait := time.Until(last.Add(max(time.Second, 10*cost))); wait > 0 {
				select {
				case <-s.stop:
					return
				case <-time.After(wait):
				}
			}
		}
		began := time.Now()
		if _, err := s.Sweep(context.Background()); err != nil {
			s.log.Warn("blob sweep", "err", err)
		}
		last, cost = time.Now(), time.Since(began)
	}
}

// SweepStats reports one sweep.
type SweepStats struct {
	Referenced, Candidates, Deleted int
	DeletedBytes                    int64
	ExpiredBlocks                   int
}

// Sweep runs one reclamation pass (see above). Safe to call concurrently with requests.
func (s *Service) Sweep(ctx context.Context) (SweepStats, error) {
	var st SweepStats
	refs := map[uint64]bool{}
	var expired [][]byte
	cutoff := s.clk.now().Add(-s.gc.expiry).UnixNano() / 100
	// Holds are read before the snapshot: an extent not held now is either garbage or named
	// by a record that committed before the snapshot (a writer holds from NewExtent until
	// its record has committed).
	s.gc.mu.Lock()
	held := make(map[uint64]bool, len(s.gc.held))
	for id := range s.gc.held {
		held[id] = true
	}
	prev := s.gc.prev
	s.gc.mu.Unlock()
	snap, err := s.st.Snapshot(ctx)
	if err != nil {
		return st, err
	}
	lo := []byte{keys.TagBlob, 'd'}
	err = snap.Scan(ctx, lo, keys.PrefixEnd(lo), func(k, v []byte) (bool, error) {
		kind, rec, named, err := decodeRefs(k, v)
		if err != nil {
			return false, err
		}
		for _, r := range named {
			refs[*r.id] = true
		}
		if sb, ok := rec.(*staged); ok && kind == BlockRecord && sb.Staged < cutoff {
			expired = append(expired, append([]byte(nil), k...))
		}
		return true, nil
	})
	snap.Close()
	if err != nil {
		return st, err
	}
	st.Referenced = len(refs)
	// Expired uncommitted blocks: their extents become garbage for a later sweep.
	for _, k := range expired {
		err := s.st.Update(ctx, nil, func(tx store.Txn) error {
			v, err := tx.Get(k)
			if err != nil {
				return nil // committed or replaced meanwhile
			}
			sb := &staged{}
			if _, err := decodeRecord(v, sb); err != nil || sb.Staged >= cutoff {
				return err
			}
			return tx.Delete(k)
		})
		if err != nil {
			return st, err
		}
		st.ExpiredBlocks++
	}
	cands := map[uint64]time.Time{}
	var del []uint64
	var delBytes int64
	now := time.Now() // the grace is real time, whatever the service's clock says
	err = s.ext.ListExtents(ctx, func(id uint64, size int64) error {
		if refs[id] || held[id] {
			return nil
		}
		first, seen := prev[id]
		if !seen {
			first = now
		}
		cands[id] = first
		if seen && now.Sub(first) >= s.gc.grace {
			del = append(del, id)
			delBytes += size
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	st.Candidates = len(cands)
	// Re-check holds taken since: a read that began after the snapshot may hold one.
	s.gc.mu.Lock()
	kept := del[:0]
	for _, id := range del {
		if s.gc.held[id] == 0 {
			kept = append(kept, id)
		}
	}
	for _, id := range kept {
		delete(cands, id)
	}
	s.gc.prev = cands
	s.gc.mu.Unlock()
	if err := s.ext.DeleteExtents(ctx, kept); err != nil {
		return st, err
	}
	st.Deleted, st.DeletedBytes = len(kept), delBytes
	return st, nil
}
