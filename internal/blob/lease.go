package blob

import (
	"crypto/rand"
	"fmt"

	"github.com/tablo/tablo/internal/azerr"
)

// Lease is the stored lease of a blob or container. Its state is computed from the time
// at each request (blob.md §10: no timers), so a lease that expires while the server is
// down reads expired after a restart.
type Lease struct {
	ID string `json:"id,omitempty"`
	// Duration in seconds, -1 infinite.
	Duration int `json:"d,omitempty"`
	// Until is when a fixed lease expires or a breaking lease becomes broken (ticks).
	Until    int64 `json:"u,omitempty"`
	Breaking bool  `json:"b,omitempty"`
	Broken   bool  `json:"x,omitempty"`
}

// Lease states.
const (
	Available = "available"
	Leased    = "leased"
	Expired   = "expired"
	Breaking  = "breaking"
	Broken    = "broken"
)

// State is the lease state at now (ticks).
func (l *Lease) State(now int64) string {
	switch {
	case l.ID == "" && !l.Broken:
		return Available
	case l.Broken:
		return Broken
	case l.Breaking:
		if now >= l.Until {
			return Broken
		}
		return Breaking
	case l.Duration > 0 && now >= l.Until:
		return Expired
	}
	return Leased
}

// Active reports a lease that holds writes (leased or breaking).
func (l *Lease) Active(now int64) bool {
	s := l.State(now)
	return s == Leased || s == Breaking
}

// Status is x-ms-lease-status.
func (l *Lease) Status(now int64) string {
	if l.Active(now) {
		return "locked"
	}
	return "unlocked"
}

// DurationName is x-ms-lease-duration ("" when not leased).
func (l *Lease) DurationName(now int64) string {
	if l.State(now) != Leased {
		return ""
	}
	if l.Duration < 0 {
		return "infinite"
	}
	return "fixed"
}

// checkWrite applies the lease rules of a write (blob.md §10): an active lease needs its id.
func (l *Lease) checkWrite(now int64, id string, container bool) error {
	mismatch, notPresent := azerr.LeaseIDMismatchWithBlobOperation, azerr.LeaseNotPresentWithBlobOperation
	if container {
		mismatch, notPresent = azerr.LeaseIDMismatchWithContainerOperation, azerr.LeaseNotPresentWithContainerOperation
	}
	if l.Active(now) {
		switch {
		case id == "":
			return azerr.New(azerr.LeaseIDMissing)
		case id != l.ID:
			return azerr.New(mismatch)
		}
		return nil
	}
	if id != "" {
		if l.State(now) == Expired && id == l.ID {
			return azerr.New(azerr.LeaseLost)
		}
		return azerr.New(notPresent)
	}
	return nil
}

// checkRead: reads need no lease id, but a wrong one fails.
func (l *Lease) checkRead(now int64, id string) error {
	if id == "" {
		return nil
	}
	if !l.Active(now) {
		return azerr.New(azerr.LeaseNotPresentWithBlobOperation)
	}
	if id != l.ID {
		return azerr.New(azerr.LeaseIDMismatchWithBlobOperation)
	}
	return nil
}

// LeaseRequest is one Lease Blob / Lease Container call.
type LeaseRequest struct {
	Action     string // acquire, renew, change, release, break
	ID         string // x-ms-lease-id
	ProposedID string
	Duration   int // acquire: 15-60 or -1
	// BreakPeriod is -1 when not sent.
	BreakPeriod int
}

// LeaseResult is what a lease call answers.
type LeaseResult struct {
	ID string
	// BreakSeconds is x-ms-lease-time for break.
	BreakSeconds int
}

const ticksPerSecond = 10_000_000

func newLeaseID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// apply runs a lease action on l at now (blob.md §10 table).
func (l *Lease) apply(now int64, r LeaseRequest) (LeaseResult, error) {
	st := l.State(now)
	switch r.Action {
	case "acquire":
		if r.Duration != -1 && (r.Duration < 15 || r.Duration > 60) {
			return LeaseResult{}, azerr.New(azerr.InvalidHeaderValue)
		}
		p := r.ProposedID
		if p == "" {
			p = newLeaseID()
		}
		switch st {
		case Leased:
			if p != l.ID {
				return LeaseResult{}, azerr.New(azerr.LeaseAlreadyPresent)
			}
		case Breaking:
			if p == l.ID {
				return LeaseResult{}, azerr.New(azerr.LeaseIsBreakingAndCannotBeAcquired)
			}
			return LeaseResult{}, azerr.New(azerr.LeaseAlreadyPresent)
		}
		*l = Lease{ID: p, Duration: r.Duration}
		if r.Duration > 0 {
			l.Until = now + int64(r.Duration)*ticksPerSecond
		}
		return LeaseResult{ID: p}, nil
	case "renew":
		if r.ID != l.ID || st == Available {
			return LeaseResult{}, azerr.New(azerr.LeaseIDMismatchWithLeaseOperation)
		}
		if st == Breaking || st == Broken {
			return LeaseResult{}, azerr.New(azerr.LeaseIsBrokenAndCannotBeRenewed)
		}
		if l.Duration > 0 {
			l.Until = now + int64(l.Duration)*ticksPerSecond
		}
		return LeaseResult{ID: l.ID}, nil
	case "change":
		switch st {
		case Available, Broken, Expired:
			return LeaseResult{}, azerr.New(azerr.LeaseNotPresentWithLeaseOperation)
		case Breaking:
			if r.ID == l.ID {
				return LeaseResult{}, azerr.New(azerr.LeaseIsBreakingAndCannotBeChanged)
			}
			return LeaseResult{}, azerr.New(azerr.LeaseIDMismatchWithLeaseOperation)
		}
		if r.ID != l.ID && r.ProposedID != l.ID {
			return LeaseResult{}, azerr.New(azerr.LeaseIDMismatchWithLeaseOperation)
		}
		l.ID = r.ProposedID
		return LeaseResult{ID: l.ID}, nil
	case "release":
		if st == Available || r.ID != l.ID {
			return LeaseResult{}, azerr.New(azerr.LeaseIDMismatchWithLeaseOperation)
		}
		*l = Lease{}
		return LeaseResult{}, nil
	case "break":
		if r.BreakPeriod > 60 {
			return LeaseResult{}, azerr.New(azerr.InvalidHeaderValue)
		}
		switch st {
		case Available, Expired:
			return LeaseResult{}, azerr.New(azerr.LeaseNotPresentWithLeaseOperation)
		case Broken:
			return LeaseResult{BreakSeconds: 0}, nil
		}
		period := int64(r.BreakPeriod)
		switch {
		case st == Breaking:
			remaining := (l.Until - now + ticksPerSecond - 1) / ticksPerSecond
			if period < 0 || period >= remaining {
				return LeaseResult{BreakSeconds: int(remaining)}, nil
			}
		case period < 0 && l.Duration < 0:
			period = 0
		case period < 0 || (l.Duration > 0 && period*ticksPerSecond > l.Until-now):
			period = (l.Until - now + ticksPerSecond - 1) / ticksPerSecond
		}
		if period == 0 {
			*l = Lease{ID: l.ID, Broken: true}
			return LeaseResult{BreakSeconds: 0}, nil
		}
		l.Breaking, l.Until = true, now+period*ticksPerSecond
		return LeaseResult{BreakSeconds: int(period)}, nil
	}
	return LeaseResult{}, azerr.New(azerr.InvalidHeaderValue)
}
