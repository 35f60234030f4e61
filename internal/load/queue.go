package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// Queue workloads drive the Queue service through the official azqueue client. They run
// only when named (--workloads queue, or by name): "all" is the Table workloads.

// queueMessage is the text every queue workload puts (a typical small work item).
const queueMessage = `{"task":"resize","blob":"images/2026/11/25/photo-000001.jpg","width":640}`

func queueWorkloads() []workload {
	return []workload{
		{name: "queue-put", summary: "put one message", layout: layoutEmpty, queue: true, op: opQueuePut},
		{name: "queue-get-delete", summary: "get one preloaded message and delete it (one op = both requests)", layout: layoutQueue, queue: true, op: opQueueGetDelete},
		{name: "queue-peek", summary: "peek one message of a preloaded queue", layout: layoutQueue, queue: true, op: opQueuePeek},
		{name: "queue-pipeline", summary: "put, get and delete one message (one op = three requests)", layout: layoutEmpty, queue: true, op: opQueuePipeline},
	}
}

// errQueueDrained: a get-delete run outlasted its preloaded messages.
var errQueueDrained = errors.New("queue drained: raise --preload")

func opQueuePut(ctx context.Context, w *worker) (int, error) {
	_, err := w.queue.EnqueueMessage(ctx, queueMessage, nil)
	return 1, err
}

func opQueueGetDelete(ctx context.Context, w *worker) (int, error) {
	got, err := w.queue.DequeueMessage(ctx, nil)
	if err != nil {
		return 0, err
	}
	if len(got.Messages) == 0 {
		return 0, errQueueDrained
	}
	m := got.Messages[0]
	_, err = w.queue.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil)
	return 1, err
}

func opQueuePeek(ctx context.Context, w *worker) (int, error) {
	got, err := w.queue.PeekMessage(ctx, nil)
	if err == nil && len(got.Messages) == 0 {
		err = errQueueDrained
	}
	return 1, err
}

func opQueuePipeline(ctx context.Context, w *worker) (int, error) {
	if _, err := w.queue.EnqueueMessage(ctx, queueMessage, nil); err != nil {
		return 0, err
	}
	got, err := w.queue.DequeueMessage(ctx, nil)
	if err != nil {
		return 0, err
	}
	if len(got.Messages) == 0 {
		return 0, nil // another worker took it: still one put, get and (empty) answer
	}
	m := got.Messages[0]
	_, err = w.queue.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil)
	return 1, err
}

// queuePreloadWorkload puts n messages (one op = one put).
func queuePreloadWorkload() workload {
	return workload{name: "preload", summary: "put messages", queue: true, op: opQueuePut}
}

// newQueueServiceClient builds an azqueue service client for one endpoint, with the same
// transport choices as newServiceClient.
func newQueueServiceClient(ci ConnInfo, concurrency int) (*azqueue.ServiceClient, error) {
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          concurrency + 16,
		MaxIdleConnsPerHost:   concurrency + 16,
		IdleConnTimeout:       3 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute,
		ExpectContinueTimeout: time.Second,
	}
	opts := &azqueue.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:     policy.RetryOptions{MaxRetries: -1},
		Transport: &http.Client{Transport: transport},
	}}
	endpoint := ci.QueueURL()
	if ci.SAS != "" {
		return azqueue.NewServiceClientWithNoCredential(endpoint+"/?"+ci.SAS, opts)
	}
	cred, err := azqueue.NewSharedKeyCredential(ci.Account, ci.Key)
	if err != nil {
		return nil, fmt.Errorf("queue credential: %w", err)
	}
	return azqueue.NewServiceClientWithSharedKeyCredential(endpoint, cred, opts)
}

// queueName is a fresh queue's name for a workload run (lower case, digits, hyphens).
func queueName(workload string, seed uint64) string {
	return strings.ToLower(fmt.Sprintf("bench-%s-%x", workload, seed&0xffffffffff))
}

// runQueueWorkload creates a fresh queue, preloads it when the workload reads messages,
// measures, and deletes the queue.
func runQueueWorkload(ctx context.Context, cfg *config, t *target, wl workload, seed uint64, prog *progress) (phase, error) {
	if t.qsvc == nil {
		qs, err := newQueueServiceClient(t.conn, cfg.Concurrency)
		if err != nil {
			return phase{}, err
		}
		t.qsvc = qs
	}
	name := queueName(strings.TrimPrefix(wl.name, "queue-"), seed)
	qc := t.qsvc.NewQueueClient(name)
	if err := withTimeout(ctx, cfg.OpTimeout, func(ctx context.Context) error {
		_, err := qc.Create(ctx, nil)
		return err
	}); err != nil {
		return phase{}, fmt.Errorf("create queue %s: %w", name, err)
	}
	defer func() {
		_ = withTimeout(context.WithoutCancel(ctx), cfg.OpTimeout, func(ctx context.Context) error {
			_, err := qc.Delete(ctx, nil)
			return err
		})
	}()
	if wl.layout == layoutQueue {
		pc := *cfg
		pc.Ops, pc.Duration, pc.MaxErrors = int64(cfg.Preload), 0, 1
		pc.Concurrency = preloadWorkers(cfg)
		unmeasured := *t
		unmeasured.pid = 0
		p, err := measure(ctx, &pc, &unmeasured, queuePreloadWorkload(), workerState{queue: qc}, 0, prog)
		if err == nil && p.errors > 0 {
			err = fmt.Errorf("put: %s", p.firstErr)
		}
		if err != nil {
			return phase{}, fmt.Errorf("preload %s: %w", name, err)
		}
	}
	return measure(ctx, cfg, t, wl, workerState{queue: qc}, seed, prog)
}
