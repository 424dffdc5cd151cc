package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// exportQueue is the demo's batch span processor: the spans the informer
// ends go into a bounded queue, and one goroutine of its own hands them to
// the exporter in batches. OnEnd never waits: when the queue is full the
// span is dropped and counted (Dropped).
//
// Why not the SDK's BatchSpanProcessor: its OnEnd either waits for room
// (WithBlocking, which the demo used) or drops without telling anyone how
// many (v1.47.0 counts them only for its own debug log and opt-in
// metrics). Waiting is what froze the informer behind a collector that
// accepted connections and never answered: the informer ends spans on its
// own goroutines, some under its locks (chapter 4's RealFIFO ends a
// delta's root while holding its queue lock), so once the queue was full
// every End waited on the exporter, the watch crawled at ~20 deltas/s, and
// the live view's /api/state, which reads the queue's length under that
// lock, took 5–8 s. Tracing must cost the informer only its own work.
type exportQueue struct {
	exp           sdktrace.SpanExporter
	queue         chan sdktrace.ReadOnlySpan
	batchSize     int
	batchTimeout  time.Duration
	exportTimeout time.Duration

	dropped atomic.Int64
	stopped atomic.Bool

	flush chan chan struct{} // ForceFlush's requests to the worker
	stop  chan struct{}      // closed by Shutdown: export what is queued, then end
	done  chan struct{}      // closed when the worker has ended
	// exportCtx is every export's parent; Shutdown cancels it when its
	// deadline passes, so that an export stuck on a silent collector ends.
	exportCtx    context.Context
	cancelExport context.CancelFunc
	stopOnce     sync.Once
}

// Sizes of the demo's export queue. The queue holds the spans of some
// 4,000 events (a traced event makes about 17 spans with three
// listeners): a scripted run fits whole, so only an exporter that really
// cannot keep up loses spans. A batch goes out when it is full or a second
// after its first span, so a trace viewer shows a live run within moments.
const (
	exportQueueSize     = 1 << 16
	exportBatchSize     = 4096
	exportBatchTimeout  = time.Second
	exportExportTimeout = 30 * time.Second // the SDK batch processor's default
)

func NewExportQueue(exp sdktrace.SpanExporter) *exportQueue {
	return newExportQueueSized(exp, exportQueueSize, exportBatchSize)
}

// newExportQueueSized is newExportQueue with other sizes, for tests.
func newExportQueueSized(exp sdktrace.SpanExporter, queueSize, batchSize int) *exportQueue {
	q := &exportQueue{
		exp:           exp,
		queue:         make(chan sdktrace.ReadOnlySpan, queueSize),
		batchSize:     batchSize,
		batchTimeout:  exportBatchTimeout,
		exportTimeout: exportExportTimeout,
		flush:         make(chan chan struct{}),
		stop:          make(chan struct{}),
		done:          make(chan struct{}),
	}
	q.exportCtx, q.cancelExport = context.WithCancel(context.Background())
	go q.run()
	return q
}

// Dropped is how many spans found the queue full.
func (q *exportQueue) Dropped() int64 { return q.dropped.Load() }

func (q *exportQueue) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues s, or drops and counts it: it never waits.
func (q *exportQueue) OnEnd(s sdktrace.ReadOnlySpan) {
	if q.stopped.Load() || !s.SpanContext().IsSampled() {
		return
	}
	select {
	case q.queue <- s:
	default:
		q.dropped.Add(1)
	}
}

func (q *exportQueue) run() {
	defer close(q.done)
	batch := make([]sdktrace.ReadOnlySpan, 0, q.batchSize)
	export := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(q.exportCtx, q.exportTimeout)
		// The error is the counting exporter's to keep (countingExporter).
		_ = q.exp.ExportSpans(ctx, batch)
		cancel()
		clear(batch) // let the spans go
		batch = batch[:0]
	}
	// drain exports everything queued now.
	drain := func() {
		for {
			select {
			case s := <-q.queue:
				batch = append(batch, s)
				if len(batch) == q.batchSize {
					export()
				}
			default:
				export()
				return
			}
		}
	}
	timer := time.NewTimer(q.batchTimeout)
	defer timer.Stop()
	for {
		select {
		case s := <-q.queue:
			if len(batch) == 0 {
				timer.Reset(q.batchTimeout)
			}
			batch = append(batch, s)
			if len(batch) == q.batchSize {
				export()
			}
		case <-timer.C:
			export()
		case ch := <-q.flush:
			drain()
			close(ch)
		case <-q.stop:
			drain()
			return
		}
	}
}

// ForceFlush exports what is queued now, within ctx.
func (q *exportQueue) ForceFlush(ctx context.Context) error {
	ch := make(chan struct{})
	select {
	case q.flush <- ch:
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown exports what is queued and shuts the exporter down, within ctx.
// When ctx ends first, the export under way is cancelled and the spans
// still queued are left unexported (the caller counts them: recorded minus
// exported, failed and dropped).
func (q *exportQueue) Shutdown(ctx context.Context) error {
	var err error
	q.stopOnce.Do(func() {
		q.stopped.Store(true)
		close(q.stop)
		select {
		case <-q.done:
		case <-ctx.Done():
			q.cancelExport()
			err = ctx.Err()
		}
		// The OTLP exporter's Shutdown interrupts a request in flight and
		// returns at once.
		if serr := q.exp.Shutdown(ctx); err == nil {
			err = serr
		}
		q.cancelExport()
	})
	return err
}
