// Package load is the load generator behind `tablo bench`: it drives any Table, Queue or Blob
// endpoint named by a connection string through the official Go SDKs (aztables, azqueue,
// azblob), so the numbers are what SDK users get, and it carries a do-nothing "null server"
// that answers every workload with canned responses, which measures the request-rate ceiling
// of the machine with the same client. For blob uploads, --disk-dir adds the other ceiling:
// a write+fsync of the same bytes to a file.
//
// Invariants:
//   - Requests go only to loopback endpoints: ParseConnString accepts any endpoint, but the bench
//     refuses one whose host is not loopback (CheckLoopback) before sending anything.
//   - Every run is bounded: an operation count and/or a duration (at least one, and the duration is
//     capped), a per-operation timeout, an error budget, and bounded paging loops. The null
//     server stops when its context ends or its lifetime elapses.
//   - Each workload runs in a fresh table (queue, container) that is deleted afterwards, so workloads do not see each
//     other's data; preloading happens before the measured phase and is not measured. The one
//     exception is --table: a named table is loaded once (--preload-only, then measured as the
//     "preload" workload) and kept, and later runs measure it as it is (--skip-preload), so a
//     large table is loaded once for many measurements. Workloads that insert new keys are
//     refused there, so a kept table never collides with an earlier run.
//   - Latency statistics use a fixed-size log-linear histogram (relative error under 1/64), so
//     memory does not grow with the operation count and histograms merge exactly.
//   - No package-level mutable state: Main takes its arguments and writers, and builds its own
//     flag.FlagSet.
package load
