package queue

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// Metadata of several pairs is kept whole, through Set Queue Metadata, Get Queue Metadata and
// List Queues; metadata that breaks a rule changes nothing; a missing queue or a bad name is
// refused as Azure refuses it.
func TestSetMetadata(t *testing.T) {
	s, _ := newService(t, true)
	md := []Meta{{"First", "1"}, {"second", "2"}, {"_third", ""}}
	if _, err := s.CreateQueue(ctx, acct, "meta", md); err != nil {
		t.Fatal(err)
	}
	wantMeta := func(want []Meta) {
		t.Helper()
		p, err := s.GetProperties(ctx, acct, "meta")
		if err != nil || !slices.Equal(p.Metadata, want) {
			t.Fatalf("metadata %v (%v), want %v", p.Metadata, err, want)
		}
		l, _, err := s.ListQueues(ctx, acct, "meta", "", 1)
		if err != nil || len(l) != 1 || !slices.Equal(l[0].Metadata, want) {
			t.Fatalf("listed %+v (%v), want %v", l, err, want)
		}
	}
	wantMeta(md)
	md2 := []Meta{{"a", "x"}, {"B", strings.Repeat("y", 100)}}
	wantCode(t, s.SetMetadata(ctx, acct, "meta", md2), "")
	wantMeta(md2)
	wantCode(t, s.SetMetadata(ctx, acct, "meta", []Meta{{"ok", "1"}, {"1bad", "2"}}), azerr.InvalidMetadata)
	wantMeta(md2)
	wantCode(t, s.SetMetadata(ctx, acct, "meta", nil), "")
	wantMeta(nil)
	wantCode(t, s.SetMetadata(ctx, acct, "nosuch", md2), azerr.QueueNotFound)
	wantCode(t, s.SetMetadata(ctx, acct, "Bad", md2), azerr.InvalidResourceName)
}

// A queue's access policies are kept as given and replaced whole; none is nil.
func TestQueueACL(t *testing.T) {
	s, _ := newService(t, true)
	mustCreate(t, s, "acl")
	if doc, err := s.ACL(ctx, acct, "acl"); err != nil || doc != nil {
		t.Fatalf("a new queue's policies: %q %v", doc, err)
	}
	doc := []byte(`<SignedIdentifiers><SignedIdentifier><Id>p</Id></SignedIdentifier></SignedIdentifiers>`)
	wantCode(t, s.SetACL(ctx, acct, "acl", doc), "")
	if got, err := s.ACL(ctx, acct, "acl"); err != nil || string(got) != string(doc) {
		t.Fatalf("policies %q %v, want %q", got, err, doc)
	}
	wantCode(t, s.SetACL(ctx, acct, "acl", nil), "")
	if got, err := s.ACL(ctx, acct, "acl"); err != nil || got != nil {
		t.Fatalf("policies after clearing: %q %v", got, err)
	}
	_, err := s.ACL(ctx, acct, "nosuch")
	wantCode(t, err, azerr.QueueNotFound)
	wantCode(t, s.SetACL(ctx, acct, "nosuch", doc), azerr.QueueNotFound)
	_, err = s.ACL(ctx, acct, "ab")
	wantCode(t, err, azerr.OutOfRangeInput)
	wantCode(t, s.SetACL(ctx, acct, "ab", doc), azerr.OutOfRangeInput)
}

// maxresults of 0, negative or above 5000 means 5000; a marker before the prefix starts at
// the prefix; a marker of another account is refused.
func TestListQueuesPageSize(t *testing.T) {
	s, _ := newService(t, true)
	for i := range 3 {
		mustCreate(t, s, fmt.Sprintf("page-%d", i))
	}
	mustCreate(t, s, "other")
	for _, max := range []int{0, -1, MaxListResults, MaxListResults + 1} {
		l, next, err := s.ListQueues(ctx, acct, "page-", "", max)
		if err != nil || len(l) != 3 || next != "" {
			t.Fatalf("maxresults %d: %d queues, next %q, %v", max, len(l), next, err)
		}
	}
	l, next, err := s.ListQueues(ctx, acct, "page-", "/"+acct+"/zzz", 2)
	if err != nil || len(l) != 0 || next != "" {
		t.Fatalf("marker after the prefix: %+v %q %v", l, next, err)
	}
	l, next, err = s.ListQueues(ctx, acct, "page-", "/"+acct+"/a", 2)
	if err != nil || len(l) != 2 || l[0].Name != "page-0" || next != "/"+acct+"/page-2" {
		t.Fatalf("marker before the prefix: %+v %q %v", l, next, err)
	}
	_, _, err = s.ListQueues(ctx, acct, "", "/otheraccount/page-0", 2)
	wantCode(t, err, azerr.InvalidMarker)
}

// An account setting is nil until set; an update sees the document it replaces, and one
// whose function fails changes nothing.
func TestAccountSettings(t *testing.T) {
	s, _ := newService(t, true)
	if v, err := s.AccountSetting(ctx, acct, "cors"); err != nil || v != nil {
		t.Fatalf("never set: %q %v", v, err)
	}
	var seen []string
	for _, doc := range []string{"one", "two"} {
		err := s.UpdateAccountSetting(ctx, acct, "cors", func(old []byte) ([]byte, error) {
			seen = append(seen, string(old))
			return []byte(doc), nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(seen, []string{"", "one"}) {
		t.Fatalf("updates saw %q, want the document each replaced", seen)
	}
	boom := errors.New("boom")
	if err := s.UpdateAccountSetting(ctx, acct, "cors", func([]byte) ([]byte, error) { return []byte("three"), boom }); !errors.Is(err, boom) {
		t.Fatalf("failed update: %v", err)
	}
	if v, err := s.AccountSetting(ctx, acct, "cors"); err != nil || string(v) != "two" {
		t.Fatalf("after a failed update: %q %v, want two", v, err)
	}
	if v, _ := s.AccountSetting(ctx, "otheraccount", "cors"); v != nil {
		t.Fatalf("another account's setting: %q", v)
	}
}

// Delete Queue forgets what the service remembered about the queue: a service whose queues
// come and go does not grow.
func TestDeleteQueueForgetsState(t *testing.T) {
	s, _ := newService(t, true)
	mustCreate(t, s, "gone")
	if _, err := s.PutMessage(ctx, acct, "gone", "x", 0, -1); err != nil {
		t.Fatal(err)
	}
	id := mustID(t, s, "gone")
	wantCode(t, s.DeleteQueue(ctx, acct, "gone"), "")
	if _, ok := s.states.Load(id); ok {
		t.Fatal("the deleted queue's state is still held")
	}
}
