package router

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/moment"
)

// DefaultAsyncQueue is each asynchronous client's queue length when
// Config.AsyncQueue is 0.
const DefaultAsyncQueue = 64

// AsyncClients dispatches recorded receipts to clients off the caller's
// path, as `lifeloop run` needs: a slow or broken client never delays the
// harness. Each client has a bounded queue and one worker goroutine.
// Enqueueing never blocks: when a queue is full the dispatch is dropped
// and counted, and the count is reported as a warning on the next receipt.
// A dispatch that fails (a client misbehaviour, or a status=failed
// response) becomes a receipt of its own: the same event and event_id,
// status failed, the failure and retry classes, and parent_receipt_id set
// to the receipt that was dispatched. Such receipts are recorded (ledger
// and sinks) but not dispatched again.
type AsyncClients struct {
	r       *Router
	workers []*asyncWorker
	wg      sync.WaitGroup

	closeOnce sync.Once
	mu        sync.Mutex
	closed    bool
}

type asyncJob struct {
	observed contract.LifecycleReceipt
	env      contract.DispatchEnvelope
}

type asyncWorker struct {
	label  string
	client Client
	queue  chan asyncJob
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	dropped  uint64
	reported uint64
}

func newAsyncClients(r *Router, clients []Client, size int) *AsyncClients {
	if size <= 0 {
		size = DefaultAsyncQueue
	}
	a := &AsyncClients{r: r}
	for i, c := range clients {
		ctx, cancel := context.WithCancel(context.Background())
		w := &asyncWorker{label: clientLabel(c, i), client: c, queue: make(chan asyncJob, size), ctx: ctx, cancel: cancel}
		a.workers = append(a.workers, w)
		a.wg.Add(1)
		go a.run(w)
	}
	return a
}

// enqueue hands a recorded receipt to every worker without blocking.
func (a *AsyncClients) enqueue(observed contract.LifecycleReceipt, env contract.DispatchEnvelope) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		for _, w := range a.workers {
			w.drop()
		}
		return
	}
	if observed.Sequence != nil {
		seq := *observed.Sequence
		env.Request.Sequence = &seq
	}
	for _, w := range a.workers {
		select {
		case w.queue <- asyncJob{observed: observed, env: env}:
		default:
			w.drop()
		}
	}
}

func (w *asyncWorker) drop() {
	w.mu.Lock()
	w.dropped++
	w.mu.Unlock()
}

// run is one client's worker; it exits when its queue is closed and
// drained, or its context is cancelled by Close's deadline.
func (a *AsyncClients) run(w *asyncWorker) {
	defer a.wg.Done()
	for job := range w.queue {
		if w.ctx.Err() != nil {
			w.drop()
			continue
		}
		resp, f := w.client.Invoke(w.ctx, job.env)
		var fc contract.FailureClass
		var rc contract.RetryClass
		var warn contract.Warning
		switch {
		case f != nil:
			fc, rc = f.Class, f.Retry
			warn = f.Warning()
		case resp.Status == contract.StatusFailed:
			fc, rc = responseFailure(resp)
			warn = contract.Warning{Code: WarnClientFailed, Message: fmt.Sprintf("%s answered status failed (%s)", w.label, fc)}
		default:
			continue
		}
		a.r.recordClientFailure(job.observed, fc, rc, append([]contract.Warning{warn}, resp.Warnings...))
	}
}

// takeWarnings reports drops since the last report, one warning per
// client.
func (a *AsyncClients) takeWarnings() []contract.Warning {
	var out []contract.Warning
	for _, w := range a.workers {
		w.mu.Lock()
		if d := w.dropped - w.reported; d > 0 {
			out = append(out, contract.Warning{Code: WarnAsyncDropped,
				Message: fmt.Sprintf("%s: %d dispatches dropped because its queue was full or closed", w.label, d)})
			w.reported = w.dropped
		}
		w.mu.Unlock()
	}
	return out
}

// Dropped returns the number of dispatches dropped so far, over all
// clients.
func (a *AsyncClients) Dropped() uint64 {
	var n uint64
	for _, w := range a.workers {
		w.mu.Lock()
		n += w.dropped
		w.mu.Unlock()
	}
	return n
}

// Close stops accepting dispatches and lets the workers finish what is
// queued. When ctx is done first, the in-flight invocations are cancelled
// (their process groups killed by the invoker), the rest of the queues is
// dropped, and Close returns ctx's error after the workers have exited.
// Close is idempotent.
func (a *AsyncClients) Close(ctx context.Context) error {
	a.closeOnce.Do(func() {
		a.mu.Lock()
		a.closed = true
		for _, w := range a.workers {
			close(w.queue)
		}
		a.mu.Unlock()
	})
	done := make(chan struct{})
	go func() {
		a.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("async clients: close deadline passed, pending dispatches dropped: %w", ctx.Err())
		for _, w := range a.workers {
			w.cancel()
		}
		<-done
	}
	for _, w := range a.workers {
		w.cancel()
	}
	return err
}

// recordClientFailure records the failure receipt of one asynchronous
// dispatch. The ledger error, if any, is logged: there is no caller to
// return it to.
func (r *Router) recordClientFailure(observed contract.LifecycleReceipt, fc contract.FailureClass, rc contract.RetryClass, warnings []contract.Warning) {
	parent := observed.ReceiptID
	f := contract.DerivedReceipt(observed)
	f.ReceiptID = r.cfg.IDs.New(ids.PrefixReceipt)
	f.Event, f.EventID, f.ParentReceiptID = observed.Event, observed.EventID, &parent
	f.Status, f.AtEpochS = contract.StatusFailed, r.cfg.Now().Unix()
	f.FailureClass, f.RetryClass = &fc, &rc
	f.Warnings = slices.Concat(warnings, r.takeWarnings())
	if _, err := r.record(f, moment.Moment{}); err != nil {
		r.log.Error("recording an async client failure failed", "parent_receipt_id", parent, "err", err)
	}
}
