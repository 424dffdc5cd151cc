package liveview

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
)

// The probe's request log says which request followed which and from
// which resourceVersion, with each one's outcome: a refused request's
// error, a watch ended by a 410 ERROR event; it keeps the last
// RecentRequests only.
func TestReflectorProbeLogsRequestsInOrder(t *testing.T) {
	fw := watch.NewFake()
	watches := 0
	p := NewReflectorProbe(&reflector.ListWatch{
		ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
			if o.ResourceVersion == "bad" {
				return nil, errors.New("refused")
			}
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			watches++
			if watches == 1 {
				return fw, nil
			}
			return watch.NewFake(), nil
		},
	})
	ctx := context.Background()
	_, err := p.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	w, err := p.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "7"})
	require.NoError(t, err)
	go fw.Error(&apierrors.NewResourceExpired("too old").ErrStatus)
	ev := <-w.ResultChan() // relayed once the probe has noted it
	assert.Equal(t, watch.Error, ev.Type)
	w.Stop()
	_, err = p.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "bad"})
	require.Error(t, err)

	st := p.State()
	assert.Equal(t, []ProbedRequest{
		{Verb: "LIST", ResourceVersion: "0"},
		{Verb: "WATCH", ResourceVersion: "7", Outcome: "ERROR Expired"},
		{Verb: "LIST", ResourceVersion: "bad", Outcome: "refused"},
	}, st.Requests)
	st.Requests[0].Verb = "changed"
	assert.Equal(t, "LIST", p.State().Requests[0].Verb, "State returns a copy")

	for i := range RecentRequests {
		_, err := p.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: fmt.Sprint(100 + i)})
		require.NoError(t, err)
	}
	st = p.State()
	require.Len(t, st.Requests, RecentRequests)
	assert.Equal(t, "100", st.Requests[0].ResourceVersion)
	assert.Equal(t, fmt.Sprint(100+RecentRequests-1), st.Requests[RecentRequests-1].ResourceVersion)
}
