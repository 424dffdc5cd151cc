package scalegen

import (
	"context"
	"net/http"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Expiring wraps a ListerWatcher (a real server's, say) so that a test can
// end every watch open through it with a 410 Expired ERROR event, what
// kube-apiserver sends when a watch's resourceVersion has been compacted
// away: the reflector on it must relist, from the server. Lists and watches
// pass through unchanged otherwise, and a wrapped ListerWatcher that cannot
// stream (IsWatchListSemanticsUnSupported) is not one this type serves: it
// streams whenever the wrapped one does.
type Expiring struct {
	inner cache.ListerWatcherWithContext

	mu      sync.Mutex
	watches map[*expiringWatch]struct{}
	// requests since the last Expire: lists and watches passed through.
	lists, watchReqs int
}

// RequestsSinceExpire is how many LISTs and WATCHes passed through since
// the last Expire (or since NewExpiring): after an Expire, the relist's.
func (e *Expiring) RequestsSinceExpire() (lists, watches int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lists, e.watchReqs
}

// NewExpiring wraps lw.
func NewExpiring(lw cache.ListerWatcher) *Expiring {
	return &Expiring{inner: cache.ToListerWatcherWithContext(lw), watches: map[*expiringWatch]struct{}{}}
}

// List passes through.
func (e *Expiring) List(opts metav1.ListOptions) (runtime.Object, error) {
	return e.ListWithContext(context.Background(), opts)
}

// ListWithContext passes through.
func (e *Expiring) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	e.mu.Lock()
	e.lists++
	e.mu.Unlock()
	return e.inner.ListWithContext(ctx, opts)
}

// Watch passes through, and the watch ends at the next Expire.
func (e *Expiring) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return e.WatchWithContext(context.Background(), opts)
}

// WatchWithContext passes through, and the watch ends at the next Expire.
func (e *Expiring) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	e.mu.Lock()
	e.watchReqs++
	e.mu.Unlock()
	inner, err := e.inner.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	w := &expiringWatch{inner: inner, out: make(chan watch.Event), expire: make(chan struct{}), stop: make(chan struct{})}
	e.mu.Lock()
	e.watches[w] = struct{}{}
	e.mu.Unlock()
	go func() {
		defer func() {
			e.mu.Lock()
			delete(e.watches, w)
			e.mu.Unlock()
		}()
		w.run()
	}()
	return w, nil
}

// Expire ends every watch open now with a 410 Expired ERROR event.
func (e *Expiring) Expire() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lists, e.watchReqs = 0, 0
	for w := range e.watches {
		w.expireOnce.Do(func() { close(w.expire) })
	}
}

type expiringWatch struct {
	inner      watch.Interface
	out        chan watch.Event
	expire     chan struct{}
	expireOnce sync.Once
	stop       chan struct{}
	stopOnce   sync.Once
}

func (w *expiringWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *expiringWatch) Stop() { w.stopOnce.Do(func() { close(w.stop) }) }

func (w *expiringWatch) run() {
	defer close(w.out)
	defer w.inner.Stop()
	for {
		select {
		case ev, ok := <-w.inner.ResultChan():
			if !ok {
				return
			}
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			case <-w.expire:
				w.sendExpired()
				return
			}
		case <-w.expire:
			w.sendExpired()
			return
		case <-w.stop:
			return
		}
	}
}

func (w *expiringWatch) sendExpired() {
	select {
	case w.out <- watch.Event{Type: watch.Error, Object: &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
		Message: "The resourceVersion for the provided watch is too old.",
	}}:
	case <-w.stop:
	}
}
