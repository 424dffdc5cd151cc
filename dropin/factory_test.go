package dropin_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// counter counts a handler's calls.
type counter struct {
	mu    sync.Mutex
	calls []string
}

func (c *counter) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, s)
}

func (c *counter) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func (c *counter) OnAdd(obj any, _ bool) { c.add("add " + obj.(*corev1.Pod).Name) }
func (c *counter) OnUpdate(_, obj any)   { c.add("update " + obj.(*corev1.Pod).Name) }
func (c *counter) OnDelete(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	c.add("delete " + obj.(*corev1.Pod).Name)
}

func podsClient(c kubernetes.Interface, ns string) dropin.ListWatchClient[*corev1.PodList] {
	return c.CoreV1().Pods(ns)
}

// TestFactoryScopeNarrowsTheWatchAsClientGos: a typed factory made with a
// FactoryScope builds ours through NewInformerFunc in InformerFor, a second
// factory with the same scope builds client-go's; both run against the
// embedded API server over HTTP, through creates, relabels and deletes in
// the scoped namespace and another. With a selector that matches nothing
// ours delivers nothing, as client-go's does; with one that matches, both
// deliver the same calls; and every LIST and WATCH ours sent carried the
// namespace and the selector.
func TestFactoryScopeNarrowsTheWatchAsClientGos(t *testing.T) {
	for _, tc := range []struct {
		selector string
		want     int // calls each handler gets
	}{
		{selector: "app=none", want: 0},
		{selector: "app=web", want: 4}, // add a, add d, update a, delete d
	} {
		t.Run(tc.selector, func(t *testing.T) {
			srv, err := apiserver.Start(apiserver.Options{})
			require.NoError(t, err)
			t.Cleanup(srv.Stop)
			pod := func(ns, name, app string) *corev1.Pod {
				return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": app}}}
			}
			for _, p := range []*corev1.Pod{pod("ns", "a", "web"), pod("ns", "b", "db"), pod("other", "c", "web")} {
				_, err := srv.Create(p)
				require.NoError(t, err)
			}
			client, err := kubernetes.NewForConfig(srv.Config())
			require.NoError(t, err)
			scope := dropin.FactoryScope{Namespace: "ns", TweakListOptions: func(o *metav1.ListOptions) { o.LabelSelector = tc.selector }}

			oursFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, scope.Options()...)
			oursFactory.InformerFor(&corev1.Pod{}, dropin.NewInformerFunc(scope, &corev1.Pod{}, podsClient))
			ours := oursFactory.Core().V1().Pods().Informer()
			_, isOurs := dropin.InformerOf(ours)
			require.True(t, isOurs, "the generated accessor hands out ours")
			theirsFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, scope.Options()...)
			theirs := theirsFactory.Core().V1().Pods().Informer()
			_, isOurs = dropin.InformerOf(theirs)
			require.False(t, isOurs)

			co, ct := &counter{}, &counter{}
			_, err = ours.AddEventHandler(co)
			require.NoError(t, err)
			_, err = theirs.AddEventHandler(ct)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			defer func() { cancel(); oursFactory.Shutdown(); theirsFactory.Shutdown() }()
			oursFactory.Start(ctx.Done())
			theirsFactory.Start(ctx.Done())
			require.True(t, cache.WaitForCacheSync(ctx.Done(), ours.HasSynced, theirs.HasSynced))

			for _, p := range []*corev1.Pod{pod("ns", "d", "web"), pod("other", "e", "web"), pod("ns", "f", "db")} {
				_, err := srv.Create(p)
				require.NoError(t, err)
			}
			for _, name := range []string{"a", "b"} {
				obj, err := srv.Get(apiserver.Pods, "ns", name)
				require.NoError(t, err)
				p := obj.(*corev1.Pod).DeepCopy()
				p.Annotations = map[string]string{"touched": "yes"}
				_, err = srv.Update(p)
				require.NoError(t, err)
			}
			require.NoError(t, srv.Delete(apiserver.Pods, "ns", "d"))
			require.NoError(t, srv.Delete(apiserver.Pods, "other", "c"))
			// The barrier: a bookmark at the server's last resourceVersion
			// reaches both watches whether or not any event did, so once
			// both informers report it they have been sent everything.
			last := srv.ResourceVersion()
			require.Eventually(t, func() bool {
				srv.SendBookmarks()
				return ours.LastSyncResourceVersion() == last && theirs.LastSyncResourceVersion() == last
			}, 30*time.Second, 10*time.Millisecond, "both informers reach the server's resourceVersion")
			require.Eventually(t, func() bool {
				return len(co.got()) >= tc.want && len(ct.got()) >= tc.want
			}, 30*time.Second, 10*time.Millisecond)

			require.Equal(t, ct.got(), co.got(), "the same calls as client-go's informer of the same factory scope")
			require.Len(t, co.got(), tc.want)
			require.ElementsMatch(t, podNames(theirs.GetStore().List()), podNames(ours.GetStore().List()))

			var watches int
			for _, r := range srv.Requests() {
				if r.Resource != "pods" || (r.Verb != "list" && r.Verb != "watch") {
					continue
				}
				require.Equal(t, "ns", r.Namespace, "every request is in the factory's namespace: %+v", r)
				require.Equal(t, tc.selector, r.Query.Get("labelSelector"), "every request carries the factory's tweak: %+v", r)
				if r.Verb == "watch" {
					watches++
				}
			}
			require.NotZero(t, watches)
		})
	}
}

func podNames(objs []any) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.(*corev1.Pod).Name)
	}
	return out
}

// TestInformerOfBehindTheTypedWrapper: client-go 1.37's generated
// accessors wrap the factory's informer in cache.TypedSharedIndexInformer,
// so the documented type assertion fails on what they return; InformerOf
// reaches ours behind it, and what is set through it (a trace filter)
// applies to the informer the factory runs.
func TestInformerOfBehindTheTypedWrapper(t *testing.T) {
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	built := factory.InformerFor(&corev1.Pod{}, dropin.NewInformerFunc(dropin.FactoryScope{}, &corev1.Pod{}, podsClient))
	wrapped := factory.Core().V1().Pods().Informer()
	_, direct := wrapped.(*dropin.Informer)
	require.False(t, direct, "1.37's accessor returns a wrapper, not ours itself")
	inf, ok := dropin.InformerOf(wrapped)
	require.True(t, ok)
	require.Same(t, built.(*dropin.Informer), inf)
	again, ok := dropin.InformerOf(built)
	require.True(t, ok)
	require.Same(t, inf, again)
	require.NoError(t, inf.SetTraceFilter(func(string, any) bool { return false }))

	_, ok = dropin.InformerOf(cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Pod{}, 0, nil))
	require.False(t, ok, "client-go's informer is not ours")
	_, ok = dropin.InformerOf(nil)
	require.False(t, ok)
}
