package e2e

// The Queue service with several front ends, each a real process, on one PostgreSQL database:
// no message is handed to two consumers inside one visibility window, counts stay right,
// create/delete races have one winner and a put acknowledged by one front end is seen by a
// get that starts later on another (docs/postgres.md). Needs TABLO_TEST_POSTGRES_URL.

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablo/tablo/internal/store/postgres/pgtest"
)

func TestQueueFrontEnds(t *testing.T) {
	if onPostgres() {
		t.Skip("engine-independent: runs in the default pass")
	}
	pgtest.Base(t)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildTablo(t)
	fes := frontEnds(t, bin, pgtest.URL(t), 2)
	t.Run("ExactlyOnce", func(t *testing.T) { testQueueFrontEndsExactlyOnce(t, fes) })
	t.Run("SeenAcross", func(t *testing.T) { testQueueFrontEndsSeen(t, fes) })
	t.Run("CreateDeleteRace", func(t *testing.T) { testQueueFrontEndsRace(t, fes) })
}

// testQueueFrontEndsExactlyOnce: producers on both front ends put messages while 16
// consumers spread over them get (with a visibility timeout longer than the test) and
// delete: every message is received exactly once, and the count ends at zero.
func testQueueFrontEndsExactlyOnce(t *testing.T, fes []*tabloProc) {
	const name = "work"
	if _, err := fes[0].queue(t, name).Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	const producers, each, consumers = 4, 300, 16
	const total = producers * each
	var wg sync.WaitGroup
	for p := range producers {
		qc := fes[p%len(fes)].queue(t, name)
		wg.Go(func() {
			for i := range each {
				if _, err := qc.EnqueueMessage(ctx, fmt.Sprintf("m-%d-%d", p, i), nil); err != nil {
					t.Errorf("put: %v", err)
					return
				}
			}
		})
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var received atomic.Int64
	deadline := time.Now().Add(3 * time.Minute)
	for c := range consumers {
		qc := fes[c%len(fes)].queue(t, name)
		wg.Go(func() {
			for received.Load() < total && time.Now().Before(deadline) && !t.Failed() {
				resp, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr[int32](32), VisibilityTimeout: to.Ptr[int32](600)})
				if err != nil {
					t.Errorf("get: %v", err)
					return
				}
				if len(resp.Messages) == 0 {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				for _, m := range resp.Messages {
					mu.Lock()
					seen[*m.MessageText]++
					twice := seen[*m.MessageText] > 1
					mu.Unlock()
					if twice {
						t.Errorf("message %q handed out twice inside its visibility window", *m.MessageText)
					}
					received.Add(1)
					if _, err := qc.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
						t.Errorf("delete %q: %v", *m.MessageText, err)
					}
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(seen) != total || received.Load() != total {
		t.Fatalf("received %d messages, %d distinct, want %d", received.Load(), len(seen), total)
	}
	for i, fe := range fes {
		props, err := fe.queue(t, name).GetProperties(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := *props.ApproximateMessagesCount; n != 0 {
			t.Fatalf("front end %d: approximate count %d after every message was deleted", i, n)
		}
	}
}

// testQueueFrontEndsSeen: a put acknowledged by one front end is seen by a get starting
// later on the other, in order for a single producer; a queue deleted and created again
// through one front end is the new, empty queue on the other, which had cached the old one.
func testQueueFrontEndsSeen(t *testing.T, fes []*tabloProc) {
	const name = "seen"
	a, b := fes[0].queue(t, name), fes[1].queue(t, name)
	if _, err := a.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		text := fmt.Sprintf("s%02d", i)
		if _, err := a.EnqueueMessage(ctx, text, nil); err != nil {
			t.Fatal(err)
		}
		got, err := b.DequeueMessage(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != 1 || *got.Messages[0].MessageText != text {
			t.Fatalf("put %q on one front end, the other's get answered %d messages", text, len(got.Messages))
		}
		if _, err := b.DeleteMessage(ctx, *got.Messages[0].MessageID, *got.Messages[0].PopReceipt, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		if _, err := a.EnqueueMessage(ctx, fmt.Sprintf("o%02d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr[int32](32)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 10 {
		t.Fatalf("peek on the other front end: %d messages, want 10", len(got.Messages))
	}
	for i, m := range got.Messages {
		if want := fmt.Sprintf("o%02d", i); *m.MessageText != want {
			t.Fatalf("peek position %d: %q, want %q", i, *m.MessageText, want)
		}
	}
	// b has the queue cached; a deletes it and creates it again.
	if _, err := a.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.EnqueueMessage(ctx, "lost", nil); !isStatus(err, http.StatusNotFound, "QueueNotFound") {
		t.Fatalf("put on the other front end after Delete Queue: %v, want 404 QueueNotFound", err)
	}
	if _, err := b.PeekMessages(ctx, nil); !isStatus(err, http.StatusNotFound, "QueueNotFound") {
		t.Fatalf("peek on the other front end after Delete Queue: %v, want 404 QueueNotFound", err)
	}
	if _, err := a.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.EnqueueMessage(ctx, "fresh", nil); err != nil {
		t.Fatal(err)
	}
	got2, err := a.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr[int32](32)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got2.Messages) != 1 || *got2.Messages[0].MessageText != "fresh" {
		t.Fatalf("queue created again: got %d messages, want only the one put after", len(got2.Messages))
	}
}

func isStatus(err error, status int, code string) bool {
	st, c := statusCode(err)
	return st == status && c == code
}

// testQueueFrontEndsRace: one queue created, then deleted, at once through both front ends
// (three clients each, each with different metadata): one create and one delete win, the
// others get Azure's 409 QueueAlreadyExists and 404 QueueNotFound.
func testQueueFrontEndsRace(t *testing.T, fes []*tabloProc) {
	for round := range 5 {
		name := fmt.Sprintf("race%d", round)
		race := func(op func(i int, qc *azqueue.QueueClient) error, loser int, loserCode string) {
			var ok atomic.Int64
			var wg sync.WaitGroup
			for i := range 6 {
				qc := fes[i%len(fes)].queue(t, name)
				wg.Go(func() {
					err := op(i, qc)
					if err == nil {
						ok.Add(1)
						return
					}
					if !isStatus(err, loser, loserCode) {
						t.Errorf("%s: %v, want %d %s", name, err, loser, loserCode)
					}
				})
			}
			wg.Wait()
			if ok.Load() != 1 {
				t.Fatalf("%s: %d winners", name, ok.Load())
			}
		}
		race(func(i int, qc *azqueue.QueueClient) error {
			_, err := qc.Create(ctx, &azqueue.CreateOptions{Metadata: map[string]*string{"client": to.Ptr(fmt.Sprint(i))}})
			return err
		}, http.StatusConflict, "QueueAlreadyExists")
		race(func(_ int, qc *azqueue.QueueClient) error {
			_, err := qc.Delete(ctx, nil)
			return err
		}, http.StatusNotFound, "QueueNotFound")
	}
}
