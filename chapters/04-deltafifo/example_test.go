package deltafifo_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
)

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// What a consumer sees: changes to one key arrive together, in order; the key
// keeps its place in line; a relist that no longer has an object queues a
// tombstone for it.
func ExampleDeltaFIFO() {
	cache := store.NewStore(deltafifo.DeletionHandlingMetaNamespaceKeyFunc)
	_ = cache.Add(pod("gone", "1")) // the informer's cache knows it from earlier

	q := deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{
		KnownObjects:          cache,
		EmitDeltaTypeReplaced: true,
	})
	_ = q.Add(pod("web", "2"))
	_ = q.Add(pod("db", "3"))
	_ = q.Update(pod("web", "4"))
	_ = q.Replace([]any{pod("web", "5"), pod("db", "6")}, "6") // "gone" was not listed

	for range 3 {
		_, _ = q.Pop(func(obj any, _ bool) error {
			var line []string
			for _, d := range obj.(deltafifo.Deltas) {
				switch o := d.Object.(type) {
				case deltafifo.DeletedFinalStateUnknown:
					line = append(line, fmt.Sprintf("%s %s (tombstone)", d.Type, o.Key))
				case *corev1.Pod:
					line = append(line, fmt.Sprintf("%s %s@%s", d.Type, o.Name, o.ResourceVersion))
				}
			}
			fmt.Println(strings.Join(line, ", "))
			return nil
		})
	}
	// Output:
	// Added web@2, Updated web@4, Replaced web@5
	// Added db@3, Replaced db@6
	// Deleted default/gone (tombstone)
}

// describeChange renders one change as the ResourceEventHandler call
// client-go's informer would make for it.
func describeChange(d deltafifo.Delta, old any, initial bool) string {
	name := func(obj any) string {
		if t, ok := obj.(deltafifo.DeletedFinalStateUnknown); ok {
			return "tombstone " + t.Key
		}
		p := obj.(*corev1.Pod)
		return p.Name + "@" + p.ResourceVersion
	}
	switch {
	case d.Type == deltafifo.Deleted:
		return "OnDelete(" + name(d.Object) + ")"
	case old == nil:
		return fmt.Sprintf("OnAdd(%s, initial=%v)", name(d.Object), initial)
	}
	return "OnUpdate(" + name(old) + " -> " + name(d.Object) + ")"
}

// The consumer of an atomic relist: the RealFIFO queues the whole LIST as one
// ReplacedAll entry; the Consumer works out what went away against its cache,
// replaces the cache first, then tells the handler of the deletions, then of
// the listed objects in list order. Every handler call already finds the new
// list in the cache.
func ExampleConsumer() {
	cache := store.NewStore(deltafifo.DeletionHandlingMetaNamespaceKeyFunc)
	_ = cache.Add(pod("kept", "1"))
	_ = cache.Add(pod("gone", "1"))

	consumer := &deltafifo.Consumer{
		Store: cache,
		Handler: func(_ context.Context, d deltafifo.Delta, old any, initial bool) {
			keys := cache.ListKeys()
			slices.Sort(keys)
			fmt.Printf("%-28s cache: %v\n", describeChange(d, old, initial), keys)
		},
	}
	q := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{AtomicEvents: true})
	_ = q.Replace([]any{pod("new", "3"), pod("kept", "2")}, "3")
	_, _ = q.Pop(func(obj any, initial bool) error {
		return consumer.ProcessDeltas(obj.(deltafifo.Deltas), initial)
	})
	// Output:
	// OnDelete(tombstone default/gone) cache: [default/kept default/new]
	// OnAdd(new@3, initial=true)   cache: [default/kept default/new]
	// OnUpdate(kept@1 -> kept@2)   cache: [default/kept default/new]
}

// NewInformer with WithRealFIFO is client-go v0.37.2's informer: a RealFIFO
// with atomic relists, unlocking while processing, bookmarks, and batch pops.
// Here it follows the pods of an in-process API server; the initial list
// arrives as one atomic entry, then each watch event in the server's order.
func ExampleNewInformer_realFIFO() {
	srv, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Stop()
	for _, name := range []string{"a", "b"} {
		if _, err := srv.Create(pod(name, "")); err != nil {
			panic(err)
		}
	}
	client, err := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	if err != nil {
		panic(err)
	}
	lw := reflector.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything())

	var mu sync.Mutex
	var calls []string
	record := func(_ context.Context, d deltafifo.Delta, old any, initial bool) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, describeChange(d, old, initial))
	}
	waitFor := func(n int) {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			got := len(calls)
			mu.Unlock()
			if got >= n {
				return
			}
		}
		panic("the informer did not deliver in time")
	}

	cache, ctrl := deltafifo.NewInformer(lw, &corev1.Pod{}, 0, record, deltafifo.WithRealFIFO())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ctrl.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()

	waitFor(2)
	got, _ := srv.Get(apiserver.Pods, "default", "b")
	b := got.(*corev1.Pod).DeepCopy()
	b.Labels = map[string]string{"v": "2"}
	_, _ = srv.Update(b)
	_ = srv.Delete(apiserver.Pods, "default", "a")
	_, _ = srv.Create(pod("c", ""))
	waitFor(5)

	mu.Lock()
	defer mu.Unlock()
	for _, c := range calls {
		fmt.Println(c)
	}
	fmt.Println("synced:", ctrl.HasSynced(), "cached:", len(cache.ListKeys()))
	// Output:
	// OnAdd(a@2, initial=true)
	// OnAdd(b@3, initial=true)
	// OnUpdate(b@3 -> b@4)
	// OnDelete(a@5)
	// OnAdd(c@6, initial=false)
	// synced: true cached: 2
}
