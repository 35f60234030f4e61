// Package colcache is an in-memory column cache that serves filtered table scans: per table,
// an immutable base (keys in order, one dictionary-encoded column per filtered property, and
// the entities themselves when they fit the budget) taken from one store snapshot, plus the
// set of keys written since. A page evaluates its filter over the columns and reads only the
// written keys and the matches from its own store snapshot.
//
// Why a page is exact (identical to a store scan of the reader's snapshot):
//   - A base's snapshot is taken while the table's writers are excluded (FreezeFunc holds the
//     table lock exclusively), so no write straddles it.
//   - Every write notes its keys (NoteWrites) inside its transaction, under the table lock
//     shared, before it commits. So a write committed before any instant was noted before it.
//   - A reader calls Ready (which names the installed base's generation), then takes its
//     store snapshot, then View with that generation. The base was installed, so its snapshot
//     taken, before the reader's snapshot, and the view's dirty set holds every key written
//     between the two: those it reads from its snapshot; every other row's base values are
//     still the snapshot's. View refuses a base installed after Ready: its snapshot may be
//     newer than the reader's, and the writes in between would be in neither place.
//
// Copies kept beside a base (the entities scans matched, when the base does not hold them all,
// and the response JSON of the rows scans returned) are exact for the same reason: they are
// only made of, and only read for, rows not written since the base's snapshot, whose values
// every reader of that base sees as the base does.
//
// Memory: bases and their copies live off the Go heap (mmap), reference-counted by Views,
// within one LRU budget for all tables. Builds run in the background, one at a time; a scan
// that finds a build of its columns running waits for it (AwaitBuild, holding no lock)
// rather than scan the store meanwhile.
package colcache
