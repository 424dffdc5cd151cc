//lint:file-ignore SA1019 core/v1 Endpoints is deprecated, but client-go v0.37.2 still has its informer and lister, which this mirrors

package lister

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

func p(ns, name string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}}
}

func indexerWith(t *testing.T, indexers store.Indexers, objs ...any) store.Indexer {
	t.Helper()
	idx := store.NewIndexer(store.MetaNamespaceKeyFunc, indexers)
	for _, o := range objs {
		require.NoError(t, idx.Add(o))
	}
	return idx
}

var nsIndex = store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc}

func collect(f func(AppendFunc) error) ([]string, error) {
	var out []string
	err := f(func(o any) {
		out = append(out, fmt.Sprint(o.(metav1.Object).GetNamespace(), "/", o.(metav1.Object).GetName()))
	})
	return out, err
}

// A store whose key function accepts anything, so it can hold an object with
// no metadata: the way to see whether a list call reads labels.
func storeWithBareObject(t *testing.T) store.Store {
	t.Helper()
	s := store.NewStore(func(o any) (string, error) { return fmt.Sprintf("%T", o), nil })
	require.NoError(t, s.Add(struct{ N int }{1}))
	return s
}

func TestListAllEverythingDoesNotReadLabels(t *testing.T) {
	s := storeWithBareObject(t)
	n := 0
	require.NoError(t, ListAll(s, labels.Everything(), func(any) { n++ }))
	assert.Equal(t, 1, n, "Everything appends without reading metadata")

	sel, _ := labels.Parse("app=web")
	err := ListAll(s, sel, func(any) { n++ })
	assert.ErrorContains(t, err, "object does not implement the Object interfaces",
		"a real selector has to read labels, and says so when it cannot")
}

func TestListAllMatchesNothingAppendsNone(t *testing.T) {
	s := storeWithBareObject(t)
	called := false
	require.NoError(t, ListAll(s, labels.Nothing(), func(any) { called = true }))
	require.NoError(t, ListAllByNamespace(indexerWith(t, nsIndex, p("a", "x", nil)), "a", labels.Nothing(), func(any) { called = true }))
	assert.False(t, called)
}

func TestListAllSelects(t *testing.T) {
	idx := indexerWith(t, nsIndex, p("a", "web", map[string]string{"app": "web"}), p("a", "db", map[string]string{"app": "db"}), p("b", "web", map[string]string{"app": "web"}))
	sel, _ := labels.Parse("app=web")
	got, err := collect(func(f AppendFunc) error { return ListAll(idx, sel, f) })
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a/web", "b/web"}, got)
}

func TestListAllByNamespace(t *testing.T) {
	objs := []any{p("a", "1", nil), p("a", "2", map[string]string{"app": "web"}), p("b", "3", nil), p("", "cluster", nil)}
	web, _ := labels.Parse("app=web")
	for _, tc := range []struct {
		name     string
		indexers store.Indexers
	}{{"with namespace index", nsIndex}, {"scan fallback without it", store.Indexers{}}} {
		t.Run(tc.name, func(t *testing.T) {
			idx := indexerWith(t, tc.indexers, objs...)
			got, err := collect(func(f AppendFunc) error { return ListAllByNamespace(idx, "a", labels.Everything(), f) })
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{"a/1", "a/2"}, got)

			got, err = collect(func(f AppendFunc) error { return ListAllByNamespace(idx, "a", web, f) })
			require.NoError(t, err)
			assert.Equal(t, []string{"a/2"}, got)

			got, err = collect(func(f AppendFunc) error {
				return ListAllByNamespace(idx, metav1.NamespaceAll, labels.Everything(), f)
			})
			require.NoError(t, err)
			assert.Len(t, got, 4, "NamespaceAll is every namespace, cluster-scoped objects included")
		})
	}
}

func TestGetMissingIsNotFoundForTheResource(t *testing.T) {
	idx := indexerWith(t, nsIndex, p("a", "present", nil))
	_, err := NewPodLister(idx).Pods("a").Get("absent")
	require.True(t, apierrors.IsNotFound(err))
	assert.EqualError(t, err, `pod "absent" not found`)

	_, err = NewReplicaSetLister(indexerWith(t, nsIndex)).ReplicaSets("a").Get("rs")
	assert.EqualError(t, err, `replicaset.apps "rs" not found`)

	_, err = NewGenericLister(idx, corev1.Resource("pods")).ByNamespace("a").Get("absent")
	assert.EqualError(t, err, `pods "absent" not found`)

	got, err := NewPodLister(idx).Pods("a").Get("present")
	require.NoError(t, err)
	assert.Equal(t, "present", got.Name)
}

func TestClusterScopedResourceIndexer(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	idx := indexerWith(t, nsIndex, node)
	nodes := New[*corev1.Node](idx, corev1.Resource("node"))
	got, err := nodes.Get("n1")
	require.NoError(t, err)
	assert.Same(t, node, got, "listers return the cache's own object, not a copy")

	// The generic namespace lister keeps upstream's quirk: with namespace ""
	// it looks up "/n1" and finds nothing.
	_, err = NewGenericLister(idx, corev1.Resource("nodes")).ByNamespace("").Get("n1")
	assert.True(t, apierrors.IsNotFound(err))
	obj, err := NewGenericLister(idx, corev1.Resource("nodes")).Get("n1")
	require.NoError(t, err)
	assert.Same(t, node, obj)
}

func TestTypedListers(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "cfg"}}
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "svc"}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web"}}

	gotCM, err := NewConfigMapLister(indexerWith(t, nsIndex, cm)).ConfigMaps("a").Get("cfg")
	require.NoError(t, err)
	assert.Same(t, cm, gotCM)
	gotEP, err := NewEndpointsLister(indexerWith(t, nsIndex, ep)).Endpoints("a").List(labels.Everything())
	require.NoError(t, err)
	assert.Equal(t, []*corev1.Endpoints{ep}, gotEP)
	gotDep, err := NewDeploymentLister(indexerWith(t, nsIndex, dep)).List(labels.Everything())
	require.NoError(t, err)
	assert.Equal(t, []*appsv1.Deployment{dep}, gotDep)
}

func TestGetPodReplicaSets(t *testing.T) {
	rs := func(ns, name string, sel *metav1.LabelSelector) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.ReplicaSetSpec{Selector: sel}}
	}
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	l := NewReplicaSetLister(indexerWith(t, nsIndex,
		rs("a", "owner", web),
		rs("b", "other-namespace", web),
		rs("a", "empty-selector", &metav1.LabelSelector{}),
		rs("a", "nil-selector", nil),
	))

	got, err := l.GetPodReplicaSets(p("a", "web-1", map[string]string{"app": "web"}))
	require.NoError(t, err)
	require.Len(t, got, 1, "empty and nil selectors match nothing; other namespaces do not count")
	assert.Equal(t, "owner", got[0].Name)

	_, err = l.GetPodReplicaSets(p("a", "bare", nil))
	assert.EqualError(t, err, "no ReplicaSets found for pod bare because it has no labels")
	_, err = l.GetPodReplicaSets(p("a", "db-1", map[string]string{"app": "db"}))
	assert.EqualError(t, err, "could not find ReplicaSet for pod db-1 in namespace a with labels: map[app:db]")
}
