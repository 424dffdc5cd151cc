package deltafifo

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// calls records what an InformerProcessFunc was told, as "kind key rv".
type calls struct {
	mu  sync.Mutex
	log []string
}

func (c *calls) process(_ context.Context, d Delta, old any, initial bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s string
	switch o := d.Object.(type) {
	case DeletedFinalStateUnknown:
		s = "delete-tombstone " + o.Key
	case *corev1.Pod:
		kind := "update"
		switch {
		case d.Type == Deleted:
			kind = "delete"
		case old == nil:
			kind = "add"
		}
		s = fmt.Sprintf("%s %s/%s@%s", kind, o.Namespace, o.Name, o.ResourceVersion)
		if initial {
			s += " initial"
		}
	}
	c.log = append(c.log, s)
}

func (c *calls) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.log)
}

func startInformer(t *testing.T, srv *apiserver.Server, c *calls, opts ...InformerOption) (Controller, func() []string) {
	t.Helper()
	client, err := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)
	return startInformerOn(t, reflector.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything()), c, opts...)
}

// listOnly is lw with the watch-list opt-out: its reflector LISTs the
// initial state, as client-go's does for a client that cannot stream.
func listOnly(lw *reflector.ListWatch) reflector.ListerWatcher {
	return reflector.ToListWatcherWithWatchListSemantics(lw, cannotStreamClient{})
}

type cannotStreamClient struct{}

func (cannotStreamClient) IsWatchListSemanticsUnSupported() bool { return true }

// startInformerOn is startInformer on a given ListerWatcher.
func startInformerOn(t *testing.T, lw reflector.ListerWatcher, c *calls, opts ...InformerOption) (Controller, func() []string) {
	t.Helper()
	st, ctrl := NewInformer(lw, &corev1.Pod{}, 0, c.process, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ctrl.RunWithContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	keys := func() []string {
		k := st.ListKeys()
		slices.Sort(k)
		return k
	}
	return ctrl, keys
}

func TestInformerOverTheEmbeddedServer(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	a, _ := srv.Create(mk("a", ""))
	_, _ = srv.Create(mk("b", ""))

	c := &calls{}
	ctrl, keys := startInformer(t, srv, c)
	testutil.Eventually(t, "synced", ctrl.HasSynced)
	assert.Equal(t, []string{"add ns/a@2 initial", "add ns/b@3 initial"}, c.snapshot())
	assert.Equal(t, "3", ctrl.LastSyncResourceVersion())

	pa := a.(*corev1.Pod).DeepCopy()
	pa.Labels = map[string]string{"v": "2"}
	_, _ = srv.Update(pa)
	_ = srv.Delete(apiserver.Pods, "ns", "b")
	testutil.Eventually(t, "watched", func() bool { return len(c.snapshot()) == 4 })
	assert.Equal(t, []string{"update ns/a@4", "delete ns/b@5"}, c.snapshot()[2:])
	assert.Equal(t, []string{"ns/a"}, keys(), "the store holds what the handler was told")

	// A delete the watch never delivers: drop the watch, delete, compact past
	// it. The relist no longer has a, so the queue makes a tombstone.
	srv.Stop()
	_ = srv.Delete(apiserver.Pods, "ns", "a")
	_, _ = srv.Create(mk("c", ""))
	srv.Compact()
	require.NoError(t, srv.Restart())
	testutil.Eventually(t, "relisted", func() bool { return len(c.snapshot()) >= 6 })
	assert.ElementsMatch(t, []string{"delete-tombstone ns/a", "add ns/c@7"}, c.snapshot()[4:])
	assert.Equal(t, []string{"ns/c"}, keys())
}
