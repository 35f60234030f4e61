package pebble

import (
	"context"

	"github.com/cockroachdb/pebble/v2"
	dto "github.com/prometheus/client_model/go"

	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Stats are the engine's counters for monitoring. Counters are cumulative over the
// process, across snapshot restores (which reopen Pebble).
type Stats struct {
	// Commits counts synced write transactions; WALSyncs the WAL fsyncs that made them
	// durable. Commits / WALSyncs is the mean group-commit size.
	Commits, WALSyncs uint64
	// SyncQueueMean is Pebble's mean number of commits waiting on a WAL sync when one starts
	// (since the engine was opened).
	SyncQueueMean float64
	// WALBytesWritten counts bytes written to the WAL.
	WALBytesWritten uint64
	// Flushes and Compactions count memtable flushes and compactions; CompactionsRunning is
	// how many run now, CompactionDebtBytes Pebble's estimate of work left.
	Flushes, Compactions             int64
	CompactionsRunning               int64
	CompactionDebtBytes              uint64
	DiskBytes                        uint64
	BlockCacheHits, BlockCacheMisses int64
	BlockCacheBytes                  int64
}

// Stats returns the engine's counters (zero after Close).
func (d *DB) Stats() Stats {
	if !d.enter() {
		return Stats{}
	}
	defer d.inflight.RUnlock()
	s := pebbleStats(d.db.Metrics())
	d.statsMu.Lock()
	base := d.statsBase
	d.statsMu.Unlock()
	s.WALSyncs += base.WALSyncs
	s.WALBytesWritten += base.WALBytesWritten
	s.Flushes += base.Flushes
	s.Compactions += base.Compactions
	s.BlockCacheHits += base.BlockCacheHits
	s.BlockCacheMisses += base.BlockCacheMisses
	s.Commits = d.commits.Load()
	return s
}

// keepStats adds the counters of the Pebble instance about to close to the process totals.
// Called with inflight held exclusively.
func (d *DB) keepStats() {
	s := pebbleStats(d.db.Metrics())
	d.statsMu.Lock()
	defer d.statsMu.Unlock()
	d.statsBase.WALSyncs += s.WALSyncs
	d.statsBase.WALBytesWritten += s.WALBytesWritten
	d.statsBase.Flushes += s.Flushes
	d.statsBase.Compactions += s.Compactions
	d.statsBase.BlockCacheHits += s.BlockCacheHits
	d.statsBase.BlockCacheMisses += s.BlockCacheMisses
}

func pebbleStats(m *pebble.Metrics) Stats {
	s := Stats{
		SyncQueueMean:       m.LogWriter.SyncQueueLen.Mean(),
		WALBytesWritten:     m.WAL.BytesWritten,
		Flushes:             m.Flush.Count,
		Compactions:         m.Compact.Count,
		CompactionsRunning:  m.Compact.NumInProgress,
		CompactionDebtBytes: m.Compact.EstimatedDebt,
		DiskBytes:           m.DiskSpaceUsage(),
		BlockCacheHits:      m.BlockCache.Hits,
		BlockCacheMisses:    m.BlockCache.Misses,
		BlockCacheBytes:     m.BlockCache.Size,
	}
	if h := m.LogWriter.FsyncLatency; h != nil {
		var pm dto.Metric
		if h.Write(&pm) == nil && pm.Histogram != nil {
			s.WALSyncs = pm.Histogram.GetSampleCount()
		}
	}
	return s
}

var readyKey = keys.Meta("ready-probe")

// Ping checks that the engine is open and accepts a durable write.
func (d *DB) Ping(ctx context.Context) error {
	return d.Update(ctx, nil, func(tx store.Txn) error { return tx.Set(readyKey, nil) })
}
