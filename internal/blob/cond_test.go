package blob

import (
	"context"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

// The conditional headers (blob.md §9.7) against a resource last modified at 10:00:05.5:
// the times compare at whole seconds (HTTP dates have no fraction), If-Match and
// If-None-Match take lists and *, and a failed If-None-Match or If-Modified-Since answers 304
// on a read, 409 BlobAlreadyExists for If-None-Match: * on a create, 412 otherwise.
func TestCondCheck(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 5, 500_000_000, time.UTC)
	mod := at.UnixNano() / 100
	etag := etagOf(mod)
	sec := at.Truncate(time.Second) // what Last-Modified says
	const other = `"0x8DC0000000000001"`
	for _, c := range []struct {
		name               string
		cond               Cond
		exists, read, crea bool
		want               azerr.Code // "" for none; NotModified's code is ConditionNotMet too
		notModified        bool
	}{
		{"none", Cond{}, true, false, false, "", false},
		{"none, missing", Cond{}, false, false, false, "", false},
		{"If-Match equal", Cond{IfMatch: etag}, true, false, false, "", false},
		{"If-Match other", Cond{IfMatch: other}, true, false, false, azerr.ConditionNotMet, false},
		{"If-Match in a list", Cond{IfMatch: other + " , " + etag}, true, false, false, "", false},
		{"If-Match *", Cond{IfMatch: "*"}, true, false, false, "", false},
		{"If-Match * in a list", Cond{IfMatch: other + ", *"}, true, false, false, "", false},
		{"If-Match *, missing", Cond{IfMatch: "*"}, false, false, false, azerr.ConditionNotMet, false},
		{"If-Match on a read", Cond{IfMatch: other}, true, true, false, azerr.ConditionNotMet, false},

		{"If-Unmodified-Since its second", Cond{IfUnmodifiedSince: sec}, true, false, false, "", false},
		{"If-Unmodified-Since a second before", Cond{IfUnmodifiedSince: sec.Add(-time.Second)}, true, false, false, azerr.ConditionNotMet, false},
		{"If-Unmodified-Since later", Cond{IfUnmodifiedSince: sec.Add(time.Hour)}, true, false, false, "", false},
		{"If-Unmodified-Since, missing", Cond{IfUnmodifiedSince: sec.Add(-time.Hour)}, false, false, false, "", false},

		{"If-None-Match other", Cond{IfNoneMatch: other}, true, true, false, "", false},
		{"If-None-Match equal, read", Cond{IfNoneMatch: etag}, true, true, false, azerr.ConditionNotMet, true},
		{"If-None-Match *, read", Cond{IfNoneMatch: "*"}, true, true, false, azerr.ConditionNotMet, true},
		{"If-None-Match equal, write", Cond{IfNoneMatch: etag}, true, false, false, azerr.ConditionNotMet, false},
		{"If-None-Match *, write", Cond{IfNoneMatch: "*"}, true, false, false, azerr.ConditionNotMet, false},
		{"If-None-Match *, create", Cond{IfNoneMatch: " * "}, true, false, true, azerr.BlobAlreadyExists, false},
		{"If-None-Match equal, create", Cond{IfNoneMatch: etag}, true, false, true, azerr.ConditionNotMet, false},
		{"If-None-Match *, missing", Cond{IfNoneMatch: "*"}, false, false, true, "", false},

		{"If-Modified-Since a second before, read", Cond{IfModifiedSince: sec.Add(-time.Second)}, true, true, false, "", false},
		{"If-Modified-Since its second, read", Cond{IfModifiedSince: sec}, true, true, false, azerr.ConditionNotMet, true},
		{"If-Modified-Since its second, write", Cond{IfModifiedSince: sec}, true, false, false, azerr.ConditionNotMet, false},
		{"If-Modified-Since later, write", Cond{IfModifiedSince: sec.Add(time.Hour)}, true, false, false, azerr.ConditionNotMet, false},
		{"If-Modified-Since a second before, write", Cond{IfModifiedSince: sec.Add(-time.Second)}, true, false, false, "", false},
		{"If-Modified-Since, missing", Cond{IfModifiedSince: sec.Add(time.Hour)}, false, true, false, "", false},
	} {
		err := c.cond.check(c.exists, etag, mod, c.read, c.crea)
		if c.want == "" && err != nil || c.want != "" && !azerr.Is(err, c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if got := err == NotModified; got != c.notModified {
			t.Errorf("%s: 304 %v, want %v", c.name, got, c.notModified)
		}
	}
}

// A write's ETag and Last-Modified are the service clock's time at 100 ns, and the ETag
// still moves forward when the clock stands still or steps back.
func TestWriteTimesFollowTheClock(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 5, 123_456_789, time.UTC)
	s, _ := openService(t, "", func() time.Time { return now })
	ctx := context.Background()
	c, err := s.CreateContainer(ctx, "a", "ccc", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := timeOf(c.Modified), now.Truncate(100); !got.Equal(want) || timeOf(c.Created) != want {
		t.Errorf("container created at %v (modified %v), want %v", timeOf(c.Created), got, want)
	}
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	first, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("x"))})
	if err != nil {
		t.Fatal(err)
	}
	if got := timeOf(first.Modified); !got.Equal(now.Truncate(100).Add(100)) {
		t.Errorf("blob written at %v, want %v (one tick after the container)", got, now.Truncate(100).Add(100))
	}
	now = now.Add(-time.Hour)
	second, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("y"))})
	if err != nil {
		t.Fatal(err)
	}
	if second.Modified != first.Modified+1 || second.ETag() == first.ETag() {
		t.Errorf("after the clock stepped back: tick %d, want %d", second.Modified, first.Modified+1)
	}
	if s.Now() != now.UnixNano()/100 {
		t.Errorf("Now() = %d, want %d", s.Now(), now.UnixNano()/100)
	}
}
