package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	pebblestore "github.com/tablo/tablo/internal/store/pebble"
	"github.com/tablo/tablo/internal/table"
)

// statMetric is one metric read from a stats snapshot at scrape time.
type statMetric[S any] struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(S) float64
}

// statsCollector reports the metrics of one stats function, read once per scrape.
type statsCollector[S any] struct {
	read    func() S
	metrics []statMetric[S]
}

func (c *statsCollector[S]) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.metrics {
		ch <- m.desc
	}
}

func (c *statsCollector[S]) Collect(ch chan<- prometheus.Metric) {
	s := c.read()
	for _, m := range c.metrics {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(s))
	}
}

func stat[S any](name, help string, kind prometheus.ValueType, value func(S) float64) statMetric[S] {
	return statMetric[S]{desc: prometheus.NewDesc(name, help, nil, nil), kind: kind, value: value}
}

// RegisterEngine registers the storage engine's statistics, read from stats at each scrape.
func RegisterEngine(reg prometheus.Registerer, stats func() pebblestore.Stats) {
	type S = pebblestore.Stats
	c, g := prometheus.CounterValue, prometheus.GaugeValue
	reg.MustRegister(&statsCollector[S]{read: stats, metrics: []statMetric[S]{
		stat("tablo_engine_commits_total", "Write transactions committed durably (every service).", c, func(s S) float64 { return float64(s.Commits) }),
		stat("tablo_engine_wal_syncs_total", "WAL fsyncs; commits_total / wal_syncs_total is the mean group-commit size.", c, func(s S) float64 { return float64(s.WALSyncs) }),
		stat("tablo_engine_wal_sync_queue_mean", "Mean number of commits waiting on a WAL sync when it starts (group-commit size, since the engine was opened).", g, func(s S) float64 { return s.SyncQueueMean }),
		stat("tablo_engine_wal_bytes_written_total", "Bytes written to the write-ahead log.", c, func(s S) float64 { return float64(s.WALBytesWritten) }),
		stat("tablo_engine_flushes_total", "Memtable flushes.", c, func(s S) float64 { return float64(s.Flushes) }),
		stat("tablo_engine_compactions_total", "Compactions completed.", c, func(s S) float64 { return float64(s.Compactions) }),
		stat("tablo_engine_compactions_running", "Compactions in progress.", g, func(s S) float64 { return float64(s.CompactionsRunning) }),
		stat("tablo_engine_compaction_debt_bytes", "Estimated bytes compactions must still rewrite.", g, func(s S) float64 { return float64(s.CompactionDebtBytes) }),
		stat("tablo_engine_disk_bytes", "Disk space used by the engine (memory in --in-memory mode).", g, func(s S) float64 { return float64(s.DiskBytes) }),
		stat("tablo_engine_block_cache_hits_total", "Engine block cache hits.", c, func(s S) float64 { return float64(s.BlockCacheHits) }),
		stat("tablo_engine_block_cache_misses_total", "Engine block cache misses.", c, func(s S) float64 { return float64(s.BlockCacheMisses) }),
		stat("tablo_engine_block_cache_bytes", "Engine block cache size.", g, func(s S) float64 { return float64(s.BlockCacheBytes) }),
	}})
}

// RegisterTable registers the Table service's statistics (the column cache).
func RegisterTable(reg prometheus.Registerer, stats func() table.Stats) {
	type S = table.Stats
	c, g := prometheus.CounterValue, prometheus.GaugeValue
	reg.MustRegister(&statsCollector[S]{read: stats, metrics: []statMetric[S]{
		stat("tablo_column_cache_hits_total", "Filtered table-scan pages served from the column cache.", c, func(s S) float64 { return float64(s.ColumnCacheHits) }),
		stat("tablo_column_cache_misses_total", "Filtered table-scan pages that scanned the store because the column cache did not hold their columns.", c, func(s S) float64 { return float64(s.ColumnCacheMisses) }),
		stat("tablo_column_cache_bytes", "Memory held by the column cache.", g, func(s S) float64 { return float64(s.ColumnCacheBytes) }),
		stat("tablo_column_cache_tables", "Tables with columns in the column cache.", g, func(s S) float64 { return float64(s.ColumnCacheTables) }),
	}})
}
