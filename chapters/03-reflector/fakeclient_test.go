package reflector

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	kcache "k8s.io/client-go/tools/cache"
)

// The fake clientset (k8s.io/client-go/kubernetes/fake), which almost every
// controller's unit tests use, versions its LISTs but not its objects: its
// watch events carry no resourceVersion. These tests run client-go's
// reflector and ours on it, side by side, the way a generated informer
// builds its ListerWatcher.

// fakePodsLW is the pods ListerWatcher of client, built as client-go's
// generated informers build theirs (informers/core/v1/pod.go), wrapped with
// the client's watch-list answer by ours or client-go's
// ToListWatcherWithWatchListSemantics.
func fakePodsLW(client *fake.Clientset) (ours ListerWatcher, theirs kcache.ListerWatcher) {
	list := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
	}
	wtch := func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return client.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, o)
	}
	ours = ToListWatcherWithWatchListSemantics(&ListWatch{ListWithContextFunc: list, WatchFuncWithContext: wtch}, client)
	theirs = kcache.ToListWatcherWithWatchListSemantics(&kcache.ListWatch{ListWithContextFunc: list, WatchFuncWithContext: wtch}, client)
	return ours, theirs
}

// listCount counts the LIST actions a fake clientset has answered.
func listCount(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" {
			n++
		}
	}
	return n
}

// fakeRun is one reflector on its own fake clientset.
type fakeRun struct {
	client *fake.Clientset
	store  *storeLog
	errs   *errorLog // ours only
}

func (f *fakeRun) create(t *testing.T, name string) {
	t.Helper()
	_, err := f.client.CoreV1().Pods("a").Create(context.Background(), pod("a", name), metav1.CreateOptions{})
	require.NoError(t, err)
}

// Six creates, each waited for, then a burst of five creates, an update and
// a delete: client-go's reflector and ours, each on a fake clientset, must
// make the same store calls, with one LIST each and no time passing in the
// bubble (no backoff waited, no relist). Before ours told a test source
// apart, it refused every event (no resourceVersion) and relisted after a
// growing backoff: over a minute of fake time, one LIST per event, and the
// burst folded into relists.
func TestFakeClientsetSameStoreCallsAsClientGoWithoutARelist(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seed := pod("a", "seed")
		ours := &fakeRun{client: fake.NewClientset(seed.DeepCopy()), store: newStoreLog(), errs: &errorLog{}}
		theirs := &fakeRun{client: fake.NewClientset(seed.DeepCopy()), store: newStoreLog()}
		oursLW, _ := fakePodsLW(ours.client)
		_, theirsLW := fakePodsLW(theirs.client)
		oursR := NewReflectorWithOptions(oursLW, &corev1.Pod{}, ours.store, ReflectorOptions{Name: "ours"})
		oursR.SetWatchErrorHandler(ours.errs.handler)
		theirsR := kcache.NewReflectorWithOptions(theirsLW, &corev1.Pod{}, theirs.store, kcache.ReflectorOptions{Name: "theirs"})
		assert.False(t, oursR.UsesWatchList(), "the fake opts out of watch-list, so ours LISTs, as client-go's does")

		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { oursR.RunWithContext(ctx) })
		wg.Go(func() { theirsR.RunWithContext(ctx) })
		synctest.Wait()

		both := []*fakeRun{ours, theirs}
		for i := range 6 {
			name := fmt.Sprint("p", i)
			for _, f := range both {
				f.create(t, name)
			}
			synctest.Wait() // every goroutine blocked: the event was handled, or a timer is pending
			for _, f := range both {
				require.Contains(t, f.store.contents(), "a/"+name+"@", "%s cached create %d without waiting", name, i)
			}
		}
		assert.Zero(t, time.Since(start), "no backoff was waited: the creates were cached at once")

		// The burst, not waited for in between.
		for _, f := range both {
			for i := range 5 {
				f.create(t, fmt.Sprint("b", i))
			}
			p := pod("a", "b0")
			p.Labels = map[string]string{"updated": "true"}
			_, err := f.client.CoreV1().Pods("a").Update(context.Background(), p, metav1.UpdateOptions{})
			require.NoError(t, err)
			require.NoError(t, f.client.CoreV1().Pods("a").Delete(context.Background(), "b1", metav1.DeleteOptions{}))
		}
		synctest.Wait()
		cancel()
		wg.Wait()

		assert.Equal(t, theirs.store.snapshot(), ours.store.snapshot(), "store calls")
		assert.Equal(t, []string{
			"Replace [a/seed@] rv=2",
			"Add a/p0@", "Add a/p1@", "Add a/p2@", "Add a/p3@", "Add a/p4@", "Add a/p5@",
			"Add a/b0@", "Add a/b1@", "Add a/b2@", "Add a/b3@", "Add a/b4@", "Update a/b0@", "Delete a/b1@",
		}, ours.store.snapshot(), "one Replace, then every event as it came")
		assert.Equal(t, 1, listCount(theirs.client), "client-go LISTed once")
		assert.Equal(t, 1, listCount(ours.client), "ours LISTed once: no relist")
		assert.Empty(t, ours.errs.all(), "nothing to report: events without resourceVersion are a fake's normal")
		assert.Equal(t, theirsR.LastSyncResourceVersion(), oursR.LastSyncResourceVersion(),
			"the resourceVersion is taken as it comes, as client-go takes it")
	})
}

// What is refused from an API server is refused from a test source too,
// except the resourceVersion: a nameless object never reaches the store,
// and is reported.
func TestFakeClientsetNamelessObjectIsStillRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		// The fake's create refuses an object without a name, so the
		// nameless one is sent on a watch the test holds, as a server bug
		// would send it.
		w := watch.NewRaceFreeFake()
		client.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
			return true, w, nil
		})
		lw, _ := fakePodsLW(client)
		s, errs := newStoreLog(), &errorLog{}
		r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, ReflectorOptions{})
		r.SetWatchErrorHandler(errs.handler)
		stop := runInBubble(r)
		synctest.Wait()

		w.Add(pod("a", ""))
		w.Add(pod("a", "named"))
		synctest.Wait()
		stop()

		assert.Equal(t, []string{"Replace [] rv=1", "Add a/named@"}, s.snapshot())
		require.Len(t, errs.all(), 1, "%v", errs.all())
		assert.Contains(t, errs.all()[0].Error(), "no metadata.name")
		assert.Equal(t, 1, listCount(client), "a refused nameless event does not need a relist")
	})
}

// The same fake behind a plain ListWatch, without the client's watch-list
// answer, looks like an API server: it versions its LISTs, and nothing says
// it is a test double. Its first event without a resourceVersion is then
// refused and reported, and the reflector relists, as from a broken server
// (TestBadResourceVersionOnAWatchEventIsRefusedAndRelists has a real one).
// A test that builds its ListWatch by hand wraps it with
// ToListWatcherWithWatchListSemantics(lw, client), as the generated
// informers do.
func TestFakeClientsetBehindAPlainListWatchIsRefusedLikeAServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		marked, _ := fakePodsLW(client)
		lw := marked.(*listWatchWithSemantics).ListWatch // the bare ListWatch
		require.False(t, DoesClientNotSupportWatchListSemantics(lw))
		s, errs := newStoreLog(), &errorLog{}
		r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, ReflectorOptions{UseWatchList: listFirst})
		r.SetWatchErrorHandler(errs.handler)
		stop := runInBubble(r)
		synctest.Wait()

		_, err := client.CoreV1().Pods("a").Create(context.Background(), pod("a", "p0"), metav1.CreateOptions{})
		require.NoError(t, err)
		synctest.Wait()
		require.NotEmpty(t, errs.all())
		msg := errs.all()[0].Error()
		assert.Contains(t, msg, "refused a watch ADDED event for a/p0")
		assert.Contains(t, msg, `metadata.resourceVersion ""`)
		assert.NotContains(t, s.snapshot(), "Add a/p0@", "the event was refused, not applied")

		time.Sleep(time.Minute) // past the backoff: the relist brings p0
		synctest.Wait()
		stop()
		assert.GreaterOrEqual(t, listCount(client), 2, "the refused stream was followed by a relist")
		assert.Contains(t, s.contents(), "a/p0@", "the relist brought the object")
	})
}

// A hand-made test double that says so (IsWatchListSemanticsUnSupported)
// and answers its LIST with no list resourceVersion, as a unit test's
// ListWatch often does: the items are stored and the empty RV recorded, as
// client-go records it, with no report and no relist. From a server the
// same LIST is reported and relisted
// (TestListWithABadResourceVersionIsNotRecordedAndRelists).
func TestATestDoublesEmptyListResourceVersionIsTakenAsItComes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lists atomic.Int32
		lw := ToListWatcherWithWatchListSemantics(&ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				lists.Add(1)
				return &corev1.PodList{Items: []corev1.Pod{*pod("a", "p0")}}, nil
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
		}, notStreamingClient{unsupported: true})
		s, errs := newStoreLog(), &errorLog{}
		r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, ReflectorOptions{})
		r.SetWatchErrorHandler(errs.handler)
		stop := runInBubble(r)
		synctest.Wait()
		time.Sleep(time.Minute) // a relist, if any, would come within the backoff
		synctest.Wait()
		stop()

		assert.Equal(t, []string{"Replace [a/p0@] rv="}, s.snapshot())
		assert.Empty(t, errs.all())
		assert.Equal(t, int32(1), lists.Load(), "no relist")
		assert.Empty(t, r.LastSyncResourceVersion())
	})
}
