package queue

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
	"github.com/tablo/tablo/internal/store"
)

// Message is a message as the operations return it.
type Message struct {
	ID       string
	Inserted time.Time
	// Expires is the expiry time; Azure's 9999-12-31T23:59:59Z for a message that never
	// expires.
	Expires time.Time
	// NextVisible and PopReceipt are set by Put, Get and Update, not by Peek.
	NextVisible  time.Time
	PopReceipt   string
	DequeueCount int
	Text         string
}

// NeverExpires is the expiry time Azure reports for messagettl=-1.
var NeverExpires = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

func toTime(ns int64) time.Time {
	if ns == neverExpires {
		return NeverExpires
	}
	return time.Unix(0, ns).UTC()
}

// messageID formats a queue id and sequence number as a GUID-shaped string (written into
// one buffer: this is on every put's and get's path).
func messageID(qid, seq uint64) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], qid)
	binary.BigEndian.PutUint64(b[8:], seq)
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}

// parseMessageID reverses messageID; anything else names no message.
func parseMessageID(id string) (qid, seq uint64, ok bool) {
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return 0, 0, false
	}
	b, err := hex.DecodeString(id[:8] + id[9:13] + id[14:18] + id[19:23] + id[24:])
	if err != nil {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]), true
}

// Pop receipts are URL-safe base64 (no '+', '/' or '='): clients put them in the query
// string, and not every client escapes a '+' (which would arrive as a space). They start with
// a fixed letter, as Azure's do, because base64url may start with '-', which command-line
// clients (az) take for an option. A receipt carries a random number and the message's
// visibility deadline, which is where the message's key is (its place in the visibility
// index): Update and Delete read that one key.
const receiptLead = "A"

// receiptLen is the length of a receipt: the lead and 16 bytes in base64url.
const receiptLen = 1 + 22

func receiptString(r uint64, visibleAt int64) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], r)
	binary.BigEndian.PutUint64(b[8:], uint64(visibleAt))
	return receiptLead + base64.RawURLEncoding.EncodeToString(b[:])
}

// oldReceipt is the deadline parseReceipt gives a receipt of the earlier form (8 random
// bytes, no deadline): no message is there, so, like any outdated receipt, it is
// MessageNotFound, and its message comes back when its visibility timeout ends.
const oldReceipt = -1

func parseReceipt(s string) (r uint64, visibleAt int64, err error) {
	var b []byte
	if len(s) == receiptLen && strings.HasPrefix(s, receiptLead) {
		b, err = base64.RawURLEncoding.DecodeString(s[1:])
	} else {
		b, err = base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, receiptLead))
		if len(s) == 11 { // issued before the lead letter
			b, err = base64.RawURLEncoding.DecodeString(s)
		}
		if err == nil && len(b) == 8 {
			return 0, oldReceipt, nil
		}
	}
	if err != nil || len(b) != 16 {
		return 0, 0, azerr.New(azerr.InvalidQueryParameterValue).With("QueryParameterName", "popreceipt").With("QueryParameterValue", s)
	}
	return binary.BigEndian.Uint64(b), int64(binary.BigEndian.Uint64(b[8:])), nil
}

func (s *Service) out(qid uint64, m *message, withReceipt bool) Message {
	o := Message{
		ID: messageID(qid, m.seq), Inserted: toTime(m.inserted), Expires: toTime(m.expires),
		DequeueCount: int(m.dequeues), Text: m.text,
	}
	if withReceipt {
		o.NextVisible = toTime(m.visibleAt)
		o.PopReceipt = receiptString(m.receipt, m.visibleAt)
	}
	return o
}

// outOfRange is 400 OutOfRangeQueryParameterValue naming the parameter and its bounds.
func outOfRange(name string, v, lo, hi int64) error {
	return azerr.New(azerr.OutOfRangeQueryParameterValue).
		With("QueryParameterName", name).With("QueryParameterValue", strconv.FormatInt(v, 10)).
		With("MinimumAllowed", strconv.FormatInt(lo, 10)).With("MaximumAllowed", strconv.FormatInt(hi, 10))
}

// CheckText applies the message size limit: 64 KiB of UTF-8.
func CheckText(text string) error {
	if len(text) > MaxMessageBytes {
		return azerr.New(azerr.RequestBodyTooLarge).With("MaxLimit", strconv.Itoa(MaxMessageBytes))
	}
	return nil
}

// PutMessage adds a message, invisible for visibilityTimeout seconds (0–7 days, below the
// TTL), expiring after ttl seconds (≥ 1, or -1 for never).
func (s *Service) PutMessage(ctx context.Context, account, name, text string, visibilityTimeout, ttl int64) (Message, error) {
	if err := CheckText(text); err != nil {
		return Message{}, err
	}
	if ttl == 0 || ttl < -1 {
		return Message{}, outOfRange("messagettl", ttl, -1, 1<<31-1)
	}
	maxVT := int64(MaxVisibilityTimeout)
	if ttl != -1 && ttl-1 < maxVT {
		maxVT = ttl - 1
	}
	if visibilityTimeout < 0 || visibilityTimeout > maxVT {
		return Message{}, outOfRange("visibilitytimeout", visibilityTimeout, 0, maxVT)
	}
	if err := s.ensureNode(ctx); err != nil {
		return Message{}, err
	}
	var out Message
	err := s.withQueue(ctx, account, name, func(tx store.Txn, qid uint64) error {
		now := s.clock()
		m := &message{seq: s.nextSeq(now), inserted: now, expires: neverExpires,
			visibleAt: now + visibilityTimeout*int64(time.Second), receipt: newReceipt(), text: text}
		if ttl != -1 {
			if e := now + ttl*int64(time.Second); e > now && ttl < int64(1<<62)/int64(time.Second) {
				m.expires = e
			}
		}
		if err := writeMessage(tx, qid, m); err != nil {
			return err
		}
		out = s.out(qid, m, true)
		return s.addCount(ctx, tx, qid, 1)
	})
	return out, err
}

// writeMessage stores m at its place in the visibility index (the message is the index
// entry's value, so a walk of the index reads messages without a lookup each) and, when it
// expires, its expiry entry, whose value is that place's deadline (the reaper finds the
// message from it). Moving a message is deleting its old entry and writing it again: the
// expiry entry is then overwritten.
func writeMessage(tx store.Txn, qid uint64, m *message) error {
	if err := tx.Set(keys.QueueVisible(qid, m.visibleAt, m.seq), m.encode()); err != nil {
		return err
	}
	if m.expires != neverExpires {
		return tx.Set(keys.QueueExpiry(m.expires, qid, m.seq), binary.BigEndian.AppendUint64(nil, uint64(m.visibleAt)))
	}
	return nil
}

// deleteMessage removes m and its expiry entry.
func deleteMessage(tx store.Txn, qid uint64, m *message) error {
	if err := tx.Delete(keys.QueueVisible(qid, m.visibleAt, m.seq)); err != nil {
		return err
	}
	if m.expires != neverExpires {
		return tx.Delete(keys.QueueExpiry(m.expires, qid, m.seq))
	}
	return nil
}

// moveMessage writes m at its new deadline (m.visibleAt), removing its entry at from.
func moveMessage(tx store.Txn, qid uint64, m *message, from int64) error {
	if err := tx.Delete(keys.QueueVisible(qid, from, m.seq)); err != nil {
		return err
	}
	return writeMessage(tx, qid, m)
}

func checkCount(n int) error {
	if n < 1 || n > MaxNumOfMessages {
		return outOfRange("numofmessages", int64(n), 1, MaxNumOfMessages)
	}
	return nil
}

// reader reads committed data: a message operation reads through the store while it holds
// the queue's lock (every writer of the queue's keys holds it, so nothing changes under it);
// Peek reads without it (it may miss a message that is being moved, as any read racing a
// write may).
type reader struct {
	scan func(ctx context.Context, start, end []byte, fn func(k, v []byte) (bool, error)) error
	// recheck, when set, reads the entries the scan found again (ascending keys, in one
	// call: Txn.Lookup), and only those it finds count: on a shared store the scan reads the
	// Txn's snapshot, which the contract does not make part of the transaction's reads, and
	// the recheck reads inside the transaction.
	recheck func(keys [][]byte, fn func(i int, value []byte, found bool) error) error
}

func (s *Service) storeReader() reader { return reader{scan: s.st.Scan} }

// walkVisible walks the queue's visible, unexpired messages in index order (visibleAt, then
// insertion) from the hint, calling fn until it returns false. Expired messages met on the
// way go to expired (nil: skipped). It returns the position of the first entry left
// unvisited (or just past now when the walk reached now), a lower bound for the index once
// the visited messages have moved on (every later write is above it: see clock).
func walkVisible(ctx context.Context, r reader, qid uint64, from position, now int64, want int,
	fn func(m *message) bool, expired func(m *message) error) (position, error) {
	start := keys.QueueVisible(qid, from.at, from.seq)
	end := keys.QueueVisible(qid, now+1, 0)
	end0 := position{at: now + 1}
	type entry struct {
		pos position
		m   *message // nil: gone when rechecked
	}
	var batch []entry
	for {
		batch = batch[:0]
		err := r.scan(ctx, start, end, func(k, v []byte) (bool, error) {
			at, seq, err := keys.DecodeQueueVisible(k)
			if err != nil {
				return false, err
			}
			m, err := decodeMessage(seq, v)
			if err != nil {
				return false, err
			}
			m.visibleAt = at
			batch = append(batch, entry{position{at, seq}, m})
			// Read one entry past what is wanted (the hint is the first entry left);
			// expired ones make the next round read on.
			return len(batch) <= want, nil
		})
		if err != nil || len(batch) == 0 {
			return end0, err
		}
		if r.recheck != nil {
			ks := make([][]byte, len(batch))
			for i, e := range batch {
				ks[i] = keys.QueueVisible(qid, e.pos.at, e.pos.seq)
			}
			err := r.recheck(ks, func(i int, v []byte, found bool) error {
				if !found {
					batch[i].m = nil // taken since the scan (by another process)
					return nil
				}
				m, err := decodeMessage(batch[i].pos.seq, v)
				if err != nil {
					return err
				}
				m.visibleAt = batch[i].pos.at
				batch[i].m = m
				return nil
			})
			if err != nil {
				return position{}, err
			}
		}
		for i, e := range batch {
			m := e.m
			if m == nil {
				continue
			}
			if m.expires <= now {
				if expired != nil {
					if err := expired(m); err != nil {
						return position{}, err
					}
				}
				continue
			}
			if !fn(m) {
				if i+1 < len(batch) {
					return batch[i+1].pos, nil
				}
				return e.pos.next(), nil
			}
		}
		start = keys.QueueVisible(qid, batch[len(batch)-1].pos.next().at, batch[len(batch)-1].pos.next().seq)
	}
}

// GetMessages takes up to n visible messages (1–32), hiding each for visibilityTimeout
// seconds (1–7 days) with a new pop receipt and one more dequeue.
func (s *Service) GetMessages(ctx context.Context, account, name string, n int, visibilityTimeout int64) ([]Message, error) {
	if err := checkCount(n); err != nil {
		return nil, err
	}
	if visibilityTimeout < 1 || visibilityTimeout > MaxVisibilityTimeout {
		return nil, outOfRange("visibilitytimeout", visibilityTimeout, 1, MaxVisibilityTimeout)
	}
	var out []Message
	err := s.withQueue(ctx, account, name, func(tx store.Txn, qid uint64) error {
		out = out[:0]
		st := s.state(qid)
		now := s.clock()
		var taken []*message
		var expired int64
		r := s.storeReader()
		if s.shared {
			// The index is read through the Txn's snapshot (on a pooled engine, a scan of
			// the store would wait for a second connection while this Update holds one),
			// and each entry taken is read again through the Txn itself: one another
			// process took after the snapshot is gone and skipped, and two processes taking
			// the same message both read and write its key, so the database lets only one
			// of them commit.
			r.scan = func(ctx context.Context, start, end []byte, fn func(k, v []byte) (bool, error)) error {
				return txnScan(ctx, tx, start, end, fn)
			}
			r.recheck = func(ks [][]byte, fn func(int, []byte, bool) error) error {
				return tx.Lookup(ks, store.ExpectPresent, fn)
			}
		}
		expire := func(m *message) error { expired++; return deleteMessage(tx, qid, m) }
		// Take from the cached front first (head.go), then walk the index from where the
		// cache ends (or from the hint), reading up to headAhead more messages to cache.
		from := s.hint(st)
		var head *headCache
		if h := st.head.Load(); h != nil && !s.shared {
			from = h.end
			for h != nil && len(taken) < n {
				var cached []*message
				cached, h = h.take(n - len(taken))
				for _, m := range cached {
					if m.expires <= now {
						if err := expire(m); err != nil {
							return err
						}
						continue
					}
					taken = append(taken, m)
				}
			}
			if h != nil {
				head, from = h, h.start()
			}
		}
		newHint := from
		if len(taken) < n {
			ahead := 0
			if !s.shared {
				ahead = headAhead
			}
			var more []*message
			var err error
			newHint, err = walkVisible(ctx, r, qid, from, now, n-len(taken)+ahead, func(m *message) bool {
				if len(taken) < n {
					taken = append(taken, m)
				} else {
					more = append(more, m)
				}
				return len(taken)+len(more) < n+ahead
			}, expire)
			if err != nil {
				return err
			}
			if head = newHead(more, newHint); head != nil {
				newHint = head.start()
			}
		}
		for _, m := range taken {
			from := m.visibleAt
			m.visibleAt = now + visibilityTimeout*int64(time.Second)
			m.dequeues++
			m.receipt = newReceipt()
			if err := moveMessage(tx, qid, m, from); err != nil {
				return err
			}
			out = append(out, s.out(qid, m, true))
		}
		if err := s.addCount(ctx, tx, qid, -expired); err != nil {
			return err
		}
		// Raise the hint before the commit's fsync, still under the lock: the next
		// consumer, which will read this write once it holds the lock, then starts past the
		// entries just taken instead of stepping over them (their tombstones) again. Only a
		// failed commit could leave it too high, and a failed commit means the engine is
		// failing anyway. The cache is replaced at the same point (a failed Update drops it).
		st.raise(newHint)
		if !s.shared {
			st.head.Store(head)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// raise sets a to v if v is larger (both are lower bounds of the index; the larger is
// the tighter).
func raise(a interface {
	Load() int64
	CompareAndSwap(old, new int64) bool
}, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// PeekMessages returns up to n visible messages (1–32) without changing them.
func (s *Service) PeekMessages(ctx context.Context, account, name string, n int) ([]Message, error) {
	if err := checkCount(n); err != nil {
		return nil, err
	}
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	var e *qentry
	var err error
	if s.shared {
		e, err = s.lookupEntry(ctx, account, name)
	} else {
		e, err = s.resolve(ctx, account, name)
	}
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, errQueueNotFound
	}
	now := s.clock()
	out := []Message{}
	_, err = walkVisible(ctx, s.storeReader(), e.id, s.hint(s.state(e.id)), now, n, func(m *message) bool {
		out = append(out, s.out(e.id, m, false))
		return len(out) < n
	}, nil)
	if err != nil {
		return nil, err
	}
	if s.shared {
		// Another process may have deleted the queue meanwhile: the answer stands only if
		// the catalog still names the same queue (ids are never reused).
		again, err := s.lookupEntry(ctx, account, name)
		if err != nil {
			return nil, err
		}
		if again == nil || again.id != e.id {
			return nil, errQueueNotFound
		}
	} else if e.dead.Load() {
		return nil, errQueueNotFound
	}
	return out, nil
}

// lookupEntry reads a queue's catalog record from the store, bypassing the cache (nil when
// the queue does not exist).
func (s *Service) lookupEntry(ctx context.Context, account, name string) (*qentry, error) {
	q, err := lookup(func(k []byte) ([]byte, error) { return s.st.Get(ctx, k) }, account, name)
	if err != nil || q == nil {
		return nil, err
	}
	if err := s.upgradeQueue(ctx, q.id); err != nil {
		return nil, err
	}
	return newQEntry(q.id), nil
}

// findMessage reads the message id names in queue q at the deadline its receipt names,
// checking the receipt; a message that is missing, expired, of another queue or held under
// another receipt is 404 MessageNotFound, as on Azure.
func findMessage(tx store.Txn, queueID uint64, id string, receipt uint64, at, now int64) (*message, error) {
	qid, seq, ok := parseMessageID(id)
	if !ok || qid != queueID {
		return nil, azerr.New(azerr.MessageNotFound)
	}
	v, err := tx.Get(keys.QueueVisible(qid, at, seq))
	if errors.Is(err, store.ErrNotFound) {
		return nil, azerr.New(azerr.MessageNotFound)
	}
	if err != nil {
		return nil, err
	}
	m, err := decodeMessage(seq, v)
	if err != nil {
		return nil, err
	}
	m.visibleAt = at
	if m.expires <= now || m.receipt != receipt {
		return nil, azerr.New(azerr.MessageNotFound)
	}
	return m, nil
}

// DeleteMessage deletes a message given its current pop receipt.
func (s *Service) DeleteMessage(ctx context.Context, account, name, id, popReceipt string) error {
	r, at, err := parseReceipt(popReceipt)
	if err != nil {
		return err
	}
	return s.withQueue(ctx, account, name, func(tx store.Txn, qid uint64) error {
		m, err := findMessage(tx, qid, id, r, at, s.clock())
		if err != nil {
			return err
		}
		s.state(qid).dropHeadAt(position{m.visibleAt, m.seq})
		if err := deleteMessage(tx, qid, m); err != nil {
			return err
		}
		return s.addCount(ctx, tx, qid, -1)
	})
}

// UpdateMessage makes a message visible again after visibilityTimeout seconds (0–7 days)
// with a new pop receipt, and replaces its text when text is not nil. The dequeue count is
// unchanged.
func (s *Service) UpdateMessage(ctx context.Context, account, name, id, popReceipt string, text *string, visibilityTimeout int64) (Message, error) {
	r, at, err := parseReceipt(popReceipt)
	if err != nil {
		return Message{}, err
	}
	if visibilityTimeout < 0 || visibilityTimeout > MaxVisibilityTimeout {
		return Message{}, outOfRange("visibilitytimeout", visibilityTimeout, 0, MaxVisibilityTimeout)
	}
	if text != nil {
		if err := CheckText(*text); err != nil {
			return Message{}, err
		}
	}
	var out Message
	err = s.withQueue(ctx, account, name, func(tx store.Txn, qid uint64) error {
		now := s.clock()
		m, err := findMessage(tx, qid, id, r, at, now)
		if err != nil {
			return err
		}
		s.state(qid).dropHeadAt(position{at, m.seq})
		m.visibleAt = now + visibilityTimeout*int64(time.Second)
		m.receipt = newReceipt()
		if text != nil {
			m.text = *text
		}
		if err := moveMessage(tx, qid, m, at); err != nil {
			return err
		}
		out = s.out(qid, m, true)
		return nil
	})
	return out, err
}

// ClearMessages deletes every message of a queue (one range delete).
func (s *Service) ClearMessages(ctx context.Context, account, name string) error {
	return s.withQueue(ctx, account, name, func(tx store.Txn, qid uint64) error {
		s.state(qid).dropHead()
		if err := tx.DeleteRange(keys.QueueData(qid), keys.PrefixEnd(keys.QueueData(qid))); err != nil {
			return err
		}
		return s.setCount(tx, qid, 0)
	})
}
