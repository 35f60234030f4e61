// Package queue is the Queue service's rules, without HTTP: queues with metadata and
// stored access policies, and messages with Azure's visibility, pop-receipt, dequeue-count
// and expiry semantics, on the shared store under the Queue service's key space (package
// keys, tag 'Q').
//
// Layout and invariants:
//
//   - A queue has a numeric id; its messages and its visibility index live under one
//     prefix, so Delete Queue and Clear Messages are one DeleteRange, and a queue created
//     again gets a new id and starts empty.
//   - Every message has a key in the visibility index ordered by (visibleAt, seq): Get and
//     Peek read only the index range [hint, now], never invisible messages. The deadline is
//     stored, so a message taken but not deleted reappears after a restart once it passes.
//   - Every write to a queue's index happens under that queue's lock with visibleAt at or
//     after the (monotonic) clock's reading, so a successful Get may remember how far the
//     index below a position is known to be empty (the hint) and the next one starts there: a
//     queue with a million messages (or a million tombstones of deleted ones) costs a Get
//     what a queue of a hundred does.
//   - Expired messages are never returned: Get deletes those it meets, Peek skips them, and a
//     reaper deletes them in expiry order from a cross-queue expiry index (no full scan).
//   - Pop receipts are random per Get and Update; only the current one works.
package queue
