package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"sync"
)

// Verifier checks Shared Key and Shared Key Lite requests against one account, exactly as
// VerifySharedKey does, but reuses HMAC state between requests: hmac.New hashes the padded
// key and allocates two digests every time, which is a large part of verifying a request.
// A Verifier is safe for concurrent use; it must not be copied.
type Verifier struct {
	acct *Account
	// states holds *macState values keyed with acct's keys.
	states sync.Pool
}

// NewVerifier returns a Verifier for acct (nil: every request fails as for an unknown
// account). The account's keys must not change afterwards.
func NewVerifier(acct *Account) *Verifier {
	v := &Verifier{acct: acct}
	if acct != nil {
		keys := acct.Keys
		v.states.New = func() any { return newMACState(keys) }
	}
	return v
}

// Account returns the account the Verifier checks against.
func (v *Verifier) Account() *Account { return v.acct }

// VerifySharedKey is VerifySharedKey(req, v.Account()).
func (v *Verifier) VerifySharedKey(req RequestInfo) error {
	if v.acct == nil {
		return verifySharedKey(req, nil, nil)
	}
	st := v.states.Get().(*macState)
	err := verifySharedKey(req, v.acct, st)
	st.release()
	v.states.Put(st)
	return err
}

// maxKeptBuffer bounds the string-to-sign buffer a pooled state keeps (paths are short; a
// huge one should not pin its memory).
const maxKeptBuffer = 4 << 10

// macState is the per-request scratch of a verification: one HMAC per account key (created
// on first use, then Reset, which restores the precomputed key pads), the string-to-sign
// buffer, and room for the computed and the presented signature.
type macState struct {
	keys   [][]byte
	macs   []hash.Hash
	buf    []byte
	sumBuf [sha256.Size]byte
	// sig holds the decoded signature when it fits (DecodedLen of a 32-byte signature's
	// base64 is 33).
	sig [48]byte
	// bq is the scratch of the Blob/Queue string-to-sign; preferCodePoint records that the
	// last Blob/Queue request verified with this state was signed with its headers in
	// code-point order (clients keep to one order, so that order is tried first next).
	bq              bqScratch
	preferCodePoint bool
}

func newMACState(keys [][]byte) *macState {
	return &macState{keys: keys, macs: make([]hash.Hash, len(keys)), buf: make([]byte, 0, 256)}
}

// sum returns HMAC-SHA256(keys[i], msg), valid until the next call.
func (st *macState) sum(i int, msg []byte) []byte {
	m := st.macs[i]
	if m == nil {
		m = hmac.New(sha256.New, st.keys[i])
		st.macs[i] = m
	} else {
		m.Reset()
	}
	m.Write(msg)
	return m.Sum(st.sumBuf[:0])
}

// release readies the state for the pool.
func (st *macState) release() {
	if cap(st.buf) > maxKeptBuffer {
		st.buf = make([]byte, 0, 256)
	}
	if cap(st.bq.arena)+cap(st.bq.headers[0])+cap(st.bq.headers[1])+cap(st.bq.query) > maxKeptBuffer {
		st.bq = bqScratch{}
	}
}
