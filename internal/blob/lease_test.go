package blob

import (
	"regexp"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

const (
	idA  = "aaaaaaaa-0000-4000-8000-000000000000"
	idB  = "bbbbbbbb-0000-4000-8000-000000000000"
	sec  = ticksPerSecond
	base = int64(17_000_000_000_000_000) // some instant, in ticks
)

// The lease state is computed from the time alone: a fixed lease is leased until the tick
// it ends on, expired from that tick on; a breaking lease turns broken on its tick; an
// infinite lease never expires.
func TestLeaseStateAtItsEdges(t *testing.T) {
	fixed := Lease{ID: idA, Duration: 15, Until: base + 15*sec}
	breaking := Lease{ID: idA, Duration: -1, Until: base + 5*sec, Breaking: true}
	infinite := Lease{ID: idA, Duration: -1}
	for _, c := range []struct {
		name     string
		l        Lease
		now      int64
		state    string
		status   string
		duration string
	}{
		{"none", Lease{}, base, Available, "unlocked", ""},
		{"fixed, last tick", fixed, base + 15*sec - 1, Leased, "locked", "fixed"},
		{"fixed, at its end", fixed, base + 15*sec, Expired, "unlocked", ""},
		{"infinite, long after", infinite, base + 1000*sec, Leased, "locked", "infinite"},
		{"breaking, last tick", breaking, base + 5*sec - 1, Breaking, "locked", ""},
		{"breaking, at its end", breaking, base + 5*sec, Broken, "unlocked", ""},
		{"broken", Lease{ID: idA, Broken: true}, base, Broken, "unlocked", ""},
		{"broken without id", Lease{Broken: true}, base, Broken, "unlocked", ""},
	} {
		if got := c.l.State(c.now); got != c.state {
			t.Errorf("%s: state %s, want %s", c.name, got, c.state)
		}
		if got := c.l.Status(c.now); got != c.status {
			t.Errorf("%s: status %s, want %s", c.name, got, c.status)
		}
		if got := c.l.DurationName(c.now); got != c.duration {
			t.Errorf("%s: duration %q, want %q", c.name, got, c.duration)
		}
		if got, want := c.l.Active(c.now), c.status == "locked"; got != want {
			t.Errorf("%s: active %v, want %v", c.name, got, want)
		}
	}
}

// A write to a resource with an active lease needs its id; a lease id on a resource without
// one fails, as LeaseLost when it is the id of the lease that expired. Reads need no id, but
// a wrong one fails.
func TestLeaseChecksOfWritesAndReads(t *testing.T) {
	leased := Lease{ID: idA, Duration: 15, Until: base + 15*sec}
	breaking := Lease{ID: idA, Duration: -1, Until: base + 5*sec, Breaking: true}
	expiredAt := base + 15*sec
	for _, c := range []struct {
		name      string
		l         Lease
		now       int64
		id        string
		container bool
		want      azerr.Code // "" for no error
	}{
		{"leased, no id", leased, base, "", false, azerr.LeaseIDMissing},
		{"leased, no id, container", leased, base, "", true, azerr.LeaseIDMissing},
		{"leased, wrong id", leased, base, idB, false, azerr.LeaseIDMismatchWithBlobOperation},
		{"leased, wrong id, container", leased, base, idB, true, azerr.LeaseIDMismatchWithContainerOperation},
		{"leased, right id", leased, base, idA, false, ""},
		{"breaking, no id", breaking, base, "", false, azerr.LeaseIDMissing},
		{"breaking, right id", breaking, base, idA, false, ""},
		{"none, no id", Lease{}, base, "", false, ""},
		{"none, an id", Lease{}, base, idA, false, azerr.LeaseNotPresentWithBlobOperation},
		{"none, an id, container", Lease{}, base, idA, true, azerr.LeaseNotPresentWithContainerOperation},
		{"expired, its id", leased, expiredAt, idA, false, azerr.LeaseLost},
		{"expired, its id, container", leased, expiredAt, idA, true, azerr.LeaseLost},
		{"expired, another id", leased, expiredAt, idB, false, azerr.LeaseNotPresentWithBlobOperation},
		{"expired, no id", leased, expiredAt, "", false, ""},
		{"broken, its id", Lease{ID: idA, Broken: true}, base, idA, false, azerr.LeaseNotPresentWithBlobOperation},
		{"broken, no id", Lease{ID: idA, Broken: true}, base, "", false, ""},
	} {
		err := c.l.checkWrite(c.now, c.id, c.container)
		if c.want == "" && err != nil || c.want != "" && !azerr.Is(err, c.want) {
			t.Errorf("write, %s: %v, want %q", c.name, err, c.want)
		}
	}
	for _, c := range []struct {
		name string
		l    Lease
		now  int64
		id   string
		want azerr.Code
	}{
		{"leased, no id", leased, base, "", ""},
		{"leased, right id", leased, base, idA, ""},
		{"leased, wrong id", leased, base, idB, azerr.LeaseIDMismatchWithBlobOperation},
		{"breaking, right id", breaking, base, idA, ""},
		{"none, no id", Lease{}, base, "", ""},
		{"none, an id", Lease{}, base, idA, azerr.LeaseNotPresentWithBlobOperation},
		{"expired, its id", leased, expiredAt, idA, azerr.LeaseNotPresentWithBlobOperation},
	} {
		err := c.l.checkRead(c.now, c.id)
		if c.want == "" && err != nil || c.want != "" && !azerr.Is(err, c.want) {
			t.Errorf("read, %s: %v, want %q", c.name, err, c.want)
		}
	}
}

// Every lease action in every state (blob.md §10's table), with the lease it leaves and what
// it answers, at the exact edges of durations and break periods.
func TestLeaseActions(t *testing.T) {
	leased := Lease{ID: idA, Duration: 30, Until: base + 30*sec}
	older := Lease{ID: idA, Duration: 30, Until: base + 10*sec} // taken 20 s ago
	infinite := Lease{ID: idA, Duration: -1}
	breaking := Lease{ID: idA, Duration: 30, Until: base + 10*sec, Breaking: true}
	// a break that ends 9.5 s from now: 10 seconds remain, rounded up
	breakingHalf := Lease{ID: idA, Duration: -1, Until: base + 9*sec + sec/2, Breaking: true}
	broken := Lease{ID: idA, Broken: true}
	expired := Lease{ID: idA, Duration: 15, Until: base - 1}
	type req = LeaseRequest
	for _, c := range []struct {
		name   string
		before Lease
		r      LeaseRequest
		want   azerr.Code // "" for success
		after  Lease      // checked on success and on failure (a failure changes nothing)
		res    LeaseResult
	}{
		// acquire: durations 15 to 60 or -1
		{"acquire 14 s", Lease{}, req{Action: "acquire", ProposedID: idA, Duration: 14}, azerr.InvalidHeaderValue, Lease{}, LeaseResult{}},
		{"acquire 15 s", Lease{}, req{Action: "acquire", ProposedID: idA, Duration: 15}, "", Lease{ID: idA, Duration: 15, Until: base + 15*sec}, LeaseResult{ID: idA}},
		{"acquire 60 s", Lease{}, req{Action: "acquire", ProposedID: idA, Duration: 60}, "", Lease{ID: idA, Duration: 60, Until: base + 60*sec}, LeaseResult{ID: idA}},
		{"acquire 61 s", Lease{}, req{Action: "acquire", ProposedID: idA, Duration: 61}, azerr.InvalidHeaderValue, Lease{}, LeaseResult{}},
		{"acquire 0 s", Lease{}, req{Action: "acquire", ProposedID: idA, Duration: 0}, azerr.InvalidHeaderValue, Lease{}, LeaseResult{}},
		{"acquire -2", Lease{}, req{Action: "acquire", ProposedID: idA, Duration: -2}, azerr.InvalidHeaderValue, Lease{}, LeaseResult{}},
		{"acquire infinite", Lease{}, req{Action: "acquire", ProposedID: idA, Duration: -1}, "", Lease{ID: idA, Duration: -1}, LeaseResult{ID: idA}},
		{"acquire leased, same id", older, req{Action: "acquire", ProposedID: idA, Duration: 20}, "", Lease{ID: idA, Duration: 20, Until: base + 20*sec}, LeaseResult{ID: idA}},
		{"acquire leased, other id", leased, req{Action: "acquire", ProposedID: idB, Duration: 20}, azerr.LeaseAlreadyPresent, leased, LeaseResult{}},
		{"acquire breaking, same id", breaking, req{Action: "acquire", ProposedID: idA, Duration: 20}, azerr.LeaseIsBreakingAndCannotBeAcquired, breaking, LeaseResult{}},
		{"acquire breaking, other id", breaking, req{Action: "acquire", ProposedID: idB, Duration: 20}, azerr.LeaseAlreadyPresent, breaking, LeaseResult{}},
		{"acquire broken", broken, req{Action: "acquire", ProposedID: idB, Duration: -1}, "", Lease{ID: idB, Duration: -1}, LeaseResult{ID: idB}},
		{"acquire expired", expired, req{Action: "acquire", ProposedID: idB, Duration: 15}, "", Lease{ID: idB, Duration: 15, Until: base + 15*sec}, LeaseResult{ID: idB}},

		// renew
		{"renew available", Lease{}, req{Action: "renew", ID: ""}, azerr.LeaseIDMismatchWithLeaseOperation, Lease{}, LeaseResult{}},
		{"renew leased", older, req{Action: "renew", ID: idA}, "", Lease{ID: idA, Duration: 30, Until: base + 30*sec}, LeaseResult{ID: idA}},
		{"renew leased, other id", leased, req{Action: "renew", ID: idB}, azerr.LeaseIDMismatchWithLeaseOperation, leased, LeaseResult{}},
		{"renew infinite", infinite, req{Action: "renew", ID: idA}, "", infinite, LeaseResult{ID: idA}},
		{"renew expired", expired, req{Action: "renew", ID: idA}, "", Lease{ID: idA, Duration: 15, Until: base + 15*sec}, LeaseResult{ID: idA}},
		{"renew breaking", breaking, req{Action: "renew", ID: idA}, azerr.LeaseIsBrokenAndCannotBeRenewed, breaking, LeaseResult{}},
		{"renew broken", broken, req{Action: "renew", ID: idA}, azerr.LeaseIsBrokenAndCannotBeRenewed, broken, LeaseResult{}},

		// change
		{"change available", Lease{}, req{Action: "change", ID: idA, ProposedID: idB}, azerr.LeaseNotPresentWithLeaseOperation, Lease{}, LeaseResult{}},
		{"change broken", broken, req{Action: "change", ID: idA, ProposedID: idB}, azerr.LeaseNotPresentWithLeaseOperation, broken, LeaseResult{}},
		{"change expired", expired, req{Action: "change", ID: idA, ProposedID: idB}, azerr.LeaseNotPresentWithLeaseOperation, expired, LeaseResult{}},
		{"change breaking, its id", breaking, req{Action: "change", ID: idA, ProposedID: idB}, azerr.LeaseIsBreakingAndCannotBeChanged, breaking, LeaseResult{}},
		{"change breaking, other id", breaking, req{Action: "change", ID: idB, ProposedID: idB}, azerr.LeaseIDMismatchWithLeaseOperation, breaking, LeaseResult{}},
		{"change leased", leased, req{Action: "change", ID: idA, ProposedID: idB}, "", Lease{ID: idB, Duration: 30, Until: base + 30*sec}, LeaseResult{ID: idB}},
		{"change leased, again", Lease{ID: idB, Duration: 30, Until: base + 30*sec}, req{Action: "change", ID: idA, ProposedID: idB}, "", Lease{ID: idB, Duration: 30, Until: base + 30*sec}, LeaseResult{ID: idB}},
		{"change leased, neither id", leased, req{Action: "change", ID: idB, ProposedID: idB}, azerr.LeaseIDMismatchWithLeaseOperation, leased, LeaseResult{}},

		// release
		{"release available", Lease{}, req{Action: "release", ID: ""}, azerr.LeaseIDMismatchWithLeaseOperation, Lease{}, LeaseResult{}},
		{"release leased", leased, req{Action: "release", ID: idA}, "", Lease{}, LeaseResult{}},
		{"release leased, other id", leased, req{Action: "release", ID: idB}, azerr.LeaseIDMismatchWithLeaseOperation, leased, LeaseResult{}},
		{"release breaking", breaking, req{Action: "release", ID: idA}, "", Lease{}, LeaseResult{}},
		{"release broken", broken, req{Action: "release", ID: idA}, "", Lease{}, LeaseResult{}},
		{"release expired", expired, req{Action: "release", ID: idA}, "", Lease{}, LeaseResult{}},

		// break
		{"break, period 61", leased, req{Action: "break", BreakPeriod: 61}, azerr.InvalidHeaderValue, leased, LeaseResult{}},
		{"break available", Lease{}, req{Action: "break", BreakPeriod: -1}, azerr.LeaseNotPresentWithLeaseOperation, Lease{}, LeaseResult{}},
		{"break expired", expired, req{Action: "break", BreakPeriod: -1}, azerr.LeaseNotPresentWithLeaseOperation, expired, LeaseResult{}},
		{"break broken", broken, req{Action: "break", BreakPeriod: 5}, "", broken, LeaseResult{}},
		{"break infinite, no period", infinite, req{Action: "break", BreakPeriod: -1}, "", Lease{ID: idA, Broken: true}, LeaseResult{}},
		{"break infinite, period 0", infinite, req{Action: "break", BreakPeriod: 0}, "", Lease{ID: idA, Broken: true}, LeaseResult{}},
		{"break infinite, period 60", infinite, req{Action: "break", BreakPeriod: 60}, "", Lease{ID: idA, Duration: -1, Until: base + 60*sec, Breaking: true}, LeaseResult{BreakSeconds: 60}},
		{"break fixed, no period", leased, req{Action: "break", BreakPeriod: -1}, "", Lease{ID: idA, Duration: 30, Until: base + 30*sec, Breaking: true}, LeaseResult{BreakSeconds: 30}},
		{"break fixed, period within", leased, req{Action: "break", BreakPeriod: 10}, "", Lease{ID: idA, Duration: 30, Until: base + 10*sec, Breaking: true}, LeaseResult{BreakSeconds: 10}},
		{"break fixed, period exactly what remains", leased, req{Action: "break", BreakPeriod: 30}, "", Lease{ID: idA, Duration: 30, Until: base + 30*sec, Breaking: true}, LeaseResult{BreakSeconds: 30}},
		{"break fixed, period past its end", Lease{ID: idA, Duration: 30, Until: base + 20*sec + 1}, req{Action: "break", BreakPeriod: 40}, "", Lease{ID: idA, Duration: 30, Until: base + 21*sec, Breaking: true}, LeaseResult{BreakSeconds: 21}},
		{"break fixed, period 0", leased, req{Action: "break", BreakPeriod: 0}, "", Lease{ID: idA, Broken: true}, LeaseResult{}},
		{"break breaking, whole seconds remain", breaking, req{Action: "break", BreakPeriod: -1}, "", breaking, LeaseResult{BreakSeconds: 10}},
		{"break breaking, no period", breakingHalf, req{Action: "break", BreakPeriod: -1}, "", breakingHalf, LeaseResult{BreakSeconds: 10}},
		{"break breaking, period what remains", breakingHalf, req{Action: "break", BreakPeriod: 10}, "", breakingHalf, LeaseResult{BreakSeconds: 10}},
		{"break breaking, longer period", breakingHalf, req{Action: "break", BreakPeriod: 11}, "", breakingHalf, LeaseResult{BreakSeconds: 10}},
		{"break breaking, shorter period", breakingHalf, req{Action: "break", BreakPeriod: 9}, "", Lease{ID: idA, Duration: -1, Until: base + 9*sec, Breaking: true}, LeaseResult{BreakSeconds: 9}},
		{"break breaking, period 0", breakingHalf, req{Action: "break", BreakPeriod: 0}, "", Lease{ID: idA, Broken: true}, LeaseResult{}},

		{"unknown action", leased, req{Action: "steal", ID: idA}, azerr.InvalidHeaderValue, leased, LeaseResult{}},
	} {
		l := c.before
		res, err := l.apply(base, c.r)
		if c.want == "" && err != nil || c.want != "" && !azerr.Is(err, c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
			continue
		}
		if l != c.after {
			t.Errorf("%s: lease %+v, want %+v", c.name, l, c.after)
		}
		if res != c.res {
			t.Errorf("%s: result %+v, want %+v", c.name, res, c.res)
		}
	}
}

// Acquire without a proposed id makes a random version 4 UUID, a new one each time.
func TestLeaseAcquireGeneratesID(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 50 {
		var l Lease
		res, err := l.apply(base, LeaseRequest{Action: "acquire", Duration: -1})
		if err != nil || !uuid.MatchString(res.ID) || l.ID != res.ID || seen[res.ID] {
			t.Fatalf("acquire without an id: %q (lease %q, seen %v), %v", res.ID, l.ID, seen[res.ID], err)
		}
		seen[res.ID] = true
	}
}
