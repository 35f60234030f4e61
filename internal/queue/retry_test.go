package queue

import (
	"context"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/store"
	pebblestore "github.com/tablo/tablo/internal/store/pebble"
)

// replacing is a store on which another front end deletes a queue and creates it again just
// before each of the first `times` transactions: the race between a lookup and its lock.
type replacing struct {
	store.Store
	other       *Service
	name        string
	times, done int
}

func (r *replacing) Update(ctx context.Context, locks []store.Lock, fn func(store.Txn) error) error {
	if r.done < r.times {
		r.done++
		if err := r.other.DeleteQueue(ctx, acct, r.name); err != nil {
			return err
		}
		if _, err := r.other.CreateQueue(ctx, acct, r.name, nil); err != nil {
			return err
		}
	}
	return r.Store.Update(ctx, locks, fn)
}

// racedServices returns a service over a store on which another front end replaces queue
// name before each transaction, and that other front end. Both see the store as shared
// when shared is set.
func racedServices(t *testing.T, name string, shared bool) (*Service, *Service, *replacing) {
	t.Helper()
	db, err := pebblestore.Open(pebblestore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	var base store.Store = db
	if shared {
		base = sharedStore{db}
	}
	other := New(base, Options{ReapInterval: -1})
	r := &replacing{Store: base, other: other, name: name}
	var top store.Store = r
	if shared {
		top = sharedStore{r}
	}
	s := New(top, Options{ReapInterval: -1})
	t.Cleanup(func() { s.Close(); other.Close(); db.Close() })
	mustCreate(t, s, name)
	return s, other, r
}

// Delete Queue of a queue deleted and created again between its lookup and its lock deletes
// the new queue; if that keeps happening, it gives up after three attempts.
func TestDeleteQueueOfAQueueReplacedMeanwhile(t *testing.T) {
	s, other, r := racedServices(t, "raced", false)
	r.times = 1
	wantCode(t, s.DeleteQueue(ctx, acct, "raced"), "")
	_, err := other.GetProperties(ctx, acct, "raced")
	wantCode(t, err, azerr.QueueNotFound)

	s, other, r = racedServices(t, "raced", false)
	r.times = 5
	wantCode(t, s.DeleteQueue(ctx, acct, "raced"), azerr.QueueNotFound)
	if r.done != 3 {
		t.Fatalf("%d attempts, want 3", r.done)
	}
	if _, err := other.GetProperties(ctx, acct, "raced"); err != nil {
		t.Fatalf("the queue made by the last replacement: %v", err)
	}
}

// On a shared store, a message operation on a queue deleted and created again between its
// lookup and its lock acts on the new queue; if that keeps happening, it gives up after
// three attempts.
func TestSharedPutToAQueueReplacedMeanwhile(t *testing.T) {
	s, other, r := racedServices(t, "raced", true)
	if _, err := s.PutMessage(ctx, acct, "raced", "first", 0, -1); err != nil { // caches the queue
		t.Fatal(err)
	}
	r.times = r.done + 1
	if _, err := s.PutMessage(ctx, acct, "raced", "second", 0, -1); err != nil {
		t.Fatal(err)
	}
	if got, err := other.PeekMessages(ctx, acct, "raced", 32); err != nil || len(got) != 1 || got[0].Text != "second" {
		t.Fatalf("the new queue holds %+v (%v), want only the second message", got, err)
	}
	start := r.done
	r.times = r.done + 5
	_, err := s.PutMessage(ctx, acct, "raced", "third", 0, -1)
	wantCode(t, err, azerr.QueueNotFound)
	if n := r.done - start; n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
}
