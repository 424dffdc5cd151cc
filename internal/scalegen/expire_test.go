package scalegen

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Events pass through an Expiring watch until Expire, which ends it with a
// 410 Expired and stops the wrapped watch; a watch opened afterwards is not
// affected.
func TestExpiringEndsOpenWatchesWith410(t *testing.T) {
	var fakes []*watch.FakeWatcher
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return &corev1.PodList{}, nil },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			fakes = append(fakes, watch.NewFakeWithChanSize(1, false))
			return fakes[len(fakes)-1], nil
		},
	}
	e := NewExpiring(lw)
	w, err := e.Watch(metav1.ListOptions{})
	require.NoError(t, err)
	fakes[0].Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}})
	ev := next(t, w)
	require.Equal(t, watch.Added, ev.Type)

	lists, watches := e.RequestsSinceExpire()
	require.Equal(t, [2]int{0, 1}, [2]int{lists, watches})
	e.Expire()
	ev = next(t, w)
	require.Equal(t, watch.Error, ev.Type)
	require.True(t, apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)), "%v", ev.Object)
	_, open := <-w.ResultChan()
	require.False(t, open)
	require.True(t, fakes[0].IsStopped(), "the wrapped watch is stopped")

	w2, err := e.Watch(metav1.ListOptions{})
	require.NoError(t, err)
	fakes[1].Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b"}})
	require.Equal(t, watch.Added, next(t, w2).Type)
	w2.Stop()
	_, err = e.List(metav1.ListOptions{})
	require.NoError(t, err)
	lists, watches = e.RequestsSinceExpire()
	require.Equal(t, [2]int{1, 1}, [2]int{lists, watches}, "since the Expire")
}
