package apiserver_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	kcache "k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// Both of client-go's forms: its reflector takes the plain one and calls the
// context-taking methods when they are there (chapter 3's harness checks
// the chapter's interfaces the same way).
var (
	_ kcache.ListerWatcher            = (*apiserver.ListerWatcher)(nil)
	_ kcache.ListerWatcherWithContext = (*apiserver.ListerWatcher)(nil)
)

func TestListerWatcherServesItsResourceAndNamespaceInProcess(t *testing.T) {
	s, _ := start(t, apiserver.Options{})
	for _, ns := range []string{"a", "b"} {
		_, err := s.Create(cm(ns, "x", nil))
		require.NoError(t, err)
	}
	_, err := s.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p"}})
	require.NoError(t, err)
	lw := s.ListerWatcher(apiserver.ConfigMaps, "a")
	before := len(s.Requests())

	list, err := lw.List(metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a/x"}, names(list.(*corev1.ConfigMapList)), "a's ConfigMaps only: not b's, not a's Pod")
	list, err = lw.ListWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	rv := list.(*corev1.ConfigMapList).ResourceVersion
	assert.Equal(t, s.ResourceVersion(), rv)

	w, err := lw.Watch(metav1.ListOptions{ResourceVersion: rv})
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	_, err = s.Create(cm("b", "y", nil))
	require.NoError(t, err)
	_, err = s.Create(cm("a", "y", nil))
	require.NoError(t, err)
	ev := next(t, w)
	assert.Equal(t, watch.Added, ev.Type)
	assert.Equal(t, "a/y", ev.Object.(*corev1.ConfigMap).Namespace+"/"+ev.Object.(*corev1.ConfigMap).Name, "b's write is not on a's watch")

	// The server logs these as it logs HTTP requests: faults and the request
	// log work the same in process.
	var verbs []string
	for _, r := range s.Requests()[before:] {
		assert.Equal(t, "configmaps", r.Resource)
		assert.Equal(t, "a", r.Namespace)
		verbs = append(verbs, r.Verb)
	}
	assert.Equal(t, []string{"list", "list", "watch"}, verbs)
}

func TestListerWatcherWatchEndsWithItsContext(t *testing.T) {
	s, _ := start(t, apiserver.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	w, err := s.ListerWatcher(apiserver.ConfigMaps, "").WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: s.ResourceVersion()})
	require.NoError(t, err)
	defer w.Stop()
	cancel()
	for range w.ResultChan() {
	}
	// Reached: the result channel closed when the context ended (without
	// that, a reflector stopping by its context would leak the watch), and
	// the server forgot the watch before closing it.
	assert.Zero(t, s.WatchCount())
}

// The reason the type exists: a reflector on it, in a synctest bubble, waits
// on channels only, so the bubble can tell it is idle (synctest.Wait returns)
// and its fake clock can move.
func TestClientGoReflectorSyncsOnTheListerWatcherInASynctestBubble(t *testing.T) {
	s, _ := start(t, apiserver.Options{})
	_, err := s.Create(cm("a", "x", nil))
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		store := kcache.NewStore(kcache.MetaNamespaceKeyFunc)
		r := kcache.NewReflector(s.ListerWatcher(apiserver.ConfigMaps, metav1.NamespaceAll), &corev1.ConfigMap{}, store, 0)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); r.RunWithContext(ctx) }()
		synctest.Wait()
		assert.Equal(t, []string{"a/x"}, sortedKeys(store))
		_, err := s.Create(cm("b", "y", nil))
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, []string{"a/x", "b/y"}, sortedKeys(store))
		cancel()
		<-done
	})
}
