package reflector

// Parity with client-go: our Reflector and client-go's run side by side
// against one embedded API server, through the same random writes and the
// same faults, each into its own store. After every round both stores must
// hold exactly what the server holds.

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

func TestSameCacheAsClientGoReflectorUnderFaults(t *testing.T) {
	e := newEnv(t)
	client, err := kube.RESTClientFor(e.srv.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)

	ours := store.NewStore(store.MetaNamespaceKeyFunc)
	oursErrs := &errorLog{}
	oursR := newTestReflector(e.lw, ours, oursErrs, ReflectorOptions{})
	run(t, oursR)

	theirs := kcache.NewStore(kcache.MetaNamespaceKeyFunc)
	// The same fast pacing for both, so neither waits out a 30s backoff.
	upstream := kcache.NewReflectorWithOptions(kcache.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything()),
		&corev1.Pod{}, theirs, kcache.ReflectorOptions{Backoff: &wait.Backoff{
			Duration: fastBackoff.Duration, Factor: fastBackoff.Factor, Cap: fastBackoff.Cap, Steps: fastBackoff.Steps}})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); upstream.Run(stop) }()
	t.Cleanup(func() { close(stop); <-done })

	r := rand.New(rand.NewPCG(3, 0))
	live := map[string]*corev1.Pod{}
	for round := range 40 {
		for range 10 {
			name := fmt.Sprintf("p%d", r.IntN(15))
			switch p, exists := live[name]; {
			case !exists:
				obj, err := e.srv.Create(pod("a", name))
				require.NoError(t, err)
				live[name] = obj.(*corev1.Pod)
			case r.IntN(2) == 0:
				p = p.DeepCopy()
				p.Labels = map[string]string{"round": fmt.Sprint(round)}
				obj, err := e.srv.Update(p)
				require.NoError(t, err)
				live[name] = obj.(*corev1.Pod)
			default:
				require.NoError(t, e.srv.Delete(apiserver.Pods, "a", name))
				delete(live, name)
			}
		}
		switch r.IntN(5) {
		case 0:
			e.srv.CloseWatches()
		case 1:
			// Compact past every watcher's RV: both must relist, and the
			// relist must turn the deletes they missed into removals.
			_, _ = e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: fmt.Sprint("c", round)}})
			e.srv.Compact()
			e.srv.CloseWatches()
		case 2:
			e.srv.Inject(apiserver.Fault{Verb: "watch", Status: http.StatusTooManyRequests})
			e.srv.CloseWatches()
		}
		want := make([]string, 0, len(live))
		for _, p := range live {
			want = append(want, "a/"+p.Name+"@"+p.ResourceVersion)
		}
		slices.Sort(want)
		if !testutil.WaitFor(func() bool { return slices.Equal(contents(ours.List()), want) }) {
			reqs := e.requests("list", "watch")
			t.Fatalf("round %d: ours never equalled the server\n ours:   %v\n server: %v\n RV %s, errors %v\n last requests %+v",
				round, contents(ours.List()), want, oursR.LastSyncResourceVersion(), oursErrs.all(), reqs[max(0, len(reqs)-6):])
		}
		testutil.Eventually(t, fmt.Sprintf("round %d: client-go's equals the server", round), func() bool {
			return slices.Equal(contents(theirs.List()), want)
		})
	}
}

func contents(objs []any) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		p := o.(*corev1.Pod)
		out[i] = p.Namespace + "/" + p.Name + "@" + p.ResourceVersion
	}
	slices.Sort(out)
	return out
}
