package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// TransformingStore is a ReflectorStore with a transformer (chapter 4's
// queues). A reflector that streams the initial state gathers it in a
// temporary store first; it gives that store the same transformer, so the
// objects held while the stream runs are already the slim ones, not the
// full objects the transformer exists to drop.
//
// Mirrors [k8s.io/client-go/tools/cache.TransformingStore] (reflector.go).
type TransformingStore interface {
	ReflectorStore
	Transformer() store.TransformFunc
}

// StreamedList tells a store, through the context of a Replace, that the
// list was streamed (watch-list) rather than LISTed, and when each object
// arrived on the stream. A traced queue (chapter 4) uses it to give each
// object a "ListAndWatch watchlist" root that starts when the object
// arrived: the time an object waited in the temporary store for the
// bookmark is then visible in its own trace.
//
// Not in client-go, which does not trace.
type StreamedList struct {
	// Arrived holds, for the i-th object of the Replace's list, when it
	// arrived. It is filled only while a TracerProvider records spans;
	// otherwise it is empty and a store treats each object as arriving at
	// the Replace.
	Arrived []time.Time
}

type streamedListKey struct{}

// WithStreamedList returns ctx carrying s, for a Replace of a streamed list.
func WithStreamedList(ctx context.Context, s StreamedList) context.Context {
	return context.WithValue(ctx, streamedListKey{}, s)
}

// StreamedListFrom returns the StreamedList in ctx; ok is false when the
// Replace carries a LIST's result (or ctx is not the reflector's).
func StreamedListFrom(ctx context.Context) (s StreamedList, ok bool) {
	s, ok = ctx.Value(streamedListKey{}).(StreamedList)
	return s, ok
}

// streamStore is the temporary store of a watch-list: a key→object map that
// also remembers the order in which keys first arrived, so the list is
// handed to the real store in the server's order, and, while tracing, when
// each arrived, for StreamedList.
//
// Upstream uses a full Store (a thread-safe, indexable cache); only the
// reflector's goroutine touches this one and nothing reads it by index, so
// a map is enough, and it keys each object once instead of twice. What it
// keeps is the same: one object per key (MetaNamespaceKeyFunc), passed
// through the queue's transformer, if any, on Add and Update.
//
// Unlike upstream's, it then offers each object to the real store's
// ReuseRelisted (when the store is a [ReusingStore]): an object the cache
// holds already (same UID and resourceVersion) is kept as the cached one,
// so during a relist this store holds only what changed, not a second copy
// of the whole cache.
type streamStore struct {
	objects   map[string]streamed
	order     []string // keys in first-arrival order; may name deleted keys
	transform store.TransformFunc
	reuse     ReusingStore         // nil: objects kept as they came
	arrived   map[string]time.Time // nil when not tracing
}

// streamed is one object of a streamStore, and whether the real store's
// ReuseRelisted prepared it.
type streamed struct {
	obj      any
	prepared bool
}

func newStreamStore(transform store.TransformFunc, reuse ReusingStore, traced bool) *streamStore {
	s := &streamStore{objects: map[string]streamed{}, transform: transform, reuse: reuse}
	if traced {
		s.arrived = map[string]time.Time{}
	}
	return s
}

func (s *streamStore) put(obj any) error {
	key, err := store.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return store.KeyError{Obj: obj, Err: err}
	}
	if s.transform != nil {
		if obj, err = s.transform(obj); err != nil {
			return fmt.Errorf("transforming: %w", err)
		}
	}
	if _, seen := s.objects[key]; !seen {
		s.order = append(s.order, key)
	}
	// A later event for the key (a MODIFIED before the bookmark) replaces
	// what came first, reused or not: the newest state wins, as upstream's.
	var prepared bool
	if s.reuse != nil {
		obj, prepared = s.reuse.ReuseRelisted(obj)
	}
	s.objects[key] = streamed{obj, prepared}
	if s.arrived != nil {
		s.arrived[key] = time.Now()
	}
	return nil
}

func (s *streamStore) Add(obj any) error    { return s.put(obj) }
func (s *streamStore) Update(obj any) error { return s.put(obj) }
func (s *streamStore) Delete(obj any) error {
	key, err := store.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return store.KeyError{Obj: obj, Err: err}
	}
	delete(s.objects, key)
	return nil
}
func (s *streamStore) Replace([]any, string) error {
	return errors.New("a watch-list's temporary store is never replaced")
}
func (s *streamStore) Resync() error { return nil }

// list returns the gathered objects in the order they arrived, whether
// each was prepared by the real store's ReuseRelisted (nil when the store
// reuses nothing), and when each arrived (nil when not tracing).
//
// Upstream hands over its temporary store's List(), in Go map order, so the
// initial adds reach handlers in a different order on every run; ours keep
// the server's order (by key, from a kube-apiserver), which reads the same
// on every run of the demo and changes nothing a handler may rely on.
func (s *streamStore) list() (out []any, prepared []bool, at []time.Time) {
	out = make([]any, 0, len(s.objects))
	if s.reuse != nil {
		prepared = make([]bool, 0, len(s.objects))
	}
	if s.arrived != nil {
		at = make([]time.Time, 0, len(s.objects))
	}
	for _, key := range s.order {
		o, ok := s.objects[key]
		if !ok {
			continue
		}
		delete(s.objects, key) // a key deleted and added again is in order twice
		out = append(out, o.obj)
		if prepared != nil {
			prepared = append(prepared, o.prepared)
		}
		if at != nil {
			at = append(at, s.arrived[key])
		}
	}
	return out, prepared, at
}

// watchList fetches the initial state as a stream: one WATCH with
// sendInitialEvents=true, resourceVersionMatch=NotOlderThan and bookmarks.
// The server sends every object as a synthetic ADDED event, then a BOOKMARK
// annotated "k8s.io/initial-events-end" at the resourceVersion the state is
// consistent at. The objects are gathered in a temporary store; at the
// bookmark the real store is Replaced with them, the bookmark's RV becomes
// the last synced one, and the same watch is returned open, so the changes
// after the bookmark arrive on it without a second request.
//
// Why it is the default (KEP-3157): a LIST makes the API server build the
// whole response in memory at once, and a thousand informers relisting after
// a restart can take it down; a stream is served object by object from the
// watch cache.
//
// What happens when the stream fails, as upstream:
//   - the request is refused as "connection refused" or 429: back off, then
//     stream again from the same RV;
//   - 410 Expired or "too large resourceVersion", on the request or as an
//     ERROR event: stream again at once from RV "" (the latest state);
//   - the stream closes before the bookmark, after some events: stream again
//     at once, with a fresh temporary store;
//   - anything else (a server that cannot stream answers 422 Invalid; a
//     stream closed within a second with no events is a VeryShortWatchError;
//     the store refuses the Replace): return the error, and the caller falls
//     back to a LIST.
//
// It returns (nil, nil) when ctx is done.
//
// Mirrors Reflector.watchList in upstream reflector.go. Differences: the
// backoff wait ends when ctx does (upstream's does not, so a stop during a
// refused stream waits out the delay, up to a minute); a store that refuses
// the Replace gets the open watch stopped (upstream's leaks it); each retry
// is reported to the WatchErrorHandler as the watch path's are (upstream
// logs at V(2)).
func (r *Reflector) watchList(ctx context.Context) (watch.Interface, error) {
	var transform store.TransformFunc
	if ts, ok := r.store.(TransformingStore); ok {
		transform = ts.Transformer()
	}
	reuse, _ := r.store.(ReusingStore)
	traced := tracing.Enabled(r.tracerProvider)
	for {
		if ctx.Err() != nil {
			return nil, nil
		}
		// A fresh temporary store per attempt: what a failed stream
		// delivered must not leak into the next one's result.
		//
		// Upstream keys it with DeletionHandlingMetaNamespaceKeyFunc, which
		// differs from MetaNamespaceKeyFunc only for a
		// DeletedFinalStateUnknown (chapter 4's tombstone, which this
		// chapter cannot name). No stream carries one: handleWatch refuses
		// an object without metadata before it reaches the store, as
		// upstream's handleAnyWatch does, so the two keys never differ here.
		temp := newStreamStore(transform, reuse, traced)
		timeout := r.watchTimeoutSeconds()
		sendInitialEvents := true
		options := metav1.ListOptions{
			ResourceVersion:      r.rewatchResourceVersion(),
			AllowWatchBookmarks:  true,
			SendInitialEvents:    &sendInitialEvents,
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			TimeoutSeconds:       &timeout,
		}
		wctx, span := r.tracer.Start(ctx, tracing.SpanWatchList, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(r.nameAttr, tracing.KeyRequestResourceVersion.String(tracing.Value(options.ResourceVersion))))
		w, err := r.streamOnce(ctx, wctx, span, temp, options)
		if w != nil {
			r.resetRetrying()
		}
		if w != nil || errors.Is(err, errSyncFailed) {
			return w, err // the stream's span has ended
		}
		switch {
		case errors.Is(err, errorStopRequested) || ctx.Err() != nil:
			endSpan(span, errorStopRequested)
			return nil, nil
		case errors.Is(err, errStreamClosedEarly):
			span.SetAttributes(tracing.KeyListCount.Int(len(temp.objects)))
			endSpan(span, err)
		case isWatchErrorRetriable(err):
			endSpan(span, err)
			d := r.backoff.delay()
			r.reportWatchRetry(ctx, retryWatchList, options.ResourceVersion, d, err)
			if !r.sleep(ctx, d) {
				return nil, nil
			}
		case isExpiredError(err) || isTooLargeResourceVersionError(err):
			// The RV we streamed from is gone or ahead of the server:
			// stream the latest state instead.
			endSpan(span, err)
			r.setIsLastSyncResourceVersionUnavailable(true)
		default:
			endSpan(span, err)
			return nil, err
		}
	}
}

// streamOnce makes one watch-list attempt: it opens the stream (wctx
// carries span), collects the initial state in temp and, at the
// initial-events-end bookmark, hands it to the store in one Replace at the
// bookmark's resourceVersion and returns the still open watch. Otherwise w
// is nil and err says why the attempt failed: the request's or the
// stream's error, or errStreamClosedEarly; a Replace the store refused is
// wrapped in errSyncFailed.
func (r *Reflector) streamOnce(ctx, wctx context.Context, span trace.Span, temp *streamStore, options metav1.ListOptions) (watch.Interface, error) {
	start := time.Now()
	w, err := r.listerWatcher.WatchWithContext(wctx, options)
	if err != nil {
		return nil, err
	}
	var bookmarkRV string
	done, err := r.handleWatch(ctx, start, w, temp, true, nil, func(rv string, pastSynthetic bool) {
		// Only the bookmark (the first non-ADDED event) carries the RV the
		// whole state is consistent at; the synthetic ADDED events come in
		// no RV order.
		if pastSynthetic {
			bookmarkRV = rv
		}
	})
	if err != nil {
		return nil, err
	}
	if !done {
		// Closed after some events but before the bookmark: the state is
		// incomplete, so it is thrown away and streamed again, at once
		// (handleWatch already turned a close with no events into a
		// VeryShortWatchError).
		return nil, errStreamClosedEarly
	}
	list, prepared, arrived := temp.list()
	span.SetAttributes(tracing.KeyResourceVersion.String(tracing.Value(bookmarkRV)), tracing.KeyListCount.Int(len(list)))
	endSpan(span, nil)
	r.setIsLastSyncResourceVersionUnavailable(false)
	rctx := WithStreamedList(ctx, StreamedList{Arrived: arrived})
	if prepared != nil {
		rctx = WithPrepared(rctx, prepared)
	}
	if err := replace(rctx, r.store, list, bookmarkRV); err != nil {
		w.Stop()
		return nil, fmt.Errorf("%w: %w", errSyncFailed, err)
	}
	r.setLastSyncResourceVersion(bookmarkRV)
	return w, nil
}

// errSyncFailed wraps a Replace the store refused at the end of a stream:
// the cycle ends with it.
var errSyncFailed = errors.New("unable to sync watch-list result")

// errStreamClosedEarly ends one watch-list attempt whose stream closed after
// some events but before the initial-events-end bookmark.
var errStreamClosedEarly = errors.New("the watch-list stream closed before its initial-events-end bookmark; streaming again")
