package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
)

// The transformer on a streamed initial state: client-go's reflector gives
// the queue's transformer (TransformingStore) to its watch-list temporary
// store, so every object is slimmed as it arrives, before the bookmark,
// and the queue's Replace transforms it once more. Ours must do the same,
// on each kind of queue: the same calls before the bookmark, and the same
// count per object in all.

// transformCounter is a non-idempotent transformer: each call adds one to
// the copy's "transforms" annotation and counts the call per object name.
type transformCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func newTransformCounter() *transformCounter { return &transformCounter{calls: map[string]int{}} }

func (c *transformCounter) transform(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	p = p.DeepCopy()
	n, _ := strconv.Atoi(p.Annotations["transforms"])
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations["transforms"] = strconv.Itoa(n + 1)
	c.mu.Lock()
	c.calls[p.Name]++
	c.mu.Unlock()
	return p, nil
}

func (c *transformCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.calls {
		n += v
	}
	return n
}

func (c *transformCounter) perObject() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls)
}

// streamSource is a watch-list server for one reflector: every WATCH that
// asks for initial events gets w, which the test fills.
type streamSource struct {
	w *watch.FakeWatcher
}

func (s *streamSource) list(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return nil, errors.New("this source only streams")
}

func (s *streamSource) watch(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	if o.SendInitialEvents == nil || !*o.SendInitialEvents {
		return nil, errors.New("this source only streams")
	}
	return s.w, nil
}

func streamedPod(i int) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: fmt.Sprint("p", i), ResourceVersion: strconv.Itoa(10 + i)}}
}

// stream sends n pods as ADDED events, waits until the reflector has taken
// them all, and returns what the counter had by then; then sends the
// initial-events-end bookmark and waits again.
func stream(w *watch.FakeWatcher, n int, c *transformCounter) (beforeBookmark int) {
	for i := range n {
		w.Add(streamedPod(i)) // unbuffered: returns once the reflector took it
	}
	synctest.Wait()
	beforeBookmark = c.total()
	w.Action(watch.Bookmark, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: strconv.Itoa(10 + n),
		Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
	}})
	synctest.Wait()
	return beforeBookmark
}

func TestStreamedListIsTransformedAsItArrivesAsClientGos(t *testing.T) {
	const n = 200
	for _, queue := range []string{"RealFIFO atomic", "RealFIFO", "DeltaFIFO"} {
		t.Run(queue, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ours, theirs := newTransformCounter(), newTransformCounter()
				oursSrc, theirsSrc := &streamSource{w: watch.NewFake()}, &streamSource{w: watch.NewFake()}

				var oursQ reflector.ReflectorStore
				var theirsQ kcache.ReflectorStore
				known, theirsKnown := store.NewStore(store.MetaNamespaceKeyFunc), kcache.NewStore(kcache.MetaNamespaceKeyFunc)
				switch queue {
				case "RealFIFO atomic":
					oursQ = NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, Transformer: ours.transform})
					theirsQ = kcache.NewRealFIFOWithOptions(kcache.RealFIFOOptions{AtomicEvents: true, Transformer: theirs.transform})
				case "RealFIFO":
					oursQ = NewRealFIFOWithOptions(RealFIFOOptions{KnownObjects: known, Transformer: ours.transform})
					theirsQ = kcache.NewRealFIFOWithOptions(kcache.RealFIFOOptions{KnownObjects: theirsKnown, Transformer: theirs.transform})
				case "DeltaFIFO":
					oursQ = NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known, Transformer: ours.transform})
					theirsQ = kcache.NewDeltaFIFOWithOptions(kcache.DeltaFIFOOptions{KnownObjects: theirsKnown, Transformer: theirs.transform})
				}
				_, isTransforming := theirsQ.(kcache.TransformingStore)
				require.True(t, isTransforming, "client-go's %s is a TransformingStore", queue)

				oursR := reflector.NewReflectorWithOptions(&reflector.ListWatch{ListWithContextFunc: oursSrc.list, WatchFuncWithContext: oursSrc.watch},
					&corev1.Pod{}, oursQ, reflector.ReflectorOptions{})
				theirsR := kcache.NewReflectorWithOptions(&kcache.ListWatch{ListWithContextFunc: theirsSrc.list, WatchFuncWithContext: theirsSrc.watch},
					&corev1.Pod{}, theirsQ, kcache.ReflectorOptions{})
				require.True(t, oursR.UsesWatchList(), "ours streams, as client-go's does by default")

				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				wg.Go(func() { oursR.RunWithContext(ctx) })
				wg.Go(func() { theirsR.RunWithContext(ctx) })
				synctest.Wait()

				theirsBefore := stream(theirsSrc.w, n, theirs)
				oursBefore := stream(oursSrc.w, n, ours)
				assert.Equal(t, n, theirsBefore, "client-go transforms each streamed object as it arrives")
				assert.Equal(t, theirsBefore, oursBefore, "transform calls before the bookmark")
				assert.Equal(t, strconv.Itoa(10+n), theirsR.LastSyncResourceVersion(), "client-go synced at the bookmark")
				assert.Equal(t, theirsR.LastSyncResourceVersion(), oursR.LastSyncResourceVersion())
				assert.Equal(t, theirs.perObject(), ours.perObject(), "transform calls per object, first sync included")
				assert.Equal(t, 2, theirs.perObject()["p0"], "client-go transforms a streamed object twice: as it arrives and in Replace")

				// After the bookmark, on the same watch: once per event.
				for _, w := range []*watch.FakeWatcher{theirsSrc.w, oursSrc.w} {
					p := streamedPod(0)
					p.ResourceVersion = strconv.Itoa(11 + n)
					w.Modify(p)
				}
				synctest.Wait()
				assert.Equal(t, 3, theirs.perObject()["p0"], "client-go transforms a watch event once")
				assert.Equal(t, theirs.perObject(), ours.perObject(), "transform calls per object, the watch event included")

				cancel()
				wg.Wait()
			})
		})
	}
}
