package queue

// The head cache keeps the front of a queue's visibility index in memory, so that consumers
// taking messages one at a time do not each open a store iterator and seek (about a tenth of
// a get+delete's server CPU): a Get's walk reads up to headAhead messages past what it
// takes, and the next Gets take those.
//
// It holds exactly the index entries between the queue's hint and end, in order, as
// committed (or applied by the Update in progress). Everything that writes the index holds
// the queue's lock, and so does everything that reads or changes the cache:
//   - Put and Update write at a deadline read from the clock after the walk that filled the
//     cache, so above its end (the clock never goes back); Get moves what it takes to such
//     a deadline too;
//   - Delete and Update remove an entry at the deadline their receipt names: one inside the
//     cached range drops the cache;
//   - the reaper, Clear Messages and the layout upgrade drop it;
//   - a Get replaces it only once its writes are made, and a failed Update drops it
//     (withQueue), as it forgets the cached count.
//
// A cache is never changed once made (a Get stores a new one), so forgetting it needs no
// lock.
//
// It is off on a shared store, where other processes write the index.

// headAhead is how many messages a Get's walk reads beyond what it takes, and headBytes
// the most message text the cache holds per queue (it holds at least one message).
const (
	headAhead = 32
	headBytes = 16 << 10
)

// headCache is the cached front of one queue's visibility index.
type headCache struct {
	msgs []*message // ascending positions, each visible when read; never changed
	// end is where the walk that filled the cache stopped: the index holds no entry in
	// [position of msgs[0], end) other than msgs.
	end position
}

// dropHead forgets the cached front. Safe without the queue's lock (forgetting is always
// allowed): withQueue calls it after a failed Update.
func (st *qstate) dropHead() { st.head.Store(nil) }

// dropHeadAt forgets the cached front if it covers position p (the caller holds the queue's
// lock and is about to remove the entry at p).
func (st *qstate) dropHeadAt(p position) {
	if h := st.head.Load(); h != nil && p.less(h.end) {
		st.head.Store(nil)
	}
}

// take returns copies of up to n messages from the front of h (the caller may change
// them), and the cache without them (nil when none is left), to store once the caller's
// writes are made.
func (h *headCache) take(n int) (taken []*message, rest *headCache) {
	k := min(n, len(h.msgs))
	for _, m := range h.msgs[:k] {
		c := *m
		taken = append(taken, &c)
	}
	if k < len(h.msgs) {
		rest = &headCache{msgs: h.msgs[k:], end: h.end}
	}
	return taken, rest
}

// start is where the index continues after what h holds was taken: its first message.
func (h *headCache) start() position { return position{h.msgs[0].visibleAt, h.msgs[0].seq} }

// newHead builds the cache of msgs (read in index order by a walk that stopped at end), up
// to headBytes of text; nil when there is nothing to cache.
func newHead(msgs []*message, end position) *headCache {
	if len(msgs) == 0 {
		return nil
	}
	size := 0
	for i, m := range msgs {
		size += len(m.text)
		if size > headBytes && i > 0 {
			msgs, end = msgs[:i], position{m.visibleAt, m.seq}
			break
		}
	}
	return &headCache{msgs: msgs, end: end}
}
