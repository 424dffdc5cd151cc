package processor

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// typedLog records a typed handler's calls in a form both libraries'
// DeletedObject give the same way.
type typedLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *typedLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
}

func (l *typedLog) sorted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.calls)
	slices.Sort(out) // tombstones come in map order upstream
	return out
}

func podRV(p *corev1.Pod) string { return p.Namespace + "/" + p.Name + "@" + p.ResourceVersion }

func deleted(key, name, ns string, tomb bool, obj *corev1.Pod) string {
	o := "<nil>"
	if obj != nil {
		o = podRV(obj)
	}
	return fmt.Sprintf("delete key=%s name=%s ns=%s tombstone=%v obj=%s", key, name, ns, tomb, o)
}

// TestTypedInformerMatchesClientGo: the typed wrapper over our informer and
// client-go's over its own get the same typed calls, DeletedObject for a
// watched delete and for a tombstone alike, and answer the typed indexer
// the same.
func TestTypedInformerMatchesClientGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &scriptedAPI{pods: map[string]*corev1.Pod{}}
		for _, n := range []string{"a", "b", "c", "d"} {
			api.create(t, n)
		}
		byLabel := store.TypedIndexers[*corev1.Pod]{"v": func(p *corev1.Pod) ([]string, error) { return []string{p.Labels["v"]}, nil }}
		ours := NewTypedSharedIndexInformer[*corev1.Pod](NewSharedIndexInformer(scriptLW{api}, &corev1.Pod{}, 0, nil))
		theirs := kcache.NewTypedSharedIndexInformer[*corev1.Pod](kcache.NewSharedIndexInformer(scriptLW{api}, &corev1.Pod{}, 0, kcache.Indexers{}))
		var lo, lt typedLog
		_, err := ours.AddTypedEventHandler(TypedResourceEventHandlerFuncs[*corev1.Pod]{
			AddFunc:    func(p *corev1.Pod) { lo.add("add " + podRV(p)) },
			UpdateFunc: func(o, n *corev1.Pod) { lo.add("update " + podRV(o) + "->" + podRV(n)) },
			DeleteFunc: func(d DeletedObject[*corev1.Pod]) {
				lo.add(deleted(d.GetKey(), d.GetName(), d.GetNamespace(), d.FinalStateUnknown != nil, d.OptionalObj))
			},
		})
		require.NoError(t, err)
		_, err = theirs.AddTypedEventHandler(kcache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
			AddFunc:    func(p *corev1.Pod) { lt.add("add " + podRV(p)) },
			UpdateFunc: func(o, n *corev1.Pod) { lt.add("update " + podRV(o) + "->" + podRV(n)) },
			DeleteFunc: func(d kcache.DeletedObject[*corev1.Pod]) {
				lt.add(deleted(d.GetKey(), d.GetName(), d.GetNamespace(), d.FinalStateUnknown != nil, d.OptionalObj))
			},
		})
		require.NoError(t, err)
		_, err = ours.AddTypedEventHandler(TypedResourceEventHandlerFuncs[*corev1.Pod]{}, HandlerOptions{}, HandlerOptions{})
		require.EqualError(t, err, "at most one HandlerOptions may be passed, got 2")
		require.NoError(t, ours.AddTypedIndexers(byLabel))
		require.NoError(t, theirs.AddTypedIndexers(kcache.TypedIndexers[*corev1.Pod]{"v": kcache.TypedIndexFunc[*corev1.Pod](byLabel["v"])}))

		done := make(chan struct{})
		stop := make(chan struct{})
		go func() { defer close(done); ours.Run(stop) }()
		go func() { theirs.Run(stop) }()
		synctest.Wait()

		api.relabel(t, "a", "x")
		api.remove(t, "b")
		api.relist(t, func() {
			api.remove(t, "c")
			api.relabel(t, "d", "x")
		})
		synctest.Wait()
		time.Sleep(time.Minute)
		synctest.Wait()

		require.Equal(t, lt.sorted(), lo.sorted())
		require.True(t, slices.ContainsFunc(lo.sorted(), func(c string) bool {
			return strings.HasPrefix(c, "delete key=ns/c name=c ns=ns tombstone=true obj=ns/c@")
		}), "a tombstone arrives as a DeletedObject with its last state: %v", lo.sorted())

		for _, v := range []string{"x", ""} {
			want, err := theirs.GetTypedIndexer().ByTypedIndex("v", v)
			require.NoError(t, err)
			got, err := ours.GetTypedIndexer().ByTypedIndex("v", v)
			require.NoError(t, err)
			names := func(ps []*corev1.Pod) []string {
				var out []string
				for _, p := range ps {
					out = append(out, podRV(p))
				}
				slices.Sort(out)
				return out
			}
			require.Equal(t, names(want), names(got), "ByTypedIndex v=%s", v)
		}
		close(stop)
		<-done
	})
}

// TestTypedAdaptersDoBetterOnBadInput: where client-go's typed adapters
// panic or call a filter with a nil object, ours return an error or pass
// the delete on.
func TestTypedAdaptersDoBetterOnBadInput(t *testing.T) {
	f := store.TypedIndexerFuncToIndexerFunc(func(p *corev1.Pod) ([]string, error) { return []string{p.Name}, nil })
	_, err := f(&corev1.ConfigMap{})
	require.EqualError(t, err, "typed index function for *v1.Pod was given a *v1.ConfigMap")

	idx := store.NewTypedIndexer[*corev1.Pod](store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{"all": func(any) ([]string, error) { return []string{"all"}, nil }}))
	require.NoError(t, idx.Add(&corev1.ConfigMap{}))
	_, err = idx.ByTypedIndex("all", "all")
	require.ErrorContains(t, err, "typed indexer for *v1.Pod found a *v1.ConfigMap in the cache")

	var got []DeletedObject[*corev1.Pod]
	h := TypedFilteringResourceEventHandler[*corev1.Pod]{
		FilterFunc: func(p *corev1.Pod) bool { return p.Labels["keep"] == "yes" }, // would panic on nil
		Handler:    TypedResourceEventHandlerFuncs[*corev1.Pod]{DeleteFunc: func(d DeletedObject[*corev1.Pod]) { got = append(got, d) }},
	}
	h.OnDelete(DeletedObject[*corev1.Pod]{})
	require.Len(t, got, 1, "a delete of an unknown object is passed on without asking the filter")
}
