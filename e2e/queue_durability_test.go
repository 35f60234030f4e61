package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

func (p *tabloProc) queue(t testing.TB, name string) *azqueue.QueueClient {
	t.Helper()
	cs := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;QueueEndpoint=%s;", devAccount, devKey, p.queueEndpoint)
	c, err := azqueue.NewQueueClientFromConnectionString(cs, name, queueClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Acknowledged puts, updates and deletes survive kill -9; a message taken but not deleted
// comes back once its visibility timeout has passed (the deadline is stored).
func TestQueueCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildTablo(t)
	dir := t.TempDir()
	p, _ := startTablo(t, bin, dir)
	ctx := context.Background()
	qc := p.queue(t, "crash-queue")
	if _, err := qc.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				text := fmt.Sprintf("w%d-%d", w, i)
				if _, err := qc.EnqueueMessage(ctx, text, nil); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[text] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// Take 20: delete 10, update 5 (new text, visible at once), leave 5 hidden for 2 s.
	got, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(20)), VisibilityTimeout: to.Ptr(int32(2))})
	if err != nil || len(got.Messages) != 20 {
		t.Fatal(got, err)
	}
	for i, m := range got.Messages {
		switch {
		case i < 10:
			if _, err := qc.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
				t.Fatal(err)
			}
			delete(acked, *m.MessageText)
		case i < 15:
			if _, err := qc.UpdateMessage(ctx, *m.MessageID, *m.PopReceipt, "updated-"+*m.MessageText, &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(0))}); err != nil {
				t.Fatal(err)
			}
			delete(acked, *m.MessageText)
			acked["updated-"+*m.MessageText] = true
		}
	}
	taken := time.Now()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.waitExit(t, 10*time.Second)

	p2, _ := startTablo(t, bin, dir)
	qc = p2.queue(t, "crash-queue")
	props, err := qc.GetProperties(ctx, nil)
	if err != nil || int(*props.ApproximateMessagesCount) != len(acked) {
		t.Fatalf("count after restart %v, want %d (%v)", props.ApproximateMessagesCount, len(acked), err)
	}
	// Right after the restart the 5 hidden ones are still hidden (if 2 s have not passed).
	seen := map[string]bool{}
	drain := func() {
		for {
			got, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32)), VisibilityTimeout: to.Ptr(int32(600))})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Messages) == 0 {
				return
			}
			for _, m := range got.Messages {
				seen[*m.MessageText] = true
			}
		}
	}
	drain()
	if time.Since(taken) < 2*time.Second && len(seen) != len(acked)-5 {
		t.Fatalf("before the deadline: %d visible, want %d", len(seen), len(acked)-5)
	}
	time.Sleep(time.Until(taken.Add(2100 * time.Millisecond)))
	drain()
	for text := range acked {
		if !seen[text] {
			t.Fatalf("acknowledged message %q lost", text)
		}
	}
	if len(seen) != len(acked) {
		t.Fatalf("%d messages after restart, want %d", len(seen), len(acked))
	}
}
