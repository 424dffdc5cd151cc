package reflector

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// blankFirstRV forwards w's events, giving the first pod a copy with an
// empty resourceVersion: a stream whose first object is malformed.
type blankFirstRV struct {
	w    watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func blankFirst(w watch.Interface) watch.Interface {
	b := &blankFirstRV{w: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(b.out)
		defer w.Stop()
		done := false
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if p, isPod := ev.Object.(*corev1.Pod); isPod && !done {
					p = p.DeepCopy()
					p.ResourceVersion = ""
					ev.Object, done = p, true
				}
				select {
				case b.out <- ev:
				case <-b.stop:
					return
				}
			case <-b.stop:
				return
			}
		}
	}()
	return b
}

func (b *blankFirstRV) ResultChan() <-chan watch.Event { return b.out }
func (b *blankFirstRV) Stop()                          { b.once.Do(func() { close(b.stop) }) }

// An empty resourceVersion on the stream, before its bookmark, makes ours
// drop the stream and fall back to a LIST in the same cycle (a
// watchlist.fallback event says why); client-go v0.37.2's takes the object
// into its temporary store and syncs from the stream with no LIST. This is
// the difference docs/03-reflector.md lists.
func TestBadResourceVersionOnTheStreamFallsBackToAList(t *testing.T) {
	requireGateDefault(t)
	e := newEnv(t)
	e.createPods("a", 2)
	corrupting := func(log *watchRequestLog) *ListWatch {
		first := true
		var mu sync.Mutex
		return logged(e.lw, log, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := e.lw.WatchWithContext(ctx, o)
			mu.Lock()
			defer mu.Unlock()
			if err == nil && streaming(o) && first {
				first = false
				return blankFirst(w), nil
			}
			return w, err
		})
	}

	log := &watchRequestLog{}
	rec := tracetest.NewSpanRecorder()
	s, errs := newRecordingStore(), &errorLog{}
	r := newTestReflector(corrupting(log), s, errs, ReflectorOptions{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	run(t, r)
	testutil.Eventually(t, "synced and watching", func() bool { return len(s.keys()) == 2 && len(log.all()) == 3 })
	reqs := log.all()
	assert.Equal(t, "WATCH rv= sendInitialEvents rvm=NotOlderThan", reqs[0])
	assert.Equal(t, "LIST rv=0", reqs[1], "the stream could no longer be trusted: a LIST in the same cycle")
	assert.NotContains(t, reqs[2], "sendInitialEvents", "then a plain WATCH from the LIST's RV")
	assert.Equal(t, []string{"Replace"}, s.callsSnapshot(), "the stream's half state never reached the store")
	require.Len(t, errs.all(), 1, "%v", errs.all())
	assert.Contains(t, errs.all()[0].Error(), "metadata.resourceVersion")
	fallbacks := 0
	for _, sp := range rec.Started() {
		if sp.Name() == tracing.SpanListAndWatchCycle {
			for _, ev := range sp.Events() {
				if ev.Name == tracing.EventWatchListFallback {
					fallbacks++
				}
			}
		}
	}
	assert.Equal(t, 1, fallbacks, "the cycle span says why it fell back")

	// client-go's reflector on the same stream: no LIST, and the object
	// with the empty resourceVersion is stored as it came.
	theirLog := &watchRequestLog{}
	theirs := cache.NewStore(cache.MetaNamespaceKeyFunc)
	cr := cache.NewReflectorWithOptions(corrupting(theirLog), &corev1.Pod{}, theirs, cache.ReflectorOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); cr.RunWithContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testutil.Eventually(t, "client-go synced", func() bool { return len(theirs.ListKeys()) == 2 })
	assert.Equal(t, []string{"WATCH rv= sendInitialEvents rvm=NotOlderThan"}, theirLog.all(), "client-go stays on the stream")
	blank := 0
	for _, o := range theirs.List() {
		if o.(*corev1.Pod).ResourceVersion == "" {
			blank++
		}
	}
	assert.Equal(t, 1, blank, "client-go stored the object with the empty resourceVersion")
}
