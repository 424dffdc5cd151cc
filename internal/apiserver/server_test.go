package apiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	kcache "k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
)

func start(t *testing.T, opts apiserver.Options) (*apiserver.Server, *rest.RESTClient) {
	t.Helper()
	s, err := apiserver.Start(opts)
	require.NoError(t, err)
	t.Cleanup(s.Stop)
	c, err := kube.RESTClientFor(s.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)
	return s, c
}

func cm(ns, name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

func listCMs(t *testing.T, c rest.Interface, opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	t.Helper()
	out := &corev1.ConfigMapList{}
	err := c.Get().Resource("configmaps").VersionedParams(&opts, metav1.ParameterCodec).Do(context.Background()).Into(out)
	return out, err
}

func names(l *corev1.ConfigMapList) []string {
	var out []string
	for _, i := range l.Items {
		out = append(out, i.Namespace+"/"+i.Name)
	}
	return out
}

func TestCRUDOverHTTP(t *testing.T) {
	_, c := start(t, apiserver.Options{})
	ctx := context.Background()
	created := &corev1.ConfigMap{}
	require.NoError(t, c.Post().Namespace("a").Resource("configmaps").Body(cm("", "x", nil)).Do(ctx).Into(created))
	assert.Equal(t, "2", created.ResourceVersion, "an empty store is at revision 1, like etcd")
	assert.NotEmpty(t, created.UID)

	err := c.Post().Namespace("a").Resource("configmaps").Body(cm("", "x", nil)).Do(ctx).Error()
	assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)

	stale := created.DeepCopy()
	created.Data = map[string]string{"k": "v"}
	updated := &corev1.ConfigMap{}
	require.NoError(t, c.Put().Namespace("a").Resource("configmaps").Name("x").Body(created).Do(ctx).Into(updated))
	assert.Equal(t, "3", updated.ResourceVersion)
	err = c.Put().Namespace("a").Resource("configmaps").Name("x").Body(stale).Do(ctx).Error()
	assert.True(t, apierrors.IsConflict(err), "an update at an old resourceVersion is a Conflict: %v", err)

	require.NoError(t, c.Delete().Namespace("a").Resource("configmaps").Name("x").Do(ctx).Error())
	err = c.Get().Namespace("a").Resource("configmaps").Name("x").Do(ctx).Error()
	assert.True(t, apierrors.IsNotFound(err))
	err = c.Get().Resource("serviceaccounts").Do(ctx).Error()
	assert.True(t, apierrors.IsNotFound(err))
	assert.Contains(t, err.Error(), "the embedded API server serves pods, configmaps")
}

func TestListPagesAreOneConsistentSnapshot(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	for i := range 5 {
		_, err := s.Create(cm("a", fmt.Sprintf("c%d", i), nil))
		require.NoError(t, err)
	}
	first, err := listCMs(t, c, metav1.ListOptions{Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"a/c0", "a/c1"}, names(first))
	require.NotEmpty(t, first.Continue)
	assert.Equal(t, int64(3), *first.RemainingItemCount)

	// A write between pages is not seen: pages come from one snapshot.
	_, err = s.Create(cm("a", "c9", nil))
	require.NoError(t, err)
	rest1, err := listCMs(t, c, metav1.ListOptions{Limit: 2, Continue: first.Continue})
	require.NoError(t, err)
	rest2, err := listCMs(t, c, metav1.ListOptions{Limit: 2, Continue: rest1.Continue})
	require.NoError(t, err)
	assert.Equal(t, []string{"a/c2", "a/c3", "a/c4"}, append(names(rest1), names(rest2)...))
	assert.Empty(t, rest2.Continue)
	assert.Equal(t, first.ResourceVersion, rest2.ResourceVersion)

	// After compaction the token is too old: 410 Expired.
	again, err := listCMs(t, c, metav1.ListOptions{Limit: 2})
	require.NoError(t, err)
	s.Compact()
	_, err = listCMs(t, c, metav1.ListOptions{Limit: 2, Continue: again.Continue})
	assert.True(t, apierrors.IsResourceExpired(err), "%v", err)
}

// A paginated list's snapshot is dropped once its last page is served, and
// at most apiserver.MaxSnapshots unfinished ones are kept, the oldest
// dropped first: each pins its objects as they were, and a paging client
// relisting 150,000 objects used to leave one behind every time.
func TestFinishedAndAbandonedListsAreForgotten(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	for i := range 5 {
		_, err := s.Create(cm("a", fmt.Sprintf("c%d", i), nil))
		require.NoError(t, err)
	}
	for range 20 {
		l, err := listCMs(t, c, metav1.ListOptions{Limit: 2})
		require.NoError(t, err)
		for l.Continue != "" {
			l, err = listCMs(t, c, metav1.ListOptions{Limit: 2, Continue: l.Continue})
			require.NoError(t, err)
		}
	}
	assert.Equal(t, 0, s.SnapshotCount(), "snapshots of lists paged to the end")

	var tokens []string
	for range apiserver.MaxSnapshots + 3 {
		l, err := listCMs(t, c, metav1.ListOptions{Limit: 2})
		require.NoError(t, err)
		tokens = append(tokens, l.Continue)
	}
	assert.Equal(t, apiserver.MaxSnapshots, s.SnapshotCount(), "snapshots of abandoned lists")
	_, err := listCMs(t, c, metav1.ListOptions{Limit: 2, Continue: tokens[0]})
	assert.True(t, apierrors.IsResourceExpired(err), "the oldest abandoned list's token: %v", err)
	l, err := listCMs(t, c, metav1.ListOptions{Limit: 2, Continue: tokens[len(tokens)-1]})
	require.NoError(t, err, "the newest abandoned list goes on")
	assert.Equal(t, []string{"a/c2", "a/c3"}, names(l))
}

func TestListResourceVersionRulesAndSelectors(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	_, _ = s.Create(cm("a", "web", map[string]string{"app": "web"}))
	_, _ = s.Create(cm("b", "db", map[string]string{"app": "db"}))

	_, err := listCMs(t, c, metav1.ListOptions{ResourceVersion: "99"})
	assert.True(t, apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge), "%v", err)

	l, err := listCMs(t, c, metav1.ListOptions{LabelSelector: "app=web"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a/web"}, names(l))
	l, err = listCMs(t, c, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.namespace", "b").String()})
	require.NoError(t, err)
	assert.Equal(t, []string{"b/db"}, names(l))
	_, err = listCMs(t, c, metav1.ListOptions{FieldSelector: "spec.nodeName=x"})
	assert.True(t, apierrors.IsBadRequest(err))
	assert.Contains(t, err.Error(), "field label not supported: spec.nodeName")
}

func watchCMs(t *testing.T, c rest.Interface, opts metav1.ListOptions) watch.Interface {
	t.Helper()
	opts.Watch = true
	w, err := c.Get().Resource("configmaps").VersionedParams(&opts, metav1.ParameterCodec).Watch(context.Background())
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	return w
}

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "watch closed")
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

func describe(ev watch.Event) string {
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		return string(ev.Type) + " " + ev.Object.(*metav1.Status).Message
	}
	return fmt.Sprintf("%s %s@%s", ev.Type, m.GetName(), m.GetResourceVersion())
}

func TestWatchReplaysFromResourceVersionAndExpiresAfterCompaction(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	a, _ := s.Create(cm("a", "a", nil))
	_, _ = s.Create(cm("a", "b", nil))
	require.NoError(t, s.Delete(apiserver.ConfigMaps, "a", "a"))

	w := watchCMs(t, c, metav1.ListOptions{ResourceVersion: a.(*corev1.ConfigMap).ResourceVersion})
	assert.Equal(t, "ADDED b@3", describe(next(t, w)))
	assert.Equal(t, "DELETED a@4", describe(next(t, w)))

	s.Compact()
	w2 := watchCMs(t, c, metav1.ListOptions{ResourceVersion: "1"})
	ev := next(t, w2)
	require.Equal(t, watch.Error, ev.Type)
	assert.True(t, apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)))
	assert.Contains(t, describe(ev), "too old resource version: 1 (5)")

	// From the newest resourceVersion nothing was lost: accepted, as
	// kube-apiserver accepts a watch from etcd's compaction revision.
	w3 := watchCMs(t, c, metav1.ListOptions{ResourceVersion: "4"})
	_, _ = s.Create(cm("a", "c", nil))
	assert.Equal(t, "ADDED c@5", describe(next(t, w3)))
}

// An injected ERROR event's Status without a kind reaches an HTTP client
// as a Status it can decode, as kube-apiserver sends one: before, the
// client saw a stream it could not decode.
func TestInjectedErrorStatusIsSentAsKubeAPIServerSendsIt(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	a, _ := s.Create(cm("a", "a", nil))
	w := watchCMs(t, c, metav1.ListOptions{ResourceVersion: a.(*corev1.ConfigMap).ResourceVersion})
	require.Eventually(t, func() bool { return s.WatchCount() == 1 }, 10*time.Second, time.Millisecond)
	bare := &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "injected"}
	s.InjectWatchEvent(apiserver.ConfigMaps, watch.Error, bare)
	ev := next(t, w)
	require.Equal(t, watch.Error, ev.Type, "%s", describe(ev))
	assert.True(t, apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)), "%#v", ev.Object)
	assert.Empty(t, bare.Kind, "the caller's object is left as it was")
}

func TestWatchFromZeroSendsSyntheticAddsThenLiveEvents(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	_, _ = s.Create(cm("a", "z", nil))
	_, _ = s.Create(cm("a", "y", nil))
	w := watchCMs(t, c, metav1.ListOptions{ResourceVersion: "0"})
	// Key order, not RV order.
	assert.Equal(t, "ADDED y@3", describe(next(t, w)))
	assert.Equal(t, "ADDED z@2", describe(next(t, w)))
	_, _ = s.Create(cm("a", "x", nil))
	assert.Equal(t, "ADDED x@4", describe(next(t, w)))
}

func TestWatchSelectorTransitions(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	w := watchCMs(t, c, metav1.ListOptions{ResourceVersion: "0", LabelSelector: "app=web"})
	obj, _ := s.Create(cm("a", "x", map[string]string{"app": "db"}))
	x := obj.(*corev1.ConfigMap)
	x.Labels["app"] = "web"
	obj, _ = s.Update(x)
	assert.Equal(t, "ADDED x@3", describe(next(t, w)), "starting to match is an ADDED")
	x = obj.(*corev1.ConfigMap)
	x.Labels["app"] = "db"
	_, _ = s.Update(x)
	assert.Equal(t, "DELETED x@4", describe(next(t, w)), "ceasing to match is a DELETED")
}

func TestWatchBookmarksInitialEventsAndTimeout(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	_, _ = s.Create(cm("a", "x", nil))
	w := watchCMs(t, c, metav1.ListOptions{SendInitialEvents: new(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	assert.Equal(t, "ADDED x@2", describe(next(t, w)))
	ev := next(t, w)
	require.Equal(t, watch.Bookmark, ev.Type)
	m, _ := meta.Accessor(ev.Object)
	assert.Equal(t, "true", m.GetAnnotations()[metav1.InitialEventsAnnotationKey])

	s.SendBookmarks()
	assert.Equal(t, "BOOKMARK @2", describe(next(t, w)))

	short := watchCMs(t, c, metav1.ListOptions{ResourceVersion: "2", TimeoutSeconds: new(int64(1))})
	select {
	case _, ok := <-short.ResultChan():
		assert.False(t, ok, "timeoutSeconds ends the watch with no event")
	case <-time.After(10 * time.Second):
		t.Fatal("watch with timeoutSeconds=1 still open after 10s")
	}
}

func TestFaults(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	s.Inject(apiserver.Fault{Verb: "list", Status: http.StatusTooManyRequests})
	_, err := listCMs(t, c, metav1.ListOptions{})
	assert.True(t, apierrors.IsTooManyRequests(err), "%v", err)
	_, err = listCMs(t, c, metav1.ListOptions{})
	assert.NoError(t, err, "a fault with Count 1 fails one request")

	s.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusForbidden})
	opts := metav1.ListOptions{Watch: true}
	_, err = c.Get().Resource("configmaps").VersionedParams(&opts, metav1.ParameterCodec).Watch(context.Background())
	assert.True(t, apierrors.IsForbidden(err), "%v", err)

	reqs := s.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []int{429, 0, 403}, []int{reqs[0].Fault, reqs[1].Fault, reqs[2].Fault})
	assert.Equal(t, "watch", reqs[2].Verb)

	s.Stop()
	_, err = listCMs(t, c, metav1.ListOptions{})
	assert.True(t, utilnet.IsConnectionRefused(err), "a stopped server refuses connections: %v", err)
	require.NoError(t, s.Restart())
	_, err = listCMs(t, c, metav1.ListOptions{})
	assert.NoError(t, err)
}

// TestClientGoReflectorSyncsAgainstTheServer is the protocol check: client-go's
// own Reflector, over HTTP, must list, watch and follow changes, and recover
// from a dropped watch and from compaction.
func TestClientGoReflectorSyncsAgainstTheServer(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	store, ctx := runClientGoReflector(t, s, c)

	converged := func(want ...string) {
		t.Helper()
		require.NoError(t, wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
			return assert.ObjectsAreEqual(want, sortedKeys(store)), nil
		}), "store has %v, want %v", sortedKeys(store), want)
	}
	converged("a/c0", "a/c1", "a/c2")
	require.NoError(t, s.Delete(apiserver.ConfigMaps, "a", "c0"))
	converged("a/c1", "a/c2")
	s.CloseWatches()
	_, _ = s.Create(cm("a", "c3", nil))
	converged("a/c1", "a/c2", "a/c3")
	s.Compact()
	s.CloseWatches()
	require.NoError(t, s.Delete(apiserver.ConfigMaps, "a", "c1"))
	converged("a/c2", "a/c3")
}

// runClientGoReflector creates the config maps a/c0, a/c1 and a/c2 on s and
// runs client-go's own Reflector of config maps on them, over HTTP through c,
// until the test ends. It returns the reflector's store, and its context
// (cancelled when the test ends) for the test's polls.
func runClientGoReflector(t *testing.T, s *apiserver.Server, c *rest.RESTClient) (kcache.Store, context.Context) {
	t.Helper()
	for i := range 3 {
		_, _ = s.Create(cm("a", fmt.Sprintf("c%d", i), nil))
	}
	store := kcache.NewStore(kcache.MetaNamespaceKeyFunc)
	lw := kcache.NewListWatchFromClient(c, "configmaps", metav1.NamespaceAll, fields.Everything())
	r := kcache.NewReflector(lw, &corev1.ConfigMap{}, store, 0)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go r.RunWithContext(ctx)
	return store, ctx
}

func sortedKeys(s kcache.Store) []string {
	k := s.ListKeys()
	slices.Sort(k)
	return k
}

func TestStallNextHoldsARequestUntilReleased(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	release := s.StallNext("list")
	done := make(chan error, 1)
	go func() { _, err := listCMs(t, c, metav1.ListOptions{}); done <- err }()
	require.Eventually(t, func() bool { return len(s.Requests()) == 1 }, 10*time.Second, time.Millisecond)
	select {
	case <-done:
		t.Fatal("a stalled request answered before release")
	default:
	}
	release()
	require.NoError(t, <-done)
}

// One fault with Count > 1 is hit by concurrent requests. Under -race this
// fails if admit reads the shared fault after releasing the server's lock
// (a data race); without -race it still checks that exactly Count
// requests fail, each with the injected status.
func TestConcurrentRequestsShareOneFaultWithoutARace(t *testing.T) {
	s, _ := start(t, apiserver.Options{})
	const faulted, workers, perWorker = 40, 8, 10
	s.Inject(apiserver.Fault{Verb: "list", Status: http.StatusInternalServerError, Count: faulted})
	errs := make(chan error, workers*perWorker)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range perWorker {
				_, err := s.List(context.Background(), apiserver.Pods, "", metav1.ListOptions{})
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			require.True(t, apierrors.IsInternalError(err), "%v", err)
			failed++
		}
	}
	assert.Equal(t, faulted, failed, "exactly Count requests take the fault")
}

func TestInProcessFaceRefusesWhileStoppedAndClearFaultsEndsEveryFault(t *testing.T) {
	s, _ := start(t, apiserver.Options{})
	ctx := context.Background()
	s.Stop()
	_, err := s.List(ctx, apiserver.Pods, "", metav1.ListOptions{})
	assert.True(t, utilnet.IsConnectionRefused(err), "in-process LIST while stopped: %v", err)
	_, err = s.Watch(ctx, apiserver.Pods, "", metav1.ListOptions{})
	assert.True(t, utilnet.IsConnectionRefused(err), "in-process WATCH while stopped: %v", err)
	require.NoError(t, s.Restart())
	_, err = s.List(ctx, apiserver.Pods, "", metav1.ListOptions{})
	require.NoError(t, err)

	s.Inject(apiserver.Fault{Verb: "list", Status: http.StatusInternalServerError, Count: 100})
	s.StallNext("watch")
	held := make(chan error, 1)
	go func() {
		w, err := s.Watch(ctx, apiserver.Pods, "", metav1.ListOptions{})
		if err == nil {
			w.Stop()
		}
		held <- err
	}()
	require.Eventually(t, func() bool { return len(s.Requests()) == 2 }, 10*time.Second, time.Millisecond, "watch held")
	s.ClearFaults()
	require.NoError(t, <-held, "the held request is released")
	_, err = s.List(ctx, apiserver.Pods, "", metav1.ListOptions{})
	require.NoError(t, err, "the remaining injected faults are gone")
}

// watchListOpts are the options client-go v0.37.2's reflector opens its
// first WATCH with (reflector.go, watchList).
func watchListOpts() metav1.ListOptions {
	return metav1.ListOptions{Watch: true, SendInitialEvents: new(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
}

func openWatch(c rest.Interface, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.Get().Resource("configmaps").VersionedParams(&opts, metav1.ParameterCodec).Watch(context.Background())
}

// The answer of a kube-apiserver whose WatchList feature gate is off, to the
// word: k8s.io/apiserver's list handler validates the options with
// apimachinery's ValidateListOptions(opts, false) and answers with
// NewInvalid for ListOptions.meta.k8s.io.
const watchListOffMessage = `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled`

func requireWatchListRefused(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err, "a watch-list must be refused while watch-list is off")
	var se *apierrors.StatusError
	require.ErrorAs(t, err, &se)
	st := se.ErrStatus
	assert.Equal(t, int32(http.StatusUnprocessableEntity), st.Code)
	assert.Equal(t, metav1.StatusReasonInvalid, st.Reason)
	assert.Equal(t, watchListOffMessage, st.Message)
	require.NotNil(t, st.Details)
	assert.Equal(t, "meta.k8s.io", st.Details.Group)
	assert.Equal(t, "ListOptions", st.Details.Kind)
	assert.Equal(t, []metav1.StatusCause{{
		Type:    metav1.CauseType(field.ErrorTypeForbidden),
		Message: "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
		Field:   "sendInitialEvents",
	}}, st.Details.Causes)
}

func TestWatchListStreamsByDefault(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	_, _ = s.Create(cm("a", "x", nil))
	assert.True(t, s.WatchListEnabled(), "the zero Options stream, as kube-apiserver does by default")
	w, err := openWatch(c, watchListOpts())
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	assert.Equal(t, "ADDED x@2", describe(next(t, w)))
	ev := next(t, w)
	require.Equal(t, watch.Bookmark, ev.Type)
	m, _ := meta.Accessor(ev.Object)
	assert.Equal(t, "true", m.GetAnnotations()[metav1.InitialEventsAnnotationKey])

	reqs := s.Requests()
	require.Len(t, reqs, 1)
	assert.True(t, reqs[0].IsWatchList(), "%+v", reqs[0])
	assert.Zero(t, reqs[0].Refused)
	assert.Equal(t, "", reqs[0].ResourceVersion)
	assert.Equal(t, metav1.ResourceVersionMatchNotOlderThan, reqs[0].ResourceVersionMatch)
	assert.True(t, reqs[0].AllowWatchBookmarks)
}

func TestWatchListOffRefusesTheStreamAsKubeAPIServerDoes(t *testing.T) {
	s, c := start(t, apiserver.Options{DisableWatchList: true})
	_, _ = s.Create(cm("a", "x", nil))
	assert.False(t, s.WatchListEnabled())

	_, err := openWatch(c, watchListOpts())
	requireWatchListRefused(t, err)
	// What the refusal leaves possible: the LIST a client falls back to, and
	// a plain WATCH from its resourceVersion.
	l, err := listCMs(t, c, metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	require.NoError(t, err)
	assert.Equal(t, []string{"a/x"}, names(l))
	w, err := openWatch(c, metav1.ListOptions{ResourceVersion: l.ResourceVersion, AllowWatchBookmarks: true})
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	_, _ = s.Create(cm("a", "y", nil))
	assert.Equal(t, "ADDED y@3", describe(next(t, w)))

	reqs := s.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "watch", reqs[0].Verb)
	assert.True(t, reqs[0].IsWatchList(), "the log tells the refused stream from a plain watch: %+v", reqs[0])
	assert.Equal(t, http.StatusUnprocessableEntity, reqs[0].Refused)
	assert.Zero(t, reqs[0].Fault, "a refusal is the server's own answer, not an injected fault")
	assert.Equal(t, "list", reqs[1].Verb)
	assert.Zero(t, reqs[1].Refused)
	assert.Equal(t, "watch", reqs[2].Verb)
	assert.False(t, reqs[2].IsWatchList(), "a plain watch: %+v", reqs[2])
	assert.Nil(t, reqs[2].SendInitialEvents)
	assert.Zero(t, reqs[2].Refused)

	// In process, the same answer.
	_, err = s.Watch(context.Background(), apiserver.ConfigMaps, "", watchListOpts())
	requireWatchListRefused(t, err)
}

func TestSetWatchListEnabledSwitchesWhileRunning(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	_, _ = s.Create(cm("a", "x", nil))
	open, err := openWatch(c, watchListOpts())
	require.NoError(t, err)
	t.Cleanup(open.Stop)
	assert.Equal(t, "ADDED x@2", describe(next(t, open)))
	assert.Equal(t, watch.Bookmark, next(t, open).Type)

	s.SetWatchListEnabled(false)
	assert.False(t, s.WatchListEnabled())
	_, err = openWatch(c, watchListOpts())
	requireWatchListRefused(t, err)
	_, _ = s.Create(cm("a", "y", nil))
	assert.Equal(t, "ADDED y@3", describe(next(t, open)), "a stream opened before the switch goes on")

	s.SetWatchListEnabled(true)
	again, err := openWatch(c, watchListOpts())
	require.NoError(t, err)
	t.Cleanup(again.Stop)
	assert.Equal(t, "ADDED x@2", describe(next(t, again)))
	assert.Equal(t, "ADDED y@3", describe(next(t, again)))
	assert.Equal(t, watch.Bookmark, next(t, again).Type)

	var refused []int
	for _, r := range s.Requests() {
		refused = append(refused, r.Refused)
	}
	assert.Equal(t, []int{0, 422, 0}, refused)
}

// The rules kube-apiserver enforces whatever its WatchList gate: they hold
// here with watch-list on.
func TestListOptionsRulesThatHoldWithWatchListOn(t *testing.T) {
	s, c := start(t, apiserver.Options{})
	for _, tc := range []struct {
		name    string
		do      func() error
		message string
	}{{
		"resourceVersionMatch on a plain watch",
		func() error {
			_, err := openWatch(c, metav1.ListOptions{ResourceVersion: "1", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
			return err
		},
		`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`,
	}, {
		"sendInitialEvents without resourceVersionMatch",
		func() error {
			_, err := openWatch(c, metav1.ListOptions{SendInitialEvents: new(true), AllowWatchBookmarks: true})
			return err
		},
		`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`,
	}, {
		"sendInitialEvents on a list",
		func() error {
			_, err := listCMs(t, c, metav1.ListOptions{SendInitialEvents: new(true)})
			return err
		},
		`ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			require.Error(t, err)
			assert.True(t, apierrors.IsInvalid(err), "%v", err)
			assert.Equal(t, tc.message, err.Error())
		})
	}
	for _, r := range s.Requests() {
		assert.Equal(t, http.StatusUnprocessableEntity, r.Refused, "%+v", r)
	}
}

// client-go v0.37.2's own Reflector, with its WatchListClient gate at its
// default (on), over HTTP: it streams when the server can, and falls back to
// LIST on the server's 422 when it cannot, so the switch shows the fallback.
func TestClientGoReflectorStreamsOrFallsBack(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("watchList=%v", on), func(t *testing.T) {
			s, c := start(t, apiserver.Options{DisableWatchList: !on})
			store, ctx := runClientGoReflector(t, s, c)
			require.NoError(t, wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
				return len(store.ListKeys()) == 3, nil
			}), "store has %v", sortedKeys(store))
			require.NoError(t, wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
				return s.WatchCount() == 1, nil
			}), "the reflector's watch is open")

			reqs := s.Requests()
			require.NotEmpty(t, reqs)
			assert.True(t, reqs[0].IsWatchList(), "the first request is the stream: %+v", reqs[0])
			var verbs []string
			for _, r := range reqs {
				v := r.Verb
				if r.Refused != 0 {
					v += fmt.Sprintf(" refused=%d", r.Refused)
				}
				verbs = append(verbs, v)
			}
			if on {
				assert.Equal(t, []string{"watch"}, verbs, "one stream, no LIST")
			} else {
				assert.Equal(t, []string{"watch refused=422", "list", "watch"}, verbs)
				assert.False(t, reqs[2].IsWatchList(), "after the fallback, a plain watch")
			}
		})
	}
}
