package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"

	"github.com/tablo/tablo/internal/partition"
)

// The partition layer on the Queue and Blob services, through their Go SDKs with the
// default retry policies.

// busyRecorder is a per-retry policy: it counts attempts and the 503s, and notes when the
// first 503 came (after start).
type busyRecorder struct {
	start     time.Time
	attempts  atomic.Int64
	busy      atomic.Int64
	firstBusy atomic.Int64 // nanoseconds after start; 0: none yet
}

func (r *busyRecorder) Do(req *policy.Request) (*http.Response, error) {
	r.attempts.Add(1)
	resp, err := req.Next()
	if resp != nil && resp.StatusCode == http.StatusServiceUnavailable {
		r.busy.Add(1)
		r.firstBusy.CompareAndSwap(0, int64(time.Since(r.start)))
	}
	return resp, err
}

// hammer runs writers that call write with unique ids until the deadline, and returns the
// ids whose write the SDK reported done. A write that fails after the SDK's retries fails t.
func hammer(t *testing.T, writers int, d time.Duration, write func(ctx context.Context, id string) error) []string {
	t.Helper()
	deadline := time.Now().Add(d)
	var (
		mu   sync.Mutex
		done []string
		wg   sync.WaitGroup
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				id := fmt.Sprintf("w%d-%06d", w, i)
				if err := write(context.Background(), id); err != nil {
					t.Errorf("write %s: %v", id, err)
					return
				}
				mu.Lock()
				done = append(done, id)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return done
}

// sameIDs fails t unless got holds each id of want exactly once.
func sameIDs(t *testing.T, what string, want, got []string) {
	t.Helper()
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(want, got) {
		t.Fatalf("%s: %d written, %d read back (written %v... read %v...)", what, len(want), len(got), want[:min(len(want), 3)], got[:min(len(got), 3)])
	}
}

// emulation is the partition layer's settings for the load tests: a target of 40 per second
// met with 4 flat-out writers, hot after 1s.
const (
	emulateQueue = "queue=40,server=1000000,heat=1s,move=200ms,tick=100ms"
	emulateBlob  = "blob=40,server=1000000,heat=1s,move=200ms,tick=100ms"
	// heatFloor is the earliest a 503 can come after a load starts: the heat period less
	// one tick (heat is counted from the tick the load began in).
	heatFloor = 900 * time.Millisecond
)

// checkBusy checks the 503s the SDK met against the emulation: some, none before the heat
// period, and as many as the layer counts; or none at all when off.
func checkBusy(t *testing.T, on bool, rec *busyRecorder, writes int, snap partition.Snapshot) {
	t.Helper()
	busy, attempts := rec.busy.Load(), rec.attempts.Load()
	t.Logf("%d writes, %d attempts, %d 503s (first after %v)", writes, attempts, busy, time.Duration(rec.firstBusy.Load()))
	if !on {
		if busy != 0 || attempts != int64(writes) || snap.Busy["partition"] != 0 {
			t.Fatalf("emulation off: %d 503s, %d attempts for %d writes, layer %v", busy, attempts, writes, snap.Busy)
		}
		return
	}
	if busy == 0 || snap.Busy["partition"] == 0 {
		t.Fatalf("no ServerBusy above the target: %d attempts for %d writes, layer %v", attempts, writes, snap.Busy)
	}
	if first := time.Duration(rec.firstBusy.Load()); first < heatFloor {
		t.Fatalf("first 503 after %v, before the heat period", first)
	}
	if attempts != int64(writes)+busy {
		t.Fatalf("%d attempts for %d writes and %d 503s: other failures were retried", attempts, writes, busy)
	}
}

// loadUnderTarget is one service's target test, run with emulation on and off: setup makes
// the service's client with rec as a per-retry policy (and the default retry policy) and
// returns the write to hammer with, how to read the writes back, and a check of the
// snapshot's accounting.
type loadUnderTarget struct {
	write    func(ctx context.Context, id string) error
	readBack func() []string
	check    func(snap partition.Snapshot)
}

func runLoadUnderTarget(t *testing.T, spec string, setup func(t *testing.T, ts *testServer, rec *busyRecorder) loadUnderTarget) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("emulate=%v", on), func(t *testing.T) {
			if !on {
				spec += ",off" // the same tiny targets, not enforced
			}
			ts := startServerWith(t, spec, "")
			rec := &busyRecorder{}
			l := setup(t, ts, rec)
			rec.attempts.Store(0)
			rec.start = time.Now()
			written := hammer(t, 4, 2*time.Second, l.write)
			snap := ts.app.Partitions().Snapshot(time.Now(), 5)
			checkBusy(t, on, rec, len(written), snap)
			if on {
				// Reads count against the target too: let the partition cool (a heat period
				// without load) so that reading back is not throttled for long.
				time.Sleep(1200 * time.Millisecond)
			}
			sameIDs(t, "read back", written, l.readBack())
			l.check(snap)
		})
	}
}

// A queue loaded above its target answers 503 ServerBusy only after the heat period and
// only with emulation on; azqueue's default retries put every message exactly once (read
// back by dequeueing). Off, even with the same tiny target, nothing is refused.
func TestQueueEmulatedTargetsDefaultRetry(t *testing.T) {
	runLoadUnderTarget(t, emulateQueue, func(t *testing.T, ts *testServer, rec *busyRecorder) loadUnderTarget {
		svc, err := azqueue.NewServiceClientFromConnectionString(ts.queueConnString(),
			&azqueue.ClientOptions{ClientOptions: azcore.ClientOptions{PerRetryPolicies: []policy.Policy{rec}}})
		if err != nil {
			t.Fatal(err)
		}
		qc := svc.NewQueueClient("hotq")
		ctx := context.Background()
		if _, err := qc.Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		return loadUnderTarget{
			write: func(ctx context.Context, id string) error {
				_, err := qc.EnqueueMessage(ctx, id, nil)
				return err
			},
			readBack: func() []string {
				var got []string
				for {
					resp, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32)), VisibilityTimeout: to.Ptr(int32(600))})
					if err != nil {
						t.Fatal(err)
					}
					if len(resp.Messages) == 0 {
						return got
					}
					for _, m := range resp.Messages {
						got = append(got, *m.MessageText)
					}
				}
			},
			check: func(snap partition.Snapshot) {
				for _, tv := range snap.Tables {
					if tv.Service == "queue" && tv.Name == "hotq" && len(tv.Partitions) == 1 && tv.Partitions[0].Key == "hotq" && tv.Kinds["insert"] > 0 {
						return
					}
				}
				t.Fatalf("queue hotq is not accounted as one partition: %+v", snap.Tables)
			},
		}
	})
}

// One append blob loaded above the blob target: 503 ServerBusy only after the heat period
// and only with emulation on; azblob's default retries append every block exactly once
// (appends are not idempotent, so a duplicate would show in the content read back).
func TestBlobEmulatedTargetsDefaultRetry(t *testing.T) {
	runLoadUnderTarget(t, emulateBlob, func(t *testing.T, ts *testServer, rec *busyRecorder) loadUnderTarget {
		cred, err := azblob.NewSharedKeyCredential(devAccount, devKey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := azblob.NewClientWithSharedKeyCredential(ts.blobEndpoint()+"/", cred,
			&azblob.ClientOptions{ClientOptions: azcore.ClientOptions{PerRetryPolicies: []policy.Policy{rec}}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := c.CreateContainer(ctx, "hot", nil); err != nil {
			t.Fatal(err)
		}
		ab := c.ServiceClient().NewContainerClient("hot").NewAppendBlobClient("log")
		if _, err := ab.Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		return loadUnderTarget{
			write: func(ctx context.Context, id string) error {
				_, err := ab.AppendBlock(ctx, streamOf([]byte(id+"\n")), nil)
				return err
			},
			readBack: func() []string {
				resp, err := c.DownloadStream(ctx, "hot", "log", nil)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				return strings.Fields(string(body))
			},
			check: func(snap partition.Snapshot) {
				for _, p := range snap.Hottest {
					if p.Service == "blob" && p.Table == "hot" && p.Key == "log" {
						return
					}
				}
				t.Fatalf("blob hot/log is not among the hottest partitions: %+v", snap.Hottest)
			},
		}
	})
}

// Faults on Queue and Blob: a before-apply fault chosen by queue-name prefix refuses with
// the Queue service's XML error and applies nothing; an after-apply fault loses the reply of
// an applied write (the message is there; the blob holds the new content).
func TestQueueBlobFaults(t *testing.T) {
	ts := startServerWith(t, "", "fault=busy service=queue queue=hot* op=insert every=1; "+
		"fault=timeout when=after service=queue queue=after every=1 op=insert; "+
		"fault=busy when=after service=blob container=after op=insert every=1")
	ctx := context.Background()
	qs := ts.queueService(t) // no retries: each fault is seen
	for _, name := range []string{"hotq", "coldq", "after"} {
		if _, err := qs.NewQueueClient(name).Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	_, err := qs.NewQueueClient("hotq").EnqueueMessage(ctx, "x", nil)
	if !queueerror.HasCode(err, queueerror.ServerBusy) || statusOf(err) != 503 {
		t.Fatalf("enqueue to hotq: %v, want 503 ServerBusy", err)
	}
	if n := peekCount(t, qs.NewQueueClient("hotq")); n != 0 {
		t.Fatalf("a refused message was applied: %d visible", n)
	}
	if _, err := qs.NewQueueClient("coldq").EnqueueMessage(ctx, "x", nil); err != nil {
		t.Fatalf("enqueue to coldq (no rule): %v", err)
	}
	_, err = qs.NewQueueClient("after").EnqueueMessage(ctx, "applied", nil)
	if !queueerror.HasCode(err, queueerror.OperationTimedOut) || statusOf(err) != 500 {
		t.Fatalf("enqueue with an after-apply fault: %v, want 500 OperationTimedOut", err)
	}
	if n := peekCount(t, qs.NewQueueClient("after")); n != 1 {
		t.Fatalf("the message whose reply was lost: %d visible, want 1", n)
	}
	// The wire form: Azure's XML error with its code.
	status, _, body := ts.doQueue(t, http.MethodPost, "/hotq/messages", "<QueueMessage><MessageText>y</MessageText></QueueMessage>")
	if status != 503 || !strings.Contains(body, "<Code>ServerBusy</Code>") || !strings.HasPrefix(body, "<?xml") {
		t.Fatalf("wire: %d %s", status, body)
	}

	bc := blobClient(t, ts) // no retries
	if _, err := bc.CreateContainer(ctx, "after", nil); err != nil {
		t.Fatal(err)
	}
	_, err = bc.UploadBuffer(ctx, "after", "b", []byte("new content"), nil)
	if !bloberror.HasCode(err, bloberror.ServerBusy) || statusOf(err) != 503 {
		t.Fatalf("upload with an after-apply fault: %v, want 503 ServerBusy", err)
	}
	resp, err := bc.DownloadStream(ctx, "after", "b", nil)
	if err != nil {
		t.Fatalf("the upload whose reply was lost is not applied: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "new content" {
		t.Fatalf("blob holds %q", got)
	}
	injected := ts.app.Partitions().Snapshot(time.Now(), 1).Faults.Injected
	if injected["busy"] != 3 || injected["timeout"] != 1 {
		t.Fatalf("faults injected %v, want busy 3 (two queue, one blob) and timeout 1", injected)
	}
}

func peekCount(t *testing.T, qc *azqueue.QueueClient) int {
	t.Helper()
	resp, err := qc.PeekMessages(context.Background(), &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.Messages)
}
