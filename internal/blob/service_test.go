package blob

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
)

func poked(s *Service) bool {
	select {
	case <-s.gc.pokeCh:
		return true
	default:
		return false
	}
}

func wantCode(t *testing.T, what string, err error, code azerr.Code) {
	t.Helper()
	if code == "" && err != nil || code != "" && !azerr.Is(err, code) {
		t.Errorf("%s: %v, want %q", what, err, code)
	}
}

// Create Container checks its name, public access and metadata, refuses a second container
// of the same name, and numbers containers one after the other.
func TestCreateContainer(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	_, err := s.CreateContainer(ctx, "a", "AB", "", nil)
	wantCode(t, "bad name", err, azerr.InvalidResourceName)
	_, err = s.CreateContainer(ctx, "a", "ccc", "Blob", nil)
	wantCode(t, "bad public access", err, azerr.InvalidHeaderValue)
	_, err = s.CreateContainer(ctx, "a", "ccc", "", Meta{{"1", "v"}})
	wantCode(t, "bad metadata", err, azerr.InvalidMetadata)
	for i, name := range []string{"cc1", "cc2", "cc3"} {
		c, err := s.CreateContainer(ctx, "a", name, []string{"", "blob", "container"}[i], Meta{{"k", name}})
		if err != nil || c.ID != uint64(i+1) {
			t.Fatalf("container %s: %+v %v, want id %d", name, c, err, i+1)
		}
	}
	_, err = s.CreateContainer(ctx, "a", "cc2", "", nil)
	wantCode(t, "same name", err, azerr.ContainerAlreadyExists)
	if c, err := s.CreateContainer(ctx, "b", "cc2", "", nil); err != nil || c.ID != 4 {
		t.Errorf("same name in another account: %+v %v", c, err)
	}
	c, err := s.GetContainer(ctx, "a", "cc3")
	if err != nil || c.Name != "cc3" || c.Public != "container" || !reflect.DeepEqual(c.Meta, Meta{{"k", "cc3"}}) || c.Created != c.Modified {
		t.Errorf("read back: %+v %v", c, err)
	}
	_, err = s.GetContainer(ctx, "a", "cc4")
	wantCode(t, "missing", err, azerr.ContainerNotFound)
}

// Set Container Metadata and ACL: an optional lease id (checked when sent), the conditions,
// a new ETag; Lease Container keeps the ETag; Delete Container needs the lease id, meets its
// conditions, removes its blobs and asks for a sweep.
func TestContainerWrites(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	c0, err := s.CreateContainer(ctx, "a", "ccc", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.SetContainerMetadata(ctx, "a", "ccc", Meta{{"a-b", ""}}, Cond{})
	wantCode(t, "bad metadata", err, azerr.InvalidMetadata)
	_, err = s.SetContainerACL(ctx, "a", "ccc", "all", nil, Cond{})
	wantCode(t, "bad public access", err, azerr.InvalidHeaderValue)
	_, err = s.SetContainerMetadata(ctx, "a", "ccc", nil, Cond{LeaseID: idA})
	wantCode(t, "metadata, lease id without a lease", err, azerr.LeaseNotPresentWithContainerOperation)
	_, err = s.SetContainerACL(ctx, "a", "ccc", "", nil, Cond{LeaseID: idA})
	wantCode(t, "ACL, lease id without a lease", err, azerr.LeaseNotPresentWithContainerOperation)
	_, err = s.SetContainerMetadata(ctx, "a", "none", nil, Cond{})
	wantCode(t, "metadata of a missing container", err, azerr.ContainerNotFound)
	_, err = s.SetContainerMetadata(ctx, "a", "ccc", nil, Cond{IfMatch: `"0x1"`})
	wantCode(t, "metadata, If-Match fails", err, azerr.ConditionNotMet)
	_, err = s.SetContainerACL(ctx, "a", "ccc", "", nil, Cond{IfMatch: `"0x1"`})
	wantCode(t, "ACL, If-Match fails", err, azerr.ConditionNotMet)

	c1, err := s.SetContainerMetadata(ctx, "a", "ccc", Meta{{"k", "v"}}, Cond{IfMatch: c0.ETag()})
	if err != nil || c1.ETag() == c0.ETag() || !reflect.DeepEqual(c1.Meta, Meta{{"k", "v"}}) {
		t.Fatalf("Set Container Metadata: %+v %v", c1, err)
	}
	ids := []auth.SignedIdentifier{{ID: "policy"}}
	c2, err := s.SetContainerACL(ctx, "a", "ccc", "blob", ids, Cond{IfMatch: c1.ETag()})
	if err != nil || c2.ETag() == c1.ETag() || c2.Public != "blob" || !reflect.DeepEqual(c2.ACL, ids) {
		t.Fatalf("Set Container ACL: %+v %v", c2, err)
	}

	_, _, err = s.LeaseContainer(ctx, "a", "ccc", LeaseRequest{Action: "acquire", ProposedID: idA, Duration: -1}, Cond{IfMatch: c1.ETag()})
	wantCode(t, "lease, If-Match fails", err, azerr.ConditionNotMet)
	c3, res, err := s.LeaseContainer(ctx, "a", "ccc", LeaseRequest{Action: "acquire", ProposedID: idA, Duration: -1}, Cond{IfMatch: c2.ETag()})
	if err != nil || res.ID != idA || c3.ETag() != c2.ETag() || c3.Lease.State(s.Now()) != Leased {
		t.Fatalf("Lease Container: %+v %+v %v", c3, res, err)
	}
	if c, _ := s.GetContainer(ctx, "a", "ccc"); c.Lease.ID != idA {
		t.Fatalf("lease not stored: %+v", c.Lease)
	}
	_, _, err = s.LeaseContainer(ctx, "a", "ccc", LeaseRequest{Action: "acquire", ProposedID: idB, Duration: -1}, Cond{})
	wantCode(t, "second lease", err, azerr.LeaseAlreadyPresent)

	// leased: metadata and ACL take no id, or the right one
	_, err = s.SetContainerMetadata(ctx, "a", "ccc", nil, Cond{})
	wantCode(t, "metadata of a leased container without an id", err, "")
	_, err = s.SetContainerMetadata(ctx, "a", "ccc", nil, Cond{LeaseID: idB})
	wantCode(t, "metadata, wrong lease id", err, azerr.LeaseIDMismatchWithContainerOperation)
	_, err = s.SetContainerACL(ctx, "a", "ccc", "", nil, Cond{LeaseID: idB})
	wantCode(t, "ACL, wrong lease id", err, azerr.LeaseIDMismatchWithContainerOperation)
	if c, err := s.SetContainerACL(ctx, "a", "ccc", "container", nil, Cond{LeaseID: idA}); err != nil || c.Public != "container" {
		t.Errorf("ACL, right lease id: %+v %v", c, err)
	}
	if c, err := s.SetContainerMetadata(ctx, "a", "ccc", Meta{{"by", "lessee"}}, Cond{LeaseID: idA}); err != nil || !reflect.DeepEqual(c.Meta, Meta{{"by", "lessee"}}) {
		t.Errorf("metadata, right lease id: %+v %v", c, err)
	}
	if c, _ := s.GetContainer(ctx, "a", "ccc"); c.Public != "container" || !reflect.DeepEqual(c.Meta, Meta{{"by", "lessee"}}) {
		t.Errorf("after writes with the lease id: %+v", c)
	}

	// Delete Container
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	poked(s)
	wantCode(t, "delete without the lease id", s.DeleteContainer(ctx, "a", "ccc", Cond{}), azerr.LeaseIDMissing)
	wantCode(t, "delete, wrong lease id", s.DeleteContainer(ctx, "a", "ccc", Cond{LeaseID: idB}), azerr.LeaseIDMismatchWithContainerOperation)
	wantCode(t, "delete, If-Match fails", s.DeleteContainer(ctx, "a", "ccc", Cond{LeaseID: idA, IfMatch: c0.ETag()}), azerr.ConditionNotMet)
	wantCode(t, "delete a missing container", s.DeleteContainer(ctx, "a", "none", Cond{}), azerr.ContainerNotFound)
	if poked(s) {
		t.Error("a refused Delete Container asked for a sweep")
	}
	if err := s.DeleteContainer(ctx, "a", "ccc", Cond{LeaseID: idA}); err != nil {
		t.Fatal(err)
	}
	if !poked(s) {
		t.Error("Delete Container did not ask for a sweep")
	}
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, r, Cond{})
	wantCode(t, "a blob of the deleted container", err, azerr.BlobNotFound)
}

// Delete Account asks for a sweep only when it removed containers.
func TestDeleteAccountPokesOnlyForContainers(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	if err := s.DeleteAccount(ctx, "empty"); err != nil || poked(s) {
		t.Errorf("empty account: %v, or a sweep asked for", err)
	}
	if _, err := s.CreateContainer(ctx, "full", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAccount(ctx, "full"); err != nil || !poked(s) {
		t.Errorf("account with a container: %v, no sweep asked for", err)
	}
}

// List Containers: by name from the marker (inclusive) within the prefix, max per page, the
// next page's first name as the marker.
func TestListContainers(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	for _, n := range []string{"ab1", "ab2", "ab3", "ac1", "b00"} {
		if _, err := s.CreateContainer(ctx, "a", n, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateContainer(ctx, "a2", "ab0", "", nil); err != nil {
		t.Fatal(err)
	}
	names := func(cs []*Container) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	for _, c := range []struct {
		prefix, marker string
		max            int
		want           []string
		next           string
	}{
		{"", "", 10, []string{"ab1", "ab2", "ab3", "ac1", "b00"}, ""},
		{"", "", 5, []string{"ab1", "ab2", "ab3", "ac1", "b00"}, ""},
		{"", "", 2, []string{"ab1", "ab2"}, "ab3"},
		{"", "ab3", 2, []string{"ab3", "ac1"}, "b00"},
		{"ab", "", 10, []string{"ab1", "ab2", "ab3"}, ""},
		{"ab", "ab2", 10, []string{"ab2", "ab3"}, ""},
		{"ab", "a", 10, []string{"ab1", "ab2", "ab3"}, ""},
		{"ab", "ab", 1, []string{"ab1"}, "ab2"},
		{"ac", "", 10, []string{"ac1"}, ""},
	} {
		got, next, err := s.ListContainers(ctx, "a", c.prefix, c.marker, c.max)
		if err != nil || !reflect.DeepEqual(names(got), c.want) || next != c.next {
			t.Errorf("prefix %q marker %q max %d: %v next %q %v, want %v next %q", c.prefix, c.marker, c.max, names(got), next, err, c.want, c.next)
		}
	}
}

// Account settings: a missing document reads nil; an update sees the old document (nil when
// missing), stores what it returns, and passes its error on.
func TestAccountSettings(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	if v, err := s.AccountSetting(ctx, "a", "props"); v != nil || err != nil {
		t.Fatalf("missing setting: %q %v", v, err)
	}
	var seen [][]byte
	set := func(v string) error {
		return s.UpdateAccountSetting(ctx, "a", "props", func(old []byte) ([]byte, error) {
			seen = append(seen, old)
			return []byte(v), nil
		})
	}
	for _, v := range []string{"one", "one", "two"} {
		if err := set(v); err != nil {
			t.Fatal(err)
		}
	}
	if want := [][]byte{nil, []byte("one"), []byte("one")}; !reflect.DeepEqual(seen, want) {
		t.Errorf("old documents %q, want %q", seen, want)
	}
	if v, err := s.AccountSetting(ctx, "a", "props"); string(v) != "two" || err != nil {
		t.Errorf("after updates: %q %v", v, err)
	}
	boom := errors.New("boom")
	err := s.UpdateAccountSetting(ctx, "a", "props", func([]byte) ([]byte, error) { return []byte("three"), boom })
	if !errors.Is(err, boom) {
		t.Errorf("update's error: %v", err)
	}
	if v, _ := s.AccountSetting(ctx, "a", "props"); string(v) != "two" {
		t.Errorf("after a failed update: %q", v)
	}
	if v, _ := s.AccountSetting(ctx, "b", "props"); v != nil {
		t.Errorf("another account: %q", v)
	}
}

// The service's clock is Options.Now, in ticks.
func TestServiceNow(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	s, _ := openService(t, "", func() time.Time { return at })
	if s.Now() != at.UnixNano()/100 {
		t.Errorf("Now() = %d, want %d", s.Now(), at.UnixNano()/100)
	}
}

// A container counter record that is not 8 bytes long (never written so) counts as none:
// Create Container numbers from 1 again and stores a good counter.
func TestCreateContainerOverBadCounter(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	if err := setRaw(ctx, s, keys.BlobContainerCounter(), []byte("bad")); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"cc1", "cc2"} {
		if c, err := s.CreateContainer(ctx, "a", name, "", nil); err != nil || c == nil || c.ID != uint64(i+1) {
			t.Fatalf("container %s over a bad counter: %+v %v", name, c, err)
		}
	}
}
